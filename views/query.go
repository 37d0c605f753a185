package views

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mnemofs/mnemofs/cache"
	"github.com/mnemofs/mnemofs/memory"
	"github.com/mnemofs/mnemofs/search"
	"github.com/mnemofs/mnemofs/store"
)

// DefaultK is how many results a search returns without k:N.
const DefaultK = 10

// MaxK bounds k:N.
const MaxK = 1000

// neighbourWeight is the weight of a memory's nearest neighbours in its
// context window (see search.Options.Neighbours).
const neighbourWeight = 0.5

// Query is a parsed search directory name.
type Query struct {
	Text   string // the words, without filters
	Terms  []string
	Filter Filter
	K      int
	Budget int // context/ token budget
	// Root is put before the store paths the context names (MCP's
	// "/memories", the root its tools take paths under); "" for the
	// mount's tree.
	Root string
}

// ParseQuery reads a query from a directory name: percent-decoded, with
// filters user: type: tag: path: after: before: k: archived: budget:.
func ParseQuery(name string) (Query, error) {
	q := Query{K: DefaultK, Budget: 2000}
	if s, err := url.PathUnescape(name); err == nil {
		name = s
	}
	var words []string
	for _, f := range strings.Fields(name) {
		key, val, ok := strings.Cut(f, ":")
		if ok && val == "" && filterKeys[strings.ToLower(key)] {
			return q, fmt.Errorf("%s: needs a value (%s:VALUE)", key, strings.ToLower(key))
		}
		if !ok || val == "" {
			words = append(words, f)
			continue
		}
		switch strings.ToLower(key) {
		case "user":
			q.Filter.Users = append(q.Filter.Users, val)
		case "type":
			q.Filter.Types = append(q.Filter.Types, val)
		case "tag":
			q.Filter.Tags = append(q.Filter.Tags, val)
		case "path":
			q.Filter.Path = path.Clean("/" + val)
		case "after", "before":
			t, err := memory.ParseTime(val)
			if err != nil {
				return q, fmt.Errorf("%s: %v", key, err)
			}
			if key == "after" {
				q.Filter.After = &t
			} else {
				q.Filter.Before = &t
			}
		case "k", "budget":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return q, fmt.Errorf("%s: want a positive number, got %q", key, val)
			}
			if key == "k" {
				q.K = min(n, MaxK)
			} else {
				q.Budget = min(n, 1<<20)
			}
		case "archived":
			switch strings.ToLower(val) {
			case "true", "yes", "1":
				q.Filter.Archived = true
			case "false", "no", "0":
				q.Filter.Archived = false
			default:
				return q, fmt.Errorf("archived: want true or false, got %q", val)
			}
		default:
			words = append(words, f) // "http://x" or "10:30" are words
		}
	}
	q.Text = strings.Join(words, " ")
	q.Terms = search.Tokens(q.Text)
	return q, nil
}

// filterKeys are the keys ParseQuery reads as filters.
var filterKeys = map[string]bool{"user": true, "type": true, "tag": true, "path": true, "after": true, "before": true,
	"k": true, "budget": true, "archived": true}

// Result is one ranked memory: a file, or one line of a log (Line > 0).
type Result struct {
	Rank  int     `json:"rank"`
	Score float64 `json:"score"`
	Ino   uint64  `json:"-"`
	Path  string  `json:"path"`
	// PathBase64 is Path exactly, for a name that is not UTF-8 (JSON
	// would replace its bytes).
	PathBase64 string `json:"path_base64,omitempty"`
	Name       string `json:"name"`
	Line       uint32 `json:"line,omitempty"`
	Snippet    string `json:"snippet"`
	// With a model loaded: the memory's rank in the lexical and in the
	// vector list (0: not in it); Score is then the fused score.
	Lexical int  `json:"lexical_rank,omitempty"`
	Vector  int  `json:"vector_rank,omitempty"`
	Hybrid  bool `json:"-"`
}

