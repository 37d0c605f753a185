package store

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/memory"
)

// meta/maintenance.log keeps the last maintLogPasses passes, one key each
// (never a rewrite of the whole log). A pass is stored as a logPass, each
// action and error with the memory it was about and who could see that
// memory then, so that every reader is shown only the lines about
// memories they may see (a purged memory is gone, its audience is not).
// Passes stored as text by older versions are shown only to unrestricted
// readers.
const (
	maintLogPrefix = "maintlog/"
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
	Ino    uint64   `json:"ino,omitempty"`
	Users  []string `json:"users,omitempty"`
	Unsure bool     `json:"unsure,omitempty"`
}

// MaintenanceLog is meta/maintenance.log, oldest pass first, as the
// store's user may see it, and of those lines only the ones about memories
// may(ino) allows (nil: all).
func (s *Store) MaintenanceLog(may func(ino uint64) bool) ([]byte, error) {
	var passes []logPass
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.StoreKey(maintLogPrefix), nil, false, func(_, v []byte) bool {
			var p logPass
			if json.Unmarshal(v, &p) != nil {
				p = logPass{Legacy: string(v)}
			}
			passes = append(passes, p)
			return true
		})
	})
	var b strings.Builder
	for _, p := range passes {
		if p.Legacy != "" {
			if s.opts.User == "" && may == nil {
				b.WriteString(p.Legacy)
			}
			continue
		}
		var shown []logLine
		nerr := 0
		for _, l := range p.Lines {
			r := Record{Meta: memory.Meta{Users: l.Users}, Unreadable: l.Unsure}
			if l.Ino == 0 && l.Users == nil && (s.opts.User != "" || may != nil) {
				continue // about no memory in particular: the operator's
			}
			if !r.visibleTo(s.opts.User) || may != nil && !may(l.Ino) {
				continue
			}
			shown = append(shown, l)
			if l.Error {
				nerr++
			}
		}
		if len(shown) == 0 && (s.opts.User != "" || may != nil) {
			continue
		}
		ts := p.Now.Format(time.RFC3339)
		host := ""
		if p.Host != "" {
			host = " on " + p.Host
		}
		fmt.Fprintf(&b, "%s pass%s: %d actions, %d errors\n", ts, host, len(shown)-nerr, nerr)
		for _, l := range shown {
			kind := ""
			if l.Error {
				kind = "error "
			}
			fmt.Fprintf(&b, "%s %s%s\n", ts, kind, l.Text)
		}
	}
	return []byte(b.String()), err
}

// logMaintenance appends the pass to meta/maintenance.log. audience gives
// who could see the memory ino before the pass.
func (s *Store) logMaintenance(r *MaintainReport, audience map[uint64]Info) error {
	p := logPass{Now: r.Now}
	p.Host, _ = os.Hostname()
	line := func(text string, isErr bool, ino uint64) logLine {
		l := logLine{Text: text, Error: isErr, Ino: ino}
		if in, ok := audience[ino]; ok {
			l.Users, l.Unsure = in.Users, in.unsure
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
	v, err := json.Marshal(p)
	if err != nil {
		return err
	}
	key := backend.StoreKey(maintLogPrefix + r.Now.Format("20060102T150405.000000000Z"))
	return s.kv.Update(func(t backend.Txn) error {
		var keys [][]byte
		err := t.Scan(backend.StoreKey(maintLogPrefix), nil, true, func(k, _ []byte) bool {
			keys = append(keys, append([]byte(nil), k...))
			return true
		})
		if err != nil {
			return err
		}
		for len(keys) >= maintLogPasses {
			if err := t.Delete(keys[0]); err != nil {
				return err
			}
			keys = keys[1:]
		}
		return t.Set(key, v)
	})
}
