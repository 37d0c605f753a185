package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mnemofs/mnemofs/memory"
	"github.com/mnemofs/mnemofs/store"
)

// journal is the store journal of the entries.
const journal = "mcplog"

// keep is how many entries the log keeps (a variable for the tests); it
// is trimmed to keep every trimEvery records of a process, and shows the
// last keep.
var keep, trimEvery = 2000, 50

// Entry is one change made over MCP.
type Entry struct {
	Time time.Time `json:"time"`
	// User is the session's user: its token's name ("" for every user).
	User string `json:"user,omitempty"`
	// Via is how the session reached the server: "http" or "stdio".
	Via     string `json:"via"`
	Command string `json:"command"`
	Path    string `json:"path"`
	To      string `json:"to,omitempty"` // rename: the new path
	// Ino is the memory changed (0: a directory); Users and Unsure say
	// who could see it after the change (store.Info).
	Ino    uint64   `json:"ino,omitempty"`
	Users  []string `json:"users,omitempty"`
	Unsure bool     `json:"unsure,omitempty"`
}

// seq tells apart the keys of entries recorded in the same nanosecond.
var seq atomic.Uint64

// Record appends e to the log of st.
func Record(st *store.Store, e Entry) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	v, err := json.Marshal(e)
	if err != nil {
		return err
	}
	n := seq.Add(1)
	key := fmt.Sprintf("%s-%d-%d", e.Time.Format("20060102T150405.000000000Z"), os.Getpid(), n)
	if err := st.AddJournalEntry(journal, key, v); err != nil {
		return err
	}
	if n%uint64(trimEvery) == 0 {
		return st.TrimJournal(journal, keep)
	}
	return nil
}

// Log is meta/mcp.log of st, oldest entry first, as the store's user
// sees it, and of those only the entries about memories may(ino) allows
// (nil: all).
func Log(st *store.Store, may func(ino uint64) bool) ([]byte, error) {
	entries, err := st.Journal(journal)
	entries = entries[max(0, len(entries)-keep):] // not trimmed yet: the last
	user := st.User()
	restricted := user != "" || may != nil
	var b strings.Builder
	for _, v := range entries {
		var e Entry
		if json.Unmarshal(v, &e) != nil {
			continue
		}
		if restricted && !shown(e, user, may) {
			continue
		}
		who := "(every user)"
		if e.User != "" {
			who = e.User
		}
		fmt.Fprintf(&b, "%s %s over %s: %s %s", e.Time.Format(time.RFC3339), who, e.Via, e.Command, quoted(e.Path))
		if e.To != "" {
			fmt.Fprintf(&b, " -> %s", quoted(e.To))
		}
		b.WriteByte('\n')
	}
	return []byte(b.String()), err
}

// shown reports whether a restricted reader (user, or may) sees e.
func shown(e Entry, user string, may func(uint64) bool) bool {
	if e.Ino == 0 {
		// A directory: its session's user's, and every user's.
		return user != "" && e.User == user && may == nil
	}
	r := store.Record{Meta: memory.Meta{Users: e.Users}, Unreadable: e.Unsure}
	return r.VisibleTo(user) && (may == nil || may(e.Ino))
}

// quoted is p as a line shows it: as it is, or quoted when it holds
// control characters or is not UTF-8, so that no name forges a line.
func quoted(p string) string {
	if utf8.ValidString(p) && !strings.ContainsFunc(p, unicode.IsControl) {
		return p
	}
	return strconv.Quote(p)
}