// querier answers searches and renders what the views generate from
// them and from the catalog: results and their snippets, context/, a
// log line's result, meta/stats.json, the guide. It has no lock of its
// own (the result cache and the redaction counts have theirs); a search
// holds the index's lock while its filter reads the catalog, never the
// other way round.
type querier struct {
	src Source // set by Engine.Start
	idx *search.Index
	cat *catalog
	w   *worker
	red *redactCounts
	emb *embedder
	// qc caches search results by generation (qcache.go); nil: off.
	qc *cache.Sized[string, []Result]
	// afterSearch, if set, runs after every search (SetAfterSearch).
	afterSearch func()
	// tuning replaces search.DefaultTuning when set (SetTuning).
	tuning *search.Tuning
	// lastSearch: when a search last began (UnixNano): a snapshot's
	// write waits while searches are answered (persist.go).
	lastSearch atomic.Int64
}

// bind gives the querier the store it reads results from.
func (qr *querier) bind(src Source) { qr.src = src }

// searching reports a search begun within d.
func (qr *querier) searching(d time.Duration) bool {
	return time.Since(time.Unix(0, qr.lastSearch.Load())) < d
}

// setTuning replaces the ranking's parameters (Engine.SetTuning).
func (qr *querier) setTuning(t search.Tuning) { qr.tuning = &t }

// expansion is the weighted expansion terms of q (search.Expand).
func (qr *querier) expansion(q Query) []search.Weighted {
	if len(q.Terms) == 0 {
		return nil
	}
	return search.Expand(q.Text, qr.tuning)
}

// searchOptions are the index's options for q, deep to k results.
func (qr *querier) searchOptions(q Query, filter func(uint64) bool, line func(uint64, uint32) bool) search.Options {
	return search.Options{K: q.K, Neighbours: neighbourWeight, Filter: filter, Line: line,
		Extra: qr.expansion(q), Tuning: qr.tuning}
}

// tuningKey tells results ranked under other parameters apart.
func tuningKey(t *search.Tuning) string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf("\x01%v", *t)
}

func expansionKey(ws []search.Weighted) string {
	var b strings.Builder
	for _, w := range ws {
		fmt.Fprintf(&b, "\x00%s=%g", w.Term, w.Weight)
	}
	return b.String()
}

// search is Engine.SearchCtx: when ctx is done the filter keeps nothing,
// so the index finishes at once.
func (qr *querier) search(ctx context.Context, q Query, scope Filter) ([]Result, error) {
	qr.lastSearch.Store(time.Now().UnixNano()) // a snapshot write yields (persist.go)
	if qr.afterSearch != nil {
		defer qr.afterSearch()
	}
	qr.w.ready()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f := scope.And(q.Filter)
	var key string
	if qr.qc != nil && f.May == nil {
		key = queryKey(q, f, qr.cat.generation()) + expansionKey(qr.expansion(q)) + tuningKey(qr.tuning) // before searching (qcache.go)
		if qr.hybridOn(q) {
			key += qr.hybridKey(q)
		}
		if rs, ok := qr.cachedResults(key); ok {
			return rs, nil
		}
	}
	var calls atomic.Uint64
	var stopped atomic.Bool
	filter := func(ino uint64) bool {
		if stopped.Load() || calls.Add(1)%256 == 0 && ctx.Err() != nil {
			stopped.Store(true)
			return false
		}
		return qr.cat.matchIno(ino, f)
	}
	if qr.hybridOn(q) {
		if fused, ok := qr.hybrid(q, filter, qr.lineFilter(f)); ok {
			if stopped.Load() {
				return nil, ctx.Err()
			}
			out := make([]Result, 0, len(fused))
			for _, h := range fused {
				p, err := qr.src.Path(h.Ino)
				if err != nil {
					continue
				}
				out = append(out, Result{Rank: len(out) + 1, Score: round(h.Score), Ino: h.Ino, Path: p, PathBase64: store.ExactPath(p), Name: path.Base(p),
					Line: h.Part, Lexical: h.LexRank, Vector: h.VecRank, Hybrid: true})
			}
			qr.keepResults(key, out)
			return out, nil
		}
	}
	hits := qr.idx.Search(q.Terms, qr.searchOptions(q, filter, qr.lineFilter(f)))
	if stopped.Load() {
		return nil, ctx.Err()
	}
	out := make([]Result, 0, len(hits))
	for _, h := range hits {
		p, err := qr.src.Path(h.Ino)
		if err != nil {
			continue
		}
		out = append(out, Result{Rank: len(out) + 1, Score: round(h.Score), Ino: h.Ino, Path: p, PathBase64: store.ExactPath(p), Name: path.Base(p), Line: h.Part})
	}
	qr.keepResults(key, out)
	return out, nil
}

