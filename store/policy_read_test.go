package store

import (
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
)

// viewsFail is a KV whose reads fail while fail is set (a shared store's
// cluster out of reach).
type viewsFail struct {
	backend.KV
	fail atomic.Bool
}

func (k *viewsFail) View(fn func(backend.Txn) error) error {
	if k.fail.Load() {
		return backend.ErrUnavailable
	}
	return k.KV.View(fn)
}

// TestPolicyUnreadableIsNotCached: a policy that cannot be read is stood in
// for by the last one read (else the defaults), and that stand-in is not
// cached: the redaction rules hold through the failure and, for a store
// that never read its policy, apply as soon as it can be read.
func TestPolicyUnreadableIsNotCached(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bk, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
	must(t, err)
	kv := &viewsFail{KV: bk}
	s, err := Open(kv, Options{ScratchAge: -1})
	must(t, err)
	must(t, s.SetPolicy([]byte("redact:\n  - {name: ticket, pattern: 'TICKET-[0-9]{6}', mode: store}\n")))
	if s.Redactor() == nil {
		t.Fatal("no redactor after setting a rule")
	}
	// Another host changed the policy (dropPolicy), and the cluster is
	// out of reach when it is read again: the last rules stand.
	s.dropPolicy()
	kv.fail.Store(true)
	if s.Redactor() == nil {
		t.Error("while the policy cannot be read, the redaction rules are gone")
	}
	kv.fail.Store(false)
	must(t, s.Close())
	must(t, bk.Close())

	// A store that has not read its policy yet: the defaults while it
	// cannot, the stored rules once it can.
	bk, err = backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
	must(t, err)
	kv = &viewsFail{KV: bk}
	s, err = Open(kv, Options{ScratchAge: -1})
	must(t, err)
	t.Cleanup(func() { s.Close(); kv.KV.Close() })
	s.dropPolicy()
	s.polLast.Store(nil)
	kv.fail.Store(true)
	if s.Redactor() != nil {
		t.Error("a redactor from a policy that could not be read")
	}
	kv.fail.Store(false)
	if s.Redactor() == nil {
		t.Error("the stand-in defaults were cached: the stored rules do not apply once the policy can be read")
	}
	if _, err := s.Setting(policySetting); errors.Is(err, backend.ErrUnavailable) {
		t.Fatal(err)
	}
}
