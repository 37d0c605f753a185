package lifecycle

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mnemofs/mnemofs/memory"
	"github.com/mnemofs/mnemofs/store"
)

// meta/maintenance.log keeps the last maintLogPasses passes, one entry
// each of the store's journal maintLog (store.AppendJournal: never a
// rewrite of the whole log). A pass is stored as a logPass, each
// action and error with the memory it was about and who could see that
// memory then, so that every reader is shown only the lines about
// memories they may see (a purged memory is gone, its audience is not).
// Passes stored as text by older versions are shown only to unrestricted
// readers.
const (
	maintLog       = "maintlog"
	maintLogPasses = 400
)

// logPass is one stored pass.
type logPass struct {
	Now    time.Time `json:"now"`
	Host   string    `json:"host,omitempty"`
	Lines  []logLine `json:"lines"`
	Legacy string    `json:"-"`
}

// logLine is one action or error of a pass.
type logLine struct {
	Text   string   `json:"text"`
	Error  bool     `json:"error,omitempty"`
	Note   bool     `json:"note,omitempty"` // what the pass left undone on purpose
	Ino    uint64   `json:"ino,omitempty"`
	Users  []string `json:"users,omitempty"`
	Unsure bool     `json:"unsure,omitempty"`
}

// Log is meta/maintenance.log of st, oldest pass first, as the store's
// user may see it, and of those lines only the ones about memories
// may(ino) allows (nil: all).
func Log(st *store.Store, may func(ino uint64) bool) ([]byte, error) {
	var passes []logPass
	entries, err := st.Journal(maintLog)
	for _, v := range entries {
		var p logPass
		if json.Unmarshal(v, &p) != nil {
			p = logPass{Legacy: string(v)}
		}
		passes = append(passes, p)
	}
	user := st.User()
	var b strings.Builder
	for _, p := range passes {
		if p.Legacy != "" {
			if user == "" && may == nil {
				b.WriteString(p.Legacy)
			}
			continue
		}
		var shown []logLine
		nerr, nnote := 0, 0
		for _, l := range p.Lines {
			r := store.Record{Meta: memory.Meta{Users: l.Users}, Unreadable: l.Unsure}
			if l.Ino == 0 && l.Users == nil && (user != "" || may != nil) {
				continue // about no memory in particular: the operator's
			}
			if !r.VisibleTo(user) || may != nil && !may(l.Ino) {
				continue
			}
			shown = append(shown, l)
			if l.Error {
				nerr++
			}
			if l.Note {
				nnote++
			}
		}
		if len(shown) == 0 && (user != "" || may != nil) {
			continue
		}
		ts := p.Now.Format(time.RFC3339)
		host := ""
		if p.Host != "" {
			host = " on " + p.Host
		}
		fmt.Fprintf(&b, "%s pass%s: %d actions, %d errors\n", ts, host, len(shown)-nerr-nnote, nerr)
		for _, l := range shown {
			kind := ""
			if l.Error {
				kind = "error "
			}
			if l.Note {
				kind = "note "
			}
			fmt.Fprintf(&b, "%s %s%s\n", ts, kind, l.Text)
		}
	}
	return []byte(b.String()), err
}

// appendToLog appends the pass r to meta/maintenance.log. audience gives
// who could see the memory ino before the pass.
func appendToLog(st *store.Store, r *Report, audience map[uint64]store.Info) error {
	p := logPass{Now: r.Now}
	p.Host = hostID()
	line := func(text string, isErr bool, ino uint64) logLine {
		l := logLine{Text: text, Error: isErr, Ino: ino}
		if in, ok := audience[ino]; ok {
			l.Users, l.Unsure = in.Users, in.Unsure()
		}
		return l
	}
	for _, a := range r.Actions {
		text := a.Kind + " " + a.Path
		if a.To != "" {
			text += " -> " + a.To
		}
		l := line(text+" ("+a.Reason+")", false, a.ino)
		if a.Kind == "summary" || a.Kind == "profile" {
			l.Users = a.who // what it writes: its own audience; nil, public
		}
		p.Lines = append(p.Lines, l)
	}
	for _, e := range r.failed {
		p.Lines = append(p.Lines, line(e.text, true, e.ino))
	}
	for _, n := range r.Notes {
		p.Lines = append(p.Lines, logLine{Text: n, Note: true}) // about no one memory: the operator's
	}
	v, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return st.AppendJournal(maintLog, r.Now.Format("20060102T150405.000000000Z"), v, maintLogPasses)
}
