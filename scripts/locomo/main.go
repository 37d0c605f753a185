// Command locomo measures mnemofs retrieval on LoCoMo conversations
// (protocol in the data set's README): it writes every turn as one memory
// file through a mounted, empty store, then for every question with
// evidence lists by-user/<conv>/search/<question>/ and reports recall@5 and
// recall@10 (share of the evidence turns among the first k results,
// averaged over questions) overall, per category and per conversation, plus
// the query latency p50/p95 (open of the query directory to a ranked list).
//
// Files: MNT/episodic/locomo/<conv>/session_<N>/<dia_id, ':'→'_'>.md with
// front matter user, speaker, dia_id, created (the session's date and time
// as RFC 3339) and the turn text (plus "[image: <blip_caption>]") as body;
// nothing else, since mnemofs indexes the front matter's words too.
// With -layout jsonl: MNT/episodic/locomo/<conv>/session_<N>/turns.jsonl,
// one JSON line a turn (user, speaker, dia_id, created, text with the
// caption), each appended with an open, a write and a close; a result
// (turns.jsonl#L<n>) is mapped back to its dia_id by the session and line
// number that .results gives (layout.go).
// <conv> is the JSON's sample_id if it has one, else the file name without
// .json (26.json → "26"). Evidence is cleaned: "D8:6; D9:17" is split,
// "D:11:26" read as D11:26, ids that are not turns of the conversation are
// dropped. A question word that would parse as a filter (k:5, user:x, …)
// gets a space after its colon; a query name longer than 255 bytes is
// truncated at a word boundary. Both are counted in the report.
//
// Normally run through scripts/bench-locomo.sh, which builds and mounts:
//
//	go run ./scripts/locomo -mnt MNT [-locomo DIR] [-conv 26,30] [-k 10] [-json] [-dump FILE] [-no-write]
//
// With -inproc instead of -mnt there is no mount: the same files go to an
// in-memory store through the store's API and the same queries to the views
// engine, in about two seconds (inproc.go). Its recall is the mount's (same
// engine, same write order); its latency leaves out the kernel round trips.
// Use it to iterate, and report the mount's numbers.
//
//	go run ./scripts/locomo -inproc [-conv 26,30] [-dump FILE] [-layout jsonl]
//
// With -inproc -loo GRID it tunes the ranking's parameters by
// leave-one-conversation-out and prints that table (loo.go).
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

type turn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	Caption string `json:"blip_caption"`
	Session int    `json:"-"` // N of session_N
	Created string `json:"-"` // the session's date as RFC 3339, or ""
}

type qa struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

type conv struct {
	ID    string
	Turns map[string]turn // by dia_id
	Order []turn          // by session, then as in the file
	QA    []qa
	// bySession: each session's dia_ids in order (the lines of its log).
	bySession map[int][]string
}

// record is one line of the -dump file.
type record struct {
	Conv      string   `json:"conv"`
	Index     int      `json:"qa_index"`
	Question  string   `json:"question"`
	Query     string   `json:"query"`
	Category  int      `json:"category"`
	Evidence  []string `json:"evidence"`
	EvText    []string `json:"evidence_text"`
	Top       []string `json:"top"`
	Hit       []bool   `json:"hit"`
	FirstText string   `json:"first_text,omitempty"`
	Recall5   float64  `json:"recall5"`
	Recall10  float64  `json:"recall10"`
	LatencyMS float64  `json:"latency_ms"`
}

type agg struct {
	N        int     `json:"questions"`
	Recall5  float64 `json:"recall5"`
	Recall10 float64 `json:"recall10"`
	lat      []time.Duration
	P50MS    float64 `json:"p50_ms,omitempty"`
	P95MS    float64 `json:"p95_ms,omitempty"`
}

func (a *agg) add(r record, lat time.Duration) {
	a.N, a.Recall5, a.Recall10, a.lat = a.N+1, a.Recall5+r.Recall5, a.Recall10+r.Recall10, append(a.lat, lat)
}

