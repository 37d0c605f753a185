package views

import (
	"errors"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store"
)

// engineStore is a running engine over a fresh in-memory store, both
// stopped and closed when the test ends.
func engineStore(t testing.TB) (*Engine, *store.Store) {
	t.Helper()
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(nil)
	st, err := store.Open(kv, store.Options{OnChange: e.Handle})
	if err != nil {
		kv.Close()
		t.Fatal(err)
	}
	e.Start(st)
	t.Cleanup(func() { e.Stop(); st.Close(); kv.Close() })
	return e, st
}

// writeFile creates name in dir of st with text as its content, through
// the calls the mount makes (create, open, write, release).
func writeFile(t testing.TB, st *store.Store, dir uint64, name, text string) uint64 {
	t.Helper()
	in, err := st.Create(dir, name, 0o644, store.Owner{})
	if err == nil {
		err = st.Open(in.Ino, false)
	}
	if err == nil {
		_, err = st.WriteAt(in.Ino, []byte(text), 0)
		err = errors.Join(err, st.Release(in.Ino))
	}
	if err != nil {
		t.Fatal(err)
	}
	return in.Ino
}
