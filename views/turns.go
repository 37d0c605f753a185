package views

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"syscall"

	"github.com/mnemofs/mnemofs/memory"
)

// Results that point at the turn. A search result for a log's line is
// not the whole log but that line with lineContext lines before and
// after it (LineResult), and context/ quotes the same turns (turnSection),
// with the summary.md of the log's directory when it has one. Only the
// neighbours that pass the line-level part of the search's filter are
// shown (a user-scoped search shows that user's lines), and a reader
// that may not read the log gets nothing of it.

// lineContext is how many lines before and after a matching line its
// result shows.
const lineContext = 2

// lineFilter is the line-level part of f for search (nil when f has none).
func (qr *querier) lineFilter(f Filter) func(ino uint64, part uint32) bool {
	if !f.lineFiltered() {
		return nil
	}
	return func(ino uint64, part uint32) bool { return lineMatch(qr.cat.entry(ino), part, f) }
}

// logLine returns the bytes of line n of the log ino, as indexed.
func (qr *querier) logLine(ino uint64, n uint32) ([]byte, bool) {
	ent := qr.cat.entry(ino)
	if ent == nil {
		return nil, false
	}
	l, ok := ent.log.line(n)
	if !ok {
		return nil, false
	}
	buf := make([]byte, l.size)
	m, err := qr.src.ReadAt(ino, buf, int64(l.off))
	return buf[:m], err == nil && m == len(buf)
}

// turn is one line of a log shown with a result.
type turn struct {
	LineMeta
	raw   []byte
	match bool
}

// turns returns line n of the log ino and its neighbours that pass f's
// line-level part (n itself must), in order.
func (qr *querier) turns(ino uint64, n uint32, f Filter) ([]turn, error) {
	ent := qr.cat.entry(ino)
	if ent == nil || ent.log == nil || f.May != nil && !f.May(ino) {
		return nil, syscall.ENOENT
	}
	lines := ent.log.lines
	i := sort.Search(len(lines), func(i int) bool { return lines[i].Line >= n })
	if i == len(lines) || lines[i].Line != n || !lineMatch(ent, n, f) {
		return nil, syscall.ENOENT
	}
	var out []turn
	for j := max(0, i-lineContext); j < min(len(lines), i+lineContext+1); j++ {
		l := lines[j]
		if j != i && !lineMatch(ent, l.Line, f) {
			continue
		}
		buf := make([]byte, l.size)
		m, err := qr.src.ReadAt(ino, buf, int64(l.off))
		if err != nil {
			return nil, err
		}
		out = append(out, turn{LineMeta: l, raw: redactIno(qr.src, ino, buf[:m]), match: j == i})
	}
	return out, nil
}

// lineResult is Engine.LineResult.
func (qr *querier) lineResult(ino uint64, n uint32, f Filter) ([]byte, error) {
	qr.w.ready()
	ts, err := qr.turns(ino, n, f)
	if err != nil {
		return nil, err
	}
	p, err := qr.src.Path(ino)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s#L%d (lines %d-%d; ':' marks the match, '-' its neighbours)\n", p, n, ts[0].Line, ts[len(ts)-1].Line)
	for _, t := range ts {
		mark := "-"
		if t.match {
			mark = ":"
		}
		fmt.Fprintf(&b, "%d%s%s\n", t.Line, mark, t.raw)
	}
	return []byte(b.String()), nil
}

// turnSection is a log's matching line and its neighbours as Markdown for
// context/: one item a line, "L<n> <speaker> (<date>): <text>", the match
// in bold, under the log's path below root. Lines already shown (shown) are left out and marked shown; a
// result whose own line was shown gives nothing.
func (qr *querier) turnSection(root string, r Result, f Filter, shown map[[2]uint64]bool) string {
	ts, err := qr.turns(r.Ino, r.Line, f)
	if err != nil || shown[[2]uint64{r.Ino, uint64(r.Line)}] {
		return "" // the turn is already quoted, as another's neighbour
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s#L%d\n\n", Shown(root+r.Path), r.Line)
	n := 0
	for _, t := range ts {
		k := [2]uint64{r.Ino, uint64(t.Line)}
		if shown[k] {
			continue
		}
		shown[k] = true
		n++
		l := memory.ParseLine(t.raw)
		who := ""
		if l.Speaker != "" {
			who = " " + l.Speaker
		}
		if l.Created != nil {
			who += " (" + l.Created.UTC().Format("2006-01-02 15:04") + ")"
		}
		text := cut(l.Body, 2000)
		if t.match {
			text = "**" + text + "**"
		}
		fmt.Fprintf(&b, "- L%d%s: %s\n", t.Line, who, text)
	}
	if n == 0 {
		return ""
	}
	b.WriteString("\n")
	return b.String()
}

// summaryOf returns the summary.md beside the log ino (its path and
// inode) when there is one that f keeps.
func (qr *querier) summaryOf(ino uint64, f Filter) (string, uint64, bool) {
	a, err := qr.src.Attr(ino)
	if err != nil || len(a.Links) == 0 {
		return "", 0, false
	}
	in, err := qr.src.Lookup(a.Links[0].Parent, "summary.md")
	if err != nil || !in.IsReg() || !qr.cat.matchIno(in.Ino, Filter{May: f.May, Users: f.Users, Archived: true}) {
		return "", 0, false
	}
	p, err := qr.src.Path(in.Ino)
	if err != nil || path.Base(p) != "summary.md" {
		return "", 0, false
	}
	return p, in.Ino, true
}
