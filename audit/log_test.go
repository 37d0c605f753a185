package audit

import (
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

// TestLogkeepsTheLast: past keep entries the oldest go.
func TestLogkeepsTheLast(t *testing.T) {
	defer func(k int) { keep = k }(keep)
	keep = 50
	st := openStore(t)
	for i := range keep + 3 {
		if err := Record(st, Entry{User: "alice", Via: "http", Command: "create", Path: "/p" + strings.Repeat("x", i%3), Ino: uint64(i + 1), Users: []string{"alice"}}); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := st.Journal(journal)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != keep {
		t.Errorf("the journal keeps %d entries, want %d", len(entries), keep)
	}
}
