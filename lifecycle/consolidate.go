package lifecycle

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/mnemofs/mnemofs/memory"
	"github.com/mnemofs/mnemofs/policy"
	"github.com/mnemofs/mnemofs/store"
)

// Consolidation: a session directory under episodic/sessions/
// with at least two turns — memory files, or the lines of a log such as
// turns.jsonl (turns.go) — and no summary.md gets one, written through the
// store like any memory (so it is indexed and versioned by the policy).
// A summary consolidation wrote records what it covered (its front
// matter's summary_turns and summary_source_bytes); when the session's
// turns grow, the next pass writes it anew, a new version. A summary.md
// someone else wrote is never touched.

// sessionsDir holds the session directories consolidation looks at.
const sessionsDir = "/episodic/sessions"

// summaryName is the file consolidation writes.
const summaryName = "summary.md"

// summaryPlan is a summary to write (update 0) or to bring up to date.
type summaryPlan struct {
	dir    string
	turns  []turn
	who    []string // the summary's audience (nil: everyone)
	update uint64   // the summary.md to rewrite, 0 for a new one
	source uint64   // the bytes of the turns' memories
}

// summaryPlans lists the sessions of mems that need a summary or a newer
// one (only those are read), and the sessions that need one but cannot
// have it: their turns have no reader in common.
func summaryPlans(st *store.Store, mems []store.Info) (out []summaryPlan, shared []string) {
	bySession := map[string][]store.Info{}
	summaries := map[string]store.Info{}
	for _, in := range mems {
		dir := path.Dir(in.Path)
		if path.Dir(dir) != sessionsDir {
			continue
		}
		if path.Base(in.Path) == summaryName {
			summaries[dir] = in
			continue
		}
		bySession[dir] = append(bySession[dir], in)
	}
	for dir, ms := range bySession {
		var source uint64
		for _, in := range ms {
			source += in.Size
		}
		p := summaryPlan{dir: dir, source: source}
		if sum, ok := summaries[dir]; ok {
			covered, ours := summaryCovers(sum)
			if !ours || covered == source {
				continue // written by someone else, or up to date
			}
			p.update = sum.Ino
		}
		turns, err := sessionTurns(st, ms)
		if err != nil || len(turns) < 2 {
			continue
		}
		who, ok := turnsAudience(turns)
		if !ok {
			// Turns of users who cannot see each other's (or whose
			// users cannot be told): a summary of them all would show
			// each user the others' words.
			shared = append(shared, dir)
			continue
		}
		p.turns, p.who = turns, who
		out = append(out, p)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].dir < out[b].dir })
	sort.Strings(shared)
	return out, shared
}

// summaryCovers reads what a summary consolidation wrote covered; ours is
// false for a summary.md written by anyone else.
func summaryCovers(in store.Info) (source uint64, ours bool) {
	switch v := in.Extra["summary_source_bytes"].(type) {
	case int:
		return uint64(v), v >= 0
	case uint64:
		return v, true
	case float64:
		return uint64(v), v >= 0
	}
	return 0, false
}

// summarize writes (or brings up to date) the summary of p, with the
// operator's command when there is one (c nil: extractive). The summary
// is seen by whoever sees every turn: it belongs to that user, or names
// those users in its front matter.
func summarize(st *store.Store, p summaryPlan, c *policy.Command) error {
	var body []byte
	if c != nil {
		b, err := runCommand("consolidation", c, bytes.NewReader(turnsText(p.turns)))
		if err != nil {
			return err
		}
		body = b
	} else {
		body = extractive(path.Base(p.dir), p.turns)
	}
	text := summaryText(body, p)
	if p.update != 0 {
		return st.RewriteInternal(p.update, text)
	}
	owner := ""
	if len(p.who) == 1 {
		owner = p.who[0]
	}
	return st.WriteNew(p.dir, summaryName, text, owner)
}

// summaryText puts the front matter consolidation owns on a summary's
// body: type, who may see it (users), what it covers. Whatever front
// matter the body had is dropped, so a command's output cannot widen who
// sees it.
func summaryText(body []byte, p summaryPlan) []byte {
	body = dropFrontMatter(body)
	var b strings.Builder
	b.WriteString("---\ntype: summary\ntags: [summary]\n")
	if len(p.who) > 0 {
		b.WriteString("users: [" + strings.Join(quoteAll(p.who), ", ") + "]\n")
	}
	fmt.Fprintf(&b, "summary_turns: %d\nsummary_source_bytes: %d\n---\n", len(p.turns), p.source)
	return append([]byte(b.String()), body...)
}

// dropFrontMatter is b without its front matter, if it has one.
func dropFrontMatter(b []byte) []byte {
	if pr := memory.Parse(summaryName, b); pr.BodyOffset > 0 {
		return b[pr.BodyOffset:]
	}
	return b
}

func quoteAll(l []string) []string {
	out := make([]string, len(l))
	for k, x := range l {
		out[k] = strconv.Quote(x)
	}
	return out
}

// extractive is the default summary: the first sentence of each turn.
func extractive(session string, turns []turn) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Summary of %s (%d turns, extractive)\n\n", session, len(turns))
	for _, t := range turns {
		body := strings.Join(strings.Fields(t.body), " ")
		if end := strings.IndexAny(body, ".!?"); end >= 0 && end < 200 {
			body = body[:end+1]
		} else if len(body) > 200 {
			body = body[:200] + "…"
		}
		if body == "" {
			continue
		}
		who := t.name
		if t.speaker != "" {
			who += " (" + t.speaker + ")"
		}
		fmt.Fprintf(&b, "- %s: %s\n", who, body)
	}
	return []byte(b.String())
}

// readAllOf reads a memory's bytes (bounded).
func readAllOf(st *store.Store, in store.Info) ([]byte, error) {
	b := make([]byte, min(in.Size, memory.MaxParse))
	n, err := st.ReadWhole(in.Ino, b, 0) // whichever user's mount the pass runs in
	return b[:n], err
}
