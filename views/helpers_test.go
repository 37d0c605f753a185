package views

import (
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