func round(f float64) float64 { return float64(int64(f*10000+0.5)) / 10000 }

// withSnippets is WithSnippets with the text read through st (the
// engine's store, or a reader's view of it).
func (qr *querier) withSnippets(q Query, rs []Result, st Reader) []Result {
	out := slices.Clone(rs)
	for i := range out {
		if out[i].Snippet == "" {
			out[i].Snippet = qr.snippet(search.Hit{Ino: out[i].Ino, Part: out[i].Line}, q.Terms, st)
		}
	}
	return out
}

// snippet picks the line of the memory that holds the most query terms;
// for a log's line, that line's text. The file is read through st.
func (qr *querier) snippet(h search.Hit, terms []string, st Reader) string {
	if h.Part > 0 {
		if raw, ok := qr.logLine(h.Ino, h.Part); ok {
			raw = redactIno(qr.src, h.Ino, raw)
			if body := memory.ParseLine(raw).Body; strings.TrimSpace(body) != "" {
				return cut(body, 200)
			}
			return cut(string(raw), 200)
		}
	}
	size := uint64(64 << 10)
	if a, err := st.Attr(h.Ino); err == nil {
		size = min(size, a.Size) // most memories are far smaller: no 64 KiB buffer each
	}
	buf := make([]byte, size)
	n, err := st.ReadAt(h.Ino, buf, 0)
	if err != nil {
		return ""
	}
	text := buf[:n]
	if in, err := st.Info(h.Ino); err == nil && h.Part == 0 && in.BodyOffset > 0 && in.BodyOffset < len(text) &&
		strings.TrimSpace(string(text[in.BodyOffset:])) != "" {
		text = text[in.BodyOffset:] // the body's words, not the front matter's keys
	}
	lines := strings.Split(string(redactIno(qr.src, h.Ino, text)), "\n")
	want := map[string]bool{}
	for _, t := range terms {
		want[t] = true
	}
	best, bestN := "", -1
	for i, l := range lines {
		if h.Part > 0 && uint32(i+1) != h.Part {
			continue
		}
		l = strings.TrimSpace(l)
		if l == "" || l == "---" {
			continue
		}
		c := 0
		for _, t := range search.Tokens(l) {
			if want[t] {
				c++
			}
		}
		if c > bestN {
			best, bestN = l, c
		}
	}
	return cut(best, 200)
}

// cut shortens s to n runes on one line, marking the cut.
func cut(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Shown is a path or a query as a line of text shows it: as it is, or
// quoted as a Go string when it holds control characters (a newline, a
// tab) or is not UTF-8, so that no name can forge lines or columns of
// .results or headings of context/.
func Shown(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	return strconv.Quote(s)
}

// ResultsText renders the .results file: rank, score, path, snippet.
func ResultsText(q Query, rs []Result) []byte {
	var b strings.Builder
	hybrid := len(rs) > 0 && rs[0].Hybrid
	if hybrid {
		fmt.Fprintf(&b, "# query: %s\n# rank\tfused\tlexical\tvector\tpath\tsnippet\n", Shown(q.Text))
	} else {
		fmt.Fprintf(&b, "# query: %s\n# rank\tscore\tpath\tsnippet\n", Shown(q.Text))
	}
	rank := func(n int) string {
		if n == 0 {
			return "-"
		}
		return strconv.Itoa(n)
	}
	for _, r := range rs {
		p := Shown(r.Path)
		if r.Line > 0 {
			p += ":" + strconv.Itoa(int(r.Line))
		}
		if hybrid {
			fmt.Fprintf(&b, "%02d\t%.4f\t%s\t%s\t%s\t%s\n", r.Rank, r.Score, rank(r.Lexical), rank(r.Vector), p, r.Snippet)
		} else {
			fmt.Fprintf(&b, "%02d\t%.4f\t%s\t%s\n", r.Rank, r.Score, p, r.Snippet)
		}
	}
	return []byte(b.String())
}

// EntryName is the name of result r in a search directory: 01-<name>,
// or for a log's line 01-<name>#L<line>.
func EntryName(r Result) string {
	suffix := ""
	if r.Line > 0 {
		suffix = "#L" + strconv.Itoa(int(r.Line))
	}
	name := fmt.Sprintf("%02d-%s", r.Rank, r.Name)
	if len(name)+len(suffix) > 255 {
		name = name[:255-len(suffix)]
	}
	return name + suffix
}
