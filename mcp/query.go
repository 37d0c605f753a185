package mcp

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemofs/mnemofs/views"
)

// maxQuery bounds a query, in bytes (a directory name is at most 255).
const maxQuery = 4096

// hit is one search result as the search tool returns it.
type hit struct {
	Rank       int     `json:"rank"`
	Score      float64 `json:"score"`
	Path       string  `json:"path"`
	PathBase64 string  `json:"path_base64,omitempty"`
	Line       uint32  `json:"line,omitempty"`
	Snippet    string  `json:"snippet"`
	Lexical    int     `json:"lexical_rank,omitempty"`
	Vector     int     `json:"vector_rank,omitempty"`
}

// query reads the query field (and the filters in it, as search/<query>/
// takes them). A path: filter may name /memories paths.
func (t *Tools) query(a args) (views.Query, error) {
	s, err := a.need("query")
	if err != nil {
		return views.Query{}, err
	}
	switch {
	case strings.TrimSpace(s) == "":
		return views.Query{}, errorf("`query` is empty: give words to look for, with optional filters user: type: tag: path: after:YYYY-MM-DD before:YYYY-MM-DD k:N archived:true")
	case len(s) > maxQuery:
		return views.Query{}, errorf("`query` is %d bytes; queries are at most %d bytes", len(s), maxQuery)
	}
	q, err := views.ParseQuery(s)
	if err != nil {
		return q, errorf("bad query %q: %v", clip(s, 200), err)
	}
	if f := q.Filter.Path; f == Root || strings.HasPrefix(f, Root+"/") {
		q.Filter.Path = "/" + strings.TrimPrefix(strings.TrimPrefix(f, Root), "/")
	}
	if t.eng == nil {
		return q, errorf("this server has no search index")
	}
	return q, nil
}

// positive reads an optional positive integer field.
func positive(a args, k string) (int, bool, error) {
	n, ok, err := a.integer(k)
	if err == nil && ok && n < 1 {
		err = errorf("`%s` must be at least 1, got %d", k, n)
	}
	return int(min(n, 1<<30)), ok, err
}

// search ranks memories for a query, as search/<query>/ does; the store's
// user (the server's --user) decides whose memories take part.
func (t *Tools) search(ctx context.Context, a args) (Result, error) {
	if err := a.only("query", "k"); err != nil {
		return Result{}, err
	}
	q, err := t.query(a)
	if err != nil {
		return Result{}, err
	}
	k, ok, err := positive(a, "k")
	if err != nil {
		return Result{}, err
	}
	if ok {
		if k > views.MaxK {
			return Result{}, errorf("`k` must be at most %d, got %d", views.MaxK, k)
		}
		q.K = k
	}
	rs, err := t.eng.SearchCtx(ctx, q, t.scope)
	if err != nil {
		return Result{}, errorf("the search was stopped: %v", err)
	}
	rs = t.eng.WithSnippetsFor(q, rs, t.scope)
	hits := make([]hit, len(rs))
	for i := range rs {
		rs[i].Path = Root + rs[i].Path
		r := rs[i]
		hits[i] = hit{Rank: r.Rank, Score: r.Score, Path: r.Path, Line: r.Line, Snippet: r.Snippet, Lexical: r.Lexical, Vector: r.Vector}
		if r.PathBase64 != "" || !utf8.ValidString(r.Path) {
			hits[i].Path = escape(r.Path)
		}
	}
	txt := string(views.ResultsText(q, rs))
	if len(rs) == 0 {
		txt += "(no memory matches)\n"
	}
	return structured(txt, map[string]any{"query": q.Text, "results": hits})
}

// context is the context/<query> file: the most relevant memories and the
// newest working/ ones, within a token budget.
func (t *Tools) context(ctx context.Context, a args) (Result, error) {
	if err := a.only("query", "budget"); err != nil {
		return Result{}, err
	}
	q, err := t.query(a)
	if err != nil {
		return Result{}, err
	}
	budget, ok, err := positive(a, "budget")
	if err != nil {
		return Result{}, err
	}
	if ok {
		q.Budget = min(budget, 1<<20)
	}
	q.Root = Root // the paths it names are the ones the memory tool takes
	b, err := t.eng.ContextCtx(ctx, q, t.scope)
	if err != nil {
		return Result{}, errorf("building the context was stopped: %v", err)
	}
	return Result{Text: string(b)}, nil
}

