package audit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store"
)

func openStore(t testing.TB) *store.Store {
	t.Helper()
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(kv, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(); kv.Close() })
	return st
}

// TestLogPerReader: every entry is shown to a reader for every user; a
// user is shown the entries about memories they may see and their own
// sessions' directory changes; a restricted reader of a mount the ones
// its predicate allows. Names that could forge a line are quoted.
func TestLogPerReader(t *testing.T) {
	st := openStore(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, e := range []Entry{
		{User: "alice", Via: "http", Command: "create", Path: "/semantic/a.md", Ino: 10, Users: []string{"alice"}},
		{User: "bob", Via: "http", Command: "str_replace", Path: "/semantic/b.md", Ino: 11, Users: []string{"bob"}},
		{User: "", Via: "stdio", Command: "insert", Path: "/semantic/public.md", Ino: 12},
		{User: "alice", Via: "http", Command: "delete", Path: "/working/alice-dir"},
		{User: "", Via: "stdio", Command: "rename", Path: "/episodic/x", To: "/archive/x"},
		{User: "carol", Via: "http", Command: "create", Path: "/semantic/u.md", Ino: 13, Unsure: true},
		{User: "bob", Via: "http", Command: "create", Path: "/semantic/evil\n2026 alice over http: delete /x", Ino: 14, Users: []string{"bob"}},
	} {
		e.Time = at
		if err := Record(st, e); err != nil {
			t.Fatal(err)
		}
	}
	log := func(st *store.Store, may func(uint64) bool) string {
		b, err := Log(st, may)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	all := log(st, nil)
	want := `2026-01-02T03:04:05Z alice over http: create /semantic/a.md
2026-01-02T03:04:05Z bob over http: str_replace /semantic/b.md
2026-01-02T03:04:05Z (every user) over stdio: insert /semantic/public.md
2026-01-02T03:04:05Z alice over http: delete /working/alice-dir
2026-01-02T03:04:05Z (every user) over stdio: rename /episodic/x -> /archive/x
2026-01-02T03:04:05Z carol over http: create /semantic/u.md
2026-01-02T03:04:05Z bob over http: create "/semantic/evil\n2026 alice over http: delete /x"
`
	if all != want {
		t.Errorf("the log for every user:\n%s\nwant\n%s", all, want)
	}
	for user, lines := range map[string][]string{
		"alice": {"create /semantic/a.md", "insert /semantic/public.md", "delete /working/alice-dir"},
		"bob":   {"str_replace /semantic/b.md", "insert /semantic/public.md", `create "/semantic/evil`},
		"carol": {"insert /semantic/public.md"},
	} {
		v, err := st.ForUser(user)
		if err != nil {
			t.Fatal(err)
		}
		got := log(v, nil)
		if n := strings.Count(got, "\n"); n != len(lines) {
			t.Errorf("%s is shown %d entries, want %d:\n%s", user, n, len(lines), got)
		}
		for _, l := range lines {
			if !strings.Contains(got, l) {
				t.Errorf("%s is not shown %q:\n%s", user, l, got)
			}
		}
	}
	if got := log(st, func(ino uint64) bool { return ino == 12 }); got != "2026-01-02T03:04:05Z (every user) over stdio: insert /semantic/public.md\n" {
		t.Errorf("a restricted reader of the mount who may read public.md alone is shown:\n%s", got)
	}
}

// TestLogKeepsTheLast: the journal holds at most keep entries and a
// trim's worth more, and the log shows the last keep.
func TestLogKeepsTheLast(t *testing.T) {
	defer func(k, e int) { keep, trimEvery = k, e }(keep, trimEvery)
	keep, trimEvery = 50, 7
	st := openStore(t)
	for i := range 200 {
		if err := Record(st, Entry{User: "alice", Via: "http", Command: "create", Path: fmt.Sprintf("/p%03d", i), Ino: uint64(i + 1), Users: []string{"alice"}}); err != nil {
			t.Fatal(err)
		}
		entries, err := st.Journal(journal)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) > keep+trimEvery {
			t.Fatalf("after %d records the journal holds %d entries, want at most %d", i+1, len(entries), keep+trimEvery)
		}
	}
	b, err := Log(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != keep || !strings.HasSuffix(lines[0], "create /p150") || !strings.HasSuffix(lines[keep-1], "create /p199") {
		t.Errorf("the log shows %d lines, %q to %q; want the last %d, /p150 to /p199", len(lines), lines[0], lines[len(lines)-1], keep)
	}
}

// BenchmarkRecord: the cost one MCP change adds to record itself, with
// the log full, on Badger on disk: Record (a trim every trimEvery
// records) next to the store's AppendJournal (a scan of the journal at
// every entry), in the same run.
func BenchmarkRecord(b *testing.B) {
	kv, err := backend.OpenBadger(b.TempDir(), backend.Options{})
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(kv, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { st.Close(); kv.Close() }()
	e := Entry{User: "alice", Via: "http", Command: "str_replace", Path: "/semantic/notes.md", Ino: 42, Users: []string{"alice"}}
	for range keep {
		if err := Record(st, e); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("record", func(b *testing.B) {
		for b.Loop() {
			if err := Record(st, e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append-journal", func(b *testing.B) {
		v, _ := json.Marshal(e)
		for i := 0; b.Loop(); i++ {
			if err := st.AppendJournal(journal, fmt.Sprintf("z%09d", i), v, keep); err != nil {
				b.Fatal(err)
			}
		}
	})
}
