package main

// How the turns are written (-layout) and how results are read back:
// one memory file a turn, or one turns.jsonl a session.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// yq quotes a YAML scalar: a JSON string is a YAML double-quoted string.
func yq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// layout is how turns are written (-layout).
var layout = "files"

// write puts every turn of c into the store: as one memory file, or
// appended as one line to its session's turns.jsonl (each append an
// open, a write and a close, as an agent logging a conversation does).
func write(mnt string, c *conv) {
	for _, t := range c.Order {
		dir, name, body := turnFile(c, t)
		dir = filepath.Join(mnt, filepath.FromSlash(dir))
		check(os.MkdirAll(dir, 0o755), "writing")
		if layout == "jsonl" {
			f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			check(err, "writing")
			_, err = f.Write(body)
			check(err, "writing")
			check(f.Close(), "writing")
			continue
		}
		check(os.WriteFile(filepath.Join(dir, name), body, 0o644), "writing")
	}
}

// sessionDir is the directory of a session's turns.
func sessionDir(c *conv, session int) string {
	return fmt.Sprintf("episodic/locomo/%s/session_%d", c.ID, session)
}

// turnFile is the memory file of turn t: its directory (relative to the
// store's root, '/'-separated), name and content; for the jsonl layout,
// its session's log and the line to append.
func turnFile(c *conv, t turn) (dir, name string, body []byte) {
	dir = sessionDir(c, t.Session)
	if layout == "jsonl" {
		text := strings.TrimSpace(t.Text)
		if t.Caption != "" {
			text += "\n[image: " + strings.TrimSpace(t.Caption) + "]"
		}
		line := struct {
			User    string `json:"user"`
			Speaker string `json:"speaker"`
			DiaID   string `json:"dia_id"`
			Created string `json:"created,omitempty"`
			Text    string `json:"text"`
		}{c.ID, t.Speaker, t.DiaID, t.Created, text}
		b, err := json.Marshal(line)
		check(err, "json")
		return dir, "turns.jsonl", append(b, '\n')
	}
	var b strings.Builder
	fmt.Fprintf(&b, "---\nuser: %s\nspeaker: %s\ndia_id: %s\n", yq(c.ID), yq(t.Speaker), yq(t.DiaID))
	if t.Created != "" {
		fmt.Fprintf(&b, "created: %s\n", yq(t.Created))
	}
	b.WriteString("---\n" + strings.TrimSpace(t.Text) + "\n")
	if t.Caption != "" {
		b.WriteString("[image: " + strings.TrimSpace(t.Caption) + "]\n")
	}
	return dir, strings.ReplaceAll(t.DiaID, ":", "_") + ".md", []byte(b.String())
}

// hit is one result: the name of its file (files layout), or the path
// and line of a log's line (jsonl layout).
type hit struct {
	Name string
	Path string
	Line int
}

// query lists a search directory and returns its results in rank order
// and the time taken from opening the directory to the ranked list. In the
// jsonl layout the entries (turns.jsonl#L<n>) do not say which session's
// log they are from, so it also reads .results, which does.
func query(dir string) ([]hit, time.Duration) {
	t0 := time.Now()
	f, err := os.Open(dir)
	check(err, "query")
	ents, err := f.ReadDir(-1)
	f.Close()
	check(err, "query")
	byRank := map[int]string{} // "01-D1_3.md" → 1: "D1_3.md"; .results has no rank
	for _, e := range ents {
		r, name, _ := strings.Cut(e.Name(), "-")
		if n, err := strconv.Atoi(r); err == nil && n > 0 {
			byRank[n] = name
		}
	}
	out := make([]hit, 0, len(byRank))
	for n := 1; len(out) < len(byRank); n++ {
		if name, ok := byRank[n]; ok {
			out = append(out, hit{Name: name})
		}
	}
	if layout == "jsonl" {
		b, err := os.ReadFile(filepath.Join(dir, ".results"))
		check(err, "query")
		for _, l := range strings.Split(string(b), "\n") {
			fs := strings.Split(l, "\t")
			if len(fs) < 3 || strings.HasPrefix(l, "#") {
				continue
			}
			n, err := strconv.Atoi(fs[0])
			if err != nil || n < 1 || n > len(out) {
				continue
			}
			p, line, _ := strings.Cut(fs[2], ":")
			out[n-1].Path = p
			out[n-1].Line, _ = strconv.Atoi(line)
		}
	}
	return out, time.Since(t0)
}

// turnID maps a result back to the dia_id of its turn: from the file name
// (files layout) or from the session and line of the log (jsonl layout;
// line n of a session's log is its n-th turn, as written).
func turnID(c *conv, h hit) string {
	if layout == "jsonl" {
		rest, ok := strings.CutPrefix(h.Path, "/"+strings.TrimSuffix(sessionDir(c, 0), "0"))
		rest, ok2 := strings.CutSuffix(rest, "/turns.jsonl")
		if n, err := strconv.Atoi(rest); ok && ok2 && err == nil && h.Line > 0 && h.Line <= len(c.bySession[n]) {
			return c.bySession[n][h.Line-1]
		}
		return "?" + h.Path + ":" + strconv.Itoa(h.Line)
	}
	id := strings.ReplaceAll(strings.TrimSuffix(h.Name, ".md"), "_", ":") // dia_ids hold no '_'
	if _, ok := c.Turns[id]; !ok {
		id = "?" + h.Name // not a turn of this conversation
	}
	return id
}

// score turns results into dia_ids and computes recall.
func score(c *conv, q qa, ev []string, hits []hit) record {
	r := record{Conv: c.ID, Question: q.Question, Category: q.Category, Evidence: ev}
	want := map[string]bool{}
	for _, id := range ev {
		want[id] = true
		t := c.Turns[id]
		r.EvText = append(r.EvText, id+" "+t.Speaker+": "+t.Text)
	}
	h5, h10 := 0, 0
	for i, h := range hits {
		id := turnID(c, h)
		r.Top = append(r.Top, id)
		r.Hit = append(r.Hit, want[id])
		h5, h10 = h5+b2i(want[id] && i < 5), h10+b2i(want[id] && i < 10)
	}
	if len(r.Top) > 0 {
		r.FirstText = r.Top[0] + " " + c.Turns[r.Top[0]].Speaker + ": " + c.Turns[r.Top[0]].Text
	}
	r.Recall5, r.Recall10 = float64(h5)/float64(len(ev)), float64(h10)/float64(len(ev))
	return r
}
