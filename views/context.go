package views

import (
	"context"
	"fmt"
	"strings"
)

// workingShare is the part of the budget kept for working/ memories.
const workingShare = 0.25

// tokens estimates the tokens of text the way prompt budgets are usually
// estimated: about four characters per token.
func tokens(s string) int { return (len(s) + 3) / 4 }

// fit returns s, or its start cut to limit tokens (ok false) when too
// long: its whole lines that fit, or when not even its first two do (a
// heading and one long line), the start of them.
func fit(s string, limit int) (string, bool) {
	if tokens(s) <= limit {
		return s, true
	}
	if limit < 16 {
		return "", false
	}
	const more = "…\n\n"
	lines := strings.SplitAfter(s, "\n")
	n, used := 0, tokens(more)
	for n < len(lines) && used+tokens(lines[n]) <= limit {
		used += tokens(lines[n])
		n++
	}
	if n >= 2 {
		return strings.Join(lines[:n], "") + more, false
	}
	r := []rune(s)
	for len(r) > 0 && tokens(string(r))+2 > limit {
		r = r[:len(r)*9/10]
	}
	return string(r) + "\n" + more, false
}

// contextFile is Engine.ContextCtx.
func (qr *querier) contextFile(ctx context.Context, q Query, scope Filter) ([]byte, error) {
	var b strings.Builder
	head := fmt.Sprintf("# Context for: %s\n\n", q.Text)
	b.WriteString(head)
	left := q.Budget - tokens(head)
	relevant := left - int(float64(q.Budget)*workingShare)
	seen := map[uint64]bool{}
	if len(q.Terms) > 0 && relevant > 16 {
		b.WriteString("## Relevant memories\n\n")
		rs, err := qr.search(ctx, q, scope)
		if err != nil {
			return nil, err
		}
		f := scope.And(q.Filter)
		shown := map[[2]uint64]bool{}
	results:
		for _, r := range rs {
			var secs []string
			if r.Line > 0 {
				// A log's line: the session's summary first (once), then
				// the turn and its neighbours.
				if sp, sino, ok := qr.summaryOf(r.Ino, f); ok && !seen[sino] {
					seen[sino] = true
					secs = append(secs, qr.section(q.Root, sp, sino, scope))
				}
				secs = append(secs, qr.turnSection(q.Root, r, f, shown))
			} else if !seen[r.Ino] {
				seen[r.Ino] = true
				secs = append(secs, qr.section(q.Root, r.Path, r.Ino, scope))
			}
			for _, sec := range secs {
				s, whole := fit(sec, relevant)
				b.WriteString(s)
				relevant -= tokens(s)
				left -= tokens(s)
				if !whole {
					break results
				}
			}
		}
	}
	qr.w.ready()
	recent, err := qr.cat.recentOf(ctx, 20, scope.And(Filter{Path: "/working"}))
	if err != nil {
		return nil, err
	}
	if len(recent) > 0 && left > 16 {
		heading := "## Working memory (newest first)\n\n" // once there is one to show
		for _, ino := range recent {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			p, err := qr.src.Path(ino)
			if seen[ino] || err != nil {
				continue
			}
			if heading != "" {
				b.WriteString(heading)
				left -= tokens(heading)
				heading = ""
			}
			s, whole := fit(qr.section(q.Root, p, ino, scope), left)
			b.WriteString(s)
			left -= tokens(s)
			if !whole {
				break
			}
		}
	}
	return []byte(b.String()), ctx.Err()
}

// section is one memory as Markdown: its path (under root) and its text.
// A summary the maintenance pass wrote is shown without its front matter
// (its type and bookkeeping), which is not worth the budget. It is read
// as scope's reader (if any) sees it.
func (qr *querier) section(root, p string, ino uint64, scope Filter) string {
	var st Reader = qr.src
	if scope.Reader != nil {
		st = scope.Reader // as the reader sees it (a shared log: its lines)
	}
	buf := make([]byte, 32<<10)
	n, _ := st.ReadAt(ino, buf, 0)
	text := buf[:n]
	if in, err := st.Info(ino); err == nil && in.Type == "summary" && in.BodyOffset > 0 && in.BodyOffset < n {
		text = text[in.BodyOffset:]
	}
	return fmt.Sprintf("### %s\n\n%s\n\n", Shown(root+p), strings.TrimSpace(redactText(qr.src, p, string(text))))
}