func (a *agg) done() {
	a.Recall5, a.Recall10 = a.Recall5/float64(a.N), a.Recall10/float64(a.N) // N > 0: made by add
	slices.Sort(a.lat)
	pct := func(p int) float64 { return ms(a.lat[max((p*len(a.lat)+99)/100-1, 0)]) } // nearest rank
	a.P50MS, a.P95MS = pct(50), pct(95)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

type report struct {
	Conversations []string        `json:"conversations"`
	Turns         int             `json:"turns"`
	WriteSeconds  float64         `json:"write_seconds,omitempty"`
	EmbedSeconds  float64         `json:"embed_seconds,omitempty"` // waiting for the model after the writes
	K             int             `json:"k"`
	Overall       *agg            `json:"overall"`
	ByCategory    map[string]*agg `json:"by_category"`
	ByConv        map[string]*agg `json:"by_conversation"`
	Skipped       int             `json:"questions_without_evidence"`
	EvFixed       int             `json:"evidence_ids_fixed"`
	EvDropped     int             `json:"evidence_ids_dropped"`
	Truncated     int             `json:"queries_truncated"`
	Escaped       int             `json:"queries_filter_words_escaped"`
}

var catName = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

func main() {
	dir := flag.String("locomo", cmp.Or(os.Getenv("LOCOMO_DIR"), "/work/shared/bench/locomo"), "directory of the LoCoMo JSON files")
	mnt := flag.String("mnt", "", "mounted mnemofs store (empty, unless -no-write)")
	only := flag.String("conv", "", "comma-separated conversations to use (file names without .json, or sample_ids)")
	k := flag.Int("k", 10, "results asked per query (k:N); recall@5 and @10 need k >= 10")
	asJSON := flag.Bool("json", false, "print the report as JSON")
	dump := flag.String("dump", "", "write per-question results as JSONL to this file")
	noWrite := flag.Bool("no-write", false, "do not write the turns (the store already holds them)")
	inProc := flag.Bool("inproc", false, "no mount: an in-memory store and the views engine in this process (for quick iteration)")
	looSpec := flag.String("loo", "", "with -inproc: leave-one-conversation-out tuning over this grid (loo.go), e.g. 'syn=0,0.2;when=0,0.3'")
	set := flag.String("set", "", "with -inproc: ranking parameters for this run, as one -loo setting ('syn=0.3;when=0')")
	flag.StringVar(&layout, "layout", "files", "how the turns are written: files (one memory a turn) or jsonl (one turns.jsonl a session, a line a turn)")
	flag.Parse()
	if layout != "files" && layout != "jsonl" {
		fail("-layout: want files or jsonl, got %q", layout)
	}
	var ip *inproc
	switch {
	case *inProc:
		ip = newInproc()
	case *mnt == "":
		fail("-mnt is required")
	}
	convs := load(*dir, *only)
	rep := &report{K: *k, Overall: &agg{}, ByCategory: map[string]*agg{}, ByConv: map[string]*agg{}}
	for _, c := range convs {
		rep.Conversations = append(rep.Conversations, c.ID)
		rep.Turns += len(c.Order)
	}
	if !*noWrite {
		t0 := time.Now()
		for _, c := range convs {
			if ip != nil {
				ip.write(c)
			} else {
				write(*mnt, c)
			}
		}
		rep.WriteSeconds = time.Since(t0).Seconds()
	}
	if ip == nil {
		t0 := time.Now()
		if waitEmbedded(*mnt) {
			rep.EmbedSeconds = time.Since(t0).Seconds()
		}
	}
	if *set != "" {
		gs := grid(*set)
		if ip == nil || len(gs) != 1 {
			fail("-set needs -inproc and one value a parameter")
		}
		ip.eng.SetTuning(gs[0].t)
	}
	if *looSpec != "" {
		if ip == nil {
			fail("-loo needs -inproc")
		}
		loo(ip, convs, *looSpec, *k)
		return
	}
	var out *json.Encoder
	if *dump != "" {
		f, err := os.Create(*dump)
		check(err, "-dump")
		defer f.Close()
		out = json.NewEncoder(f)
		out.SetEscapeHTML(false)
	}
	ask := func(user, name string) ([]hit, time.Duration) {
		if ip != nil {
			return ip.query(user, name)
		}
		return query(filepath.Join(*mnt, "by-user", user, "search", name))
	}
	ask(convs[0].ID, "warm up") // not counted
	for _, c := range convs {
		for i, q := range c.QA {
			ev := rep.evidence(c, q.Evidence)
			if len(ev) == 0 {
				rep.Skipped++
				continue
			}
			name, trunc, esc := queryName(q.Question, *k)
			rep.Truncated, rep.Escaped = rep.Truncated+b2i(trunc), rep.Escaped+b2i(esc)
			top, lat := ask(c.ID, name)
			r := score(c, q, ev, top)
			r.Index, r.Query, r.LatencyMS = i, name, ms(lat)
			for _, a := range []*agg{rep.Overall, at(rep.ByCategory, strconv.Itoa(q.Category)), at(rep.ByConv, c.ID)} {
				a.add(r, lat)
			}
			if out != nil && out.Encode(r) != nil {
				fail("writing %s failed", *dump)
			}
		}
	}
	if rep.Overall.N == 0 {
		fail("no question with evidence")
	}
	for _, a := range slices.Concat([]*agg{rep.Overall}, slices.Collect(maps.Values(rep.ByCategory)), slices.Collect(maps.Values(rep.ByConv))) {
		a.done()
	}
	if *asJSON {
		e := json.NewEncoder(os.Stdout)
		e.SetIndent("", "  ")
		_ = e.Encode(rep)
		return
	}
	rep.print()
}

// at returns m[k], made if need be.
func at(m map[string]*agg, k string) *agg {
	if m[k] == nil {
		m[k] = &agg{}
	}
	return m[k]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func fail(f string, a ...any) {
	fmt.Fprintf(os.Stderr, "locomo: "+f+"\n", a...)
	os.Exit(1)
}

// check fails with err, if any, after what.
func check(err error, what string) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// load reads the conversations of dir, in file-name order.
func load(dir, only string) []*conv {
	want := strings.FieldsFunc(only, func(r rune) bool { return r == ',' || r == ' ' })
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		fail("no *.json in %s", dir)
	}
	var out []*conv
	for _, fn := range files {
		raw, err := os.ReadFile(fn)
		check(err, "reading")
		var top map[string]json.RawMessage
		check(json.Unmarshal(raw, &top), fn)
		base := strings.TrimSuffix(filepath.Base(fn), ".json")
		c := &conv{ID: base, Turns: map[string]turn{}}
		if s, ok := top["sample_id"]; ok {
			_ = json.Unmarshal(s, &c.ID)
		}
		if len(want) > 0 && !slices.Contains(want, base) && !slices.Contains(want, c.ID) {
			continue
		}
		check(json.Unmarshal(top["qa"], &c.QA), fn+": qa")
		sessions := top // the released files nest the turns under "conversation"; these don't
		if cv, ok := top["conversation"]; ok {
			sessions = nil
			check(json.Unmarshal(cv, &sessions), fn+": conversation")
		}
		for key, v := range sessions {
			sm := sessionKey.FindStringSubmatch(key)
			if sm == nil {
				continue
			}
			var turns []turn
			var date, created string
			check(json.Unmarshal(v, &turns), fn+": "+key)
			_ = json.Unmarshal(sessions[key+"_date_time"], &date)
			if t, err := time.Parse("3:04 pm on 2 January, 2006", strings.TrimSpace(date)); err == nil {
				created = t.Format(time.RFC3339)
			}
			for _, t := range turns {
				t.Session, _ = strconv.Atoi(sm[1])
				t.Created = created
				c.Turns[t.DiaID] = t
				c.Order = append(c.Order, t)
			}
		}
		sort.SliceStable(c.Order, func(i, j int) bool { return c.Order[i].Session < c.Order[j].Session })
		c.bySession = map[int][]string{}
		for _, t := range c.Order {
			c.bySession[t.Session] = append(c.bySession[t.Session], t.DiaID)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		fail("no conversation in %s matches -conv %q", dir, only)
	}
	return out
}

var loose = regexp.MustCompile(`^D:?(\d+):(\d+)$`)

// evidence cleans a question's evidence list (see the top comment).
func (rep *report) evidence(c *conv, raw []string) []string {
	var out []string
	for _, e := range raw {
		ids := strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' })
		if len(ids) > 1 {
			rep.EvFixed++ // "D8:6; D9:17"
		}
		for _, id := range ids {
			if m := loose.FindStringSubmatch(id); m != nil && id != "D"+m[1]+":"+m[2] {
				id = "D" + m[1] + ":" + m[2]
				rep.EvFixed++
			}
			if _, ok := c.Turns[id]; !ok {
				rep.EvDropped++
			} else if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// filterKeys are the words ParseQuery reads as filters when followed by ':'.
var filterKeys = map[string]bool{"user": true, "type": true, "tag": true, "path": true, "after": true,
	"before": true, "k": true, "budget": true, "archived": true}

// queryName makes a search directory name for question q: filter-like words
// escaped, " k:N" appended, percent-encoded, at most 255 bytes.
func queryName(q string, k int) (name string, truncated, escaped bool) {
	words := strings.Fields(q)
	for i, w := range words {
		if key, val, ok := strings.Cut(w, ":"); ok && val != "" && filterKeys[strings.ToLower(key)] {
			words[i] = key + ": " + val
			escaped = true
		}
	}
	suffix := fmt.Sprintf(" k:%d", k)
	for n := len(words); n > 0; n-- {
		name = encode(strings.Join(words[:n], " ")) + suffix
		if len(name) <= 255 {
			return name, n < len(words), escaped
		}
	}
	return encode(q[:min(len(q), 80)]) + suffix, true, escaped // one huge word
}

// encode percent-encodes every byte but letters, digits, space and -_.,'!()&+=@~;
// so names hold no '/', '%', control bytes, shell glob characters or non-ASCII.
func encode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte(" -_.,'!()&+=@~;", ch) >= 0 {
			b.WriteByte(ch)
		} else {
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}
