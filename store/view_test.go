package store

import (
	"errors"
	"reflect"
	"syscall"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
)

// sharedLog is a log with lines of alice, of bob, public ones and one
// that does not parse (no one's: shown to no user).
const sharedLog = `{"user":"alice","text":"alice one"}
{"user":"bob","text":"bob secret"}
{"text":"for everyone"}
not json at all, naming bob
{"user":"alice","text":"alice two"}
`

// TestViewIsolatesAsAUserStore: a view for alice of a store open for
// every user shows what a store opened for alice shows (listings, reads,
// a shared log's lines, errors), its writes are the store's at once and
// alice's, and it cannot widen a store opened for one user or close the
// store.
func TestViewIsolatesAsAUserStore(t *testing.T) {
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	must(t, err)
	defer kv.Close()
	s, err := Open(kv, Options{})
	must(t, err)
	sem, err := s.Lookup(RootIno, "semantic")
	must(t, err)
	bob := writeFile(t, s, sem.Ino, "bob.md", []byte("---\nuser: bob\n---\nbob's secret\n"))
	writeFile(t, s, sem.Ino, "alice.md", []byte("---\nuser: alice\n---\nalice's note\n"))
	pub := writeFile(t, s, sem.Ino, "public.md", []byte("for all\n"))
	logIno := writeFile(t, s, sem.Ino, "turns.jsonl", []byte(sharedLog))

	v, err := s.ForUser("alice")
	must(t, err)
	if _, err := v.Lookup(sem.Ino, "bob.md"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("alice's view looks up bob.md: %v, want ENOENT", err)
	}
	if _, err := s.Lookup(sem.Ino, "bob.md"); err != nil {
		t.Errorf("the store itself lost bob.md: %v", err)
	}
	wantLog := "{\"user\":\"alice\",\"text\":\"alice one\"}\n{\"text\":\"for everyone\"}\n{\"user\":\"alice\",\"text\":\"alice two\"}\n"
	if got := string(readAll(t, v, logIno)); got != wantLog {
		t.Errorf("alice's view of the shared log:\n%q\nwant\n%q", got, wantLog)
	}
	for n, want := range map[uint32]bool{1: true, 2: false, 3: true, 4: false, 5: true, 6: false} {
		if got := v.SeesLine(logIno, n); got != want {
			t.Errorf("SeesLine(log, %d) = %v, want %v", n, got, want)
		}
	}
	if v.SeesLine(bob, 0) || !v.SeesLine(pub, 0) || !s.SeesLine(bob, 0) {
		t.Errorf("SeesLine of whole memories: bob.md %v (want false), public.md %v, bob.md for everyone %v", v.SeesLine(bob, 0), v.SeesLine(pub, 0), s.SeesLine(bob, 0))
	}
	if err := v.Open(pub, false); !errors.Is(err, syscall.EACCES) {
		t.Errorf("alice's view opens public.md for writing: %v, want EACCES", err)
		if err == nil {
			v.Release(pub)
		}
	}

	// A write through the view: the store has it at once, as alice's.
	mine := writeFile(t, v, sem.Ino, "mine.md", []byte("---\nuser: bob\n---\nwritten by alice\n"))
	in, err := s.Info(mine)
	must(t, err)
	if !reflect.DeepEqual(in.Users, []string{"alice"}) {
		t.Errorf("a memory written through alice's view belongs to %v, want [alice]", in.Users)
	}
	if got := string(readAll(t, s, mine)); got != "---\nuser: bob\n---\nwritten by alice\n" {
		t.Errorf("the store reads %q", got)
	}

	viewList := names(t, v, sem.Ino)
	viewLog := readAll(t, v, logIno)
	if err := v.Close(); err == nil {
		t.Errorf("closing a view succeeded")
	}
	if _, err := s.Lookup(sem.Ino, "alice.md"); err != nil {
		t.Fatalf("the store after a view's Close: %v", err)
	}
	if _, err := v.ForUser("bob"); err == nil {
		t.Errorf("alice's view made a view for bob")
	}
	must(t, s.Close())

	// The same KV opened for alice shows what the view showed.
	a, err := Open(kv, Options{User: "alice"})
	must(t, err)
	defer a.Close()
	if got := names(t, a, sem.Ino); !reflect.DeepEqual(got, viewList) {
		t.Errorf("a store opened for alice lists %v, the view listed %v", got, viewList)
	}
	if got := readAll(t, a, logIno); string(got) != string(viewLog) {
		t.Errorf("a store opened for alice reads the log as %q, the view as %q", got, viewLog)
	}
	if _, err := a.ForUser("bob"); err == nil {
		t.Errorf("a store opened for alice made a view for bob")
	}
	if w, err := a.ForUser("alice"); err != nil || w.User() != "alice" {
		t.Errorf("a store opened for alice: view for alice %v, %v", w, err)
	}
}

func names(t *testing.T, s *Store, dir uint64) []string {
	t.Helper()
	ents, err := s.ReadDir(dir)
	must(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name)
	}
	return out
}
