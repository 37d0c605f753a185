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
// for by the last one read, and that stand-in is not cached: the
// redaction rules hold through the failure (internal/rules has the rest).
func TestPolicyUnreadableIsNotCached(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bk, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
	must(t, err)
	kv := &viewsFail{KV: bk}
	s, err := Open(kv, Options{ScratchAge: -1})
	must(t, err)
	t.Cleanup(func() { s.Close(); bk.Close() })
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
	if _, err := s.Setting(policySetting); errors.Is(err, backend.ErrUnavailable) {
		t.Fatal(err)
	}
}
