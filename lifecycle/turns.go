package lifecycle

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/mnemofs/mnemofs/memory"
	"github.com/mnemofs/mnemofs/store"
)

// Turns: what consolidation and profile extraction read of a session. A
// turn is a memory file of the session's directory, or a line of a log
// there (turns.jsonl, one JSON line a turn), each with who may see it —
// the file's audience, or for a log's line the line's own users (a log
// with an owner is the owner's, line by line too).

// turn is one turn of a session.
type turn struct {
	name    string // "turn-1.md", or "turns.jsonl#L3"
	src     string // the store path (a log's line: path#Lnum), for links
	speaker string
	users   []string // who may see it: nil, everyone
	unsure  bool     // nobody can tell whose it is
	body    string
	// log, for a line of a log whose lines name their users: every
	// line's audience, so that a link can number the line as one user's
	// view of the log does (srcFor); n is the line's index.
	log *logView
	n   int
}

// logView is the audience of each line of a shared log (nil: everyone,
// and so a blank line; unsure: no user).
type logView struct {
	path   string
	aud    [][]string
	unsure []bool
}

// srcFor is t's link as user u reads the log: a line of a shared log is
// numbered among the lines u sees there, so that a link tells nothing of
// the lines hidden from u (and names the line u's search calls it).
func (t turn) srcFor(u string) string {
	if t.log == nil {
		return t.src
	}
	n := 1
	for j := range t.n {
		if !t.log.unsure[j] && (t.log.aud[j] == nil || slices.Contains(t.log.aud[j], u)) {
			n++
		}
	}
	return fmt.Sprintf("%s#L%d", t.log.path, n)
}

// memTurns lists the turns of the memory in: itself, or each line of a
// log.
func memTurns(st *store.Store, in store.Info) ([]turn, error) {
	b, err := readAllOf(st, in)
	if err != nil {
		return nil, err
	}
	base := path.Base(in.Path)
	if !store.IsLogName(base) {
		speaker, _ := in.Extra["speaker"].(string)
		return []turn{{name: base, src: in.Path, speaker: speaker, users: in.Users, unsure: in.Unsure(),
			body: string(bytes.TrimSpace(b[min(len(b), in.BodyOffset):]))}}, nil
	}
	r, err := st.Record(in.Ino)
	if err != nil {
		return nil, err
	}
	var out []turn
	jsonLog := memory.IsJSONLog(base)
	var lv *logView
	if r.Owner == "" {
		lv = &logView{path: in.Path}
	}
	for n, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			if lv != nil {
				lv.aud, lv.unsure = append(lv.aud, nil), append(lv.unsure, false)
			}
			continue
		}
		l := memory.ParseLine(line)
		users := l.Users
		if r.Owner != "" {
			users = []string{r.Owner}
		}
		unsure := (in.Unsure() || l.Unsure(jsonLog)) && r.Owner == ""
		if lv != nil {
			lv.aud, lv.unsure = append(lv.aud, users), append(lv.unsure, unsure)
		}
		out = append(out, turn{name: fmt.Sprintf("%s#L%d", base, n+1), src: fmt.Sprintf("%s#L%d", in.Path, n+1),
			speaker: l.Speaker, users: users, unsure: unsure, body: strings.TrimSpace(l.Body), log: lv, n: n})
	}
	return out, nil
}

// sessionTurns lists the turns of a session (its memories but the
// summary), files in name order and each log's lines in order.
func sessionTurns(st *store.Store, mems []store.Info) ([]turn, error) {
	sort.Slice(mems, func(a, b int) bool { return mems[a].Path < mems[b].Path })
	var out []turn
	for _, in := range mems {
		ts, err := memTurns(st, in)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

// turnsAudience is who sees every one of turns: nil for everyone, else
// the users in every audience; ok is false when that is no one, or a
// turn's audience is unknown.
func turnsAudience(turns []turn) (users []string, ok bool) {
	var set map[string]bool
	for _, t := range turns {
		if t.unsure {
			return nil, false
		}
		if len(t.users) == 0 {
			continue // public: seen by everyone
		}
		next := map[string]bool{}
		for _, u := range t.users {
			if set == nil || set[u] {
				next[u] = true
			}
		}
		if len(next) == 0 {
			return nil, false
		}
		set = next
	}
	for u := range set {
		users = append(users, u)
	}
	sort.Strings(users)
	return users, true
}

// turnsText is the turns as a command reads them on its stdin.
func turnsText(turns []turn) []byte {
	var b bytes.Buffer
	for _, t := range turns {
		who := ""
		if t.speaker != "" {
			who = " (" + t.speaker + ")"
		}
		fmt.Fprintf(&b, "## %s%s\n\n%s\n\n", t.name, who, t.body)
	}
	return b.Bytes()
}