// version is one kept version as the history tool lists it.
type version struct {
	Version  uint32 `json:"version"`
	Size     uint64 `json:"size"`
	SHA256   string `json:"sha256"`
	Modified string `json:"modified"` // when that content was written
	Saved    string `json:"saved"`    // when it was replaced
}

// history lists the kept old versions of a file, or shows one.
func (t *Tools) history(a args) (Result, error) {
	if err := a.only("path", "version"); err != nil {
		return Result{}, err
	}
	p, err := pathArg(a, "path")
	if err != nil {
		return Result{}, err
	}
	want, one, err := positive(a, "version")
	if err != nil {
		return Result{}, err
	}
	n, err := t.resolve(p)
	if err != nil {
		return Result{}, err
	}
	if !n.exists {
		return Result{}, plain(fmt.Sprintf("Error: The path %s does not exist", p.shown))
	}
	if !n.in.IsReg() {
		return Result{}, errorf("%s is a %s: only files have versions", p.shown, kindOf(n.in))
	}
	vs, err := t.st.Versions(n.in.Ino)
	if err != nil {
		return Result{}, t.fsErr("list the versions of", p.shown, err)
	}
	cur := 0
	if rec, err := t.st.Record(n.in.Ino); err == nil {
		cur = rec.Version
	}
	stamp := func(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339) }
	list := make([]version, len(vs))
	var sb strings.Builder
	for i, v := range vs {
		list[i] = version{Version: v.N, Size: v.Size, SHA256: v.SHA256, Modified: stamp(v.Modified), Saved: stamp(v.Saved)}
		fmt.Fprintf(&sb, "\nv%d\t%s\twritten %s\treplaced %s\tsha256 %s", v.N, humanSize(v.Size), list[i].Modified, list[i].Saved, v.SHA256)
	}
	if !one {
		head := fmt.Sprintf("%s has no kept versions (its tree keeps none, or it never changed); the current content is version %d.", p.shown, cur)
		if len(vs) > 0 {
			head = fmt.Sprintf("Kept versions of %s, oldest first (the current content is version %d; read one with `version`):", p.shown, cur)
		}
		return structured(head+sb.String(), map[string]any{"path": p.shown, "current_version": cur, "versions": list})
	}
	for i, v := range vs {
		if int(v.N) != want {
			continue
		}
		b, err := t.st.VersionContent(n.in.Ino, v.N)
		if err != nil {
			return Result{}, t.fsErr("read a version of", p.shown, err)
		}
		if !utf8.Valid(b) {
			return Result{}, errorf("version %d of %s is not UTF-8 text (%d bytes of binary data)", want, p.shown, len(b))
		}
		var out strings.Builder
		fmt.Fprintf(&out, "Here's version %d of %s (written %s, replaced %s) with line numbers:", want, p.shown, stamp(v.Modified), stamp(v.Saved))
		for i, l := range splitLines(string(b)) {
			fmt.Fprintf(&out, "\n%6d\t%s", i+1, l)
			if out.Len() > MaxText {
				return Result{}, errorf("version %d of %s is over %d bytes (1 MiB), more than a call returns: read it through the mount, under history/", want, p.shown, MaxText)
			}
		}
		return structured(out.String(), map[string]any{"path": p.shown, "current_version": cur, "versions": []version{list[i]}})
	}
	kept := "none"
	if len(vs) > 0 {
		kept = fmt.Sprintf("%d to %d", vs[0].N, vs[len(vs)-1].N)
	}
	return Result{}, errorf("%s has no kept version %d (kept: %s; the current content is version %d: view it with the memory tool)", p.shown, want, kept, cur)
}

// stats is meta/stats.json: counts, sizes, health and warnings, of what the
// session's user may see, with the MCP sessions of that user (of every
// user, for a session for every user).
func (t *Tools) stats(a args) (Result, error) {
	if err := a.only(); err != nil {
		return Result{}, err
	}
	if t.eng == nil {
		return Result{}, errorf("this server has no index to report on")
	}
	b, err := t.eng.StatsJSON(nil)
	if t.scope.Reader != nil {
		b, err = t.eng.StatsJSONFor(t.scope.Reader)
	}
	if err == nil && t.host != nil {
		b, err = withSessions(b, t.host.Activity(t.call.User))
	}
	if err != nil {
		return Result{}, errorf("cannot compute the statistics: %v", err)
	}
	return Result{Text: string(b), Structured: b}, nil
}
