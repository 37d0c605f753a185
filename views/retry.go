package views

import (
	"errors"
	"sync"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store"
)

// Memories whose refresh failed because the store's backend did not
// answer (a shared store's cluster down) are refreshed again a second
// later, and again, until it answers: the views catch up by themselves
// after an outage instead of keeping what they had, or nothing.

type retries struct {
	mu    sync.Mutex
	inos  map[uint64]bool
	timer *time.Timer
}

// unavailable reports whether err is the backend's not answering; if so,
// ino is refreshed again later.
func (ix *indexer) unavailable(ino uint64, err error) bool {
	if !errors.Is(err, backend.ErrUnavailable) {
		return false
	}
	r := &ix.retry
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inos == nil {
		r.inos = map[uint64]bool{}
	}
	r.inos[ino] = true
	if r.timer == nil {
		r.timer = time.AfterFunc(time.Second, ix.retryNow)
	}
	return true
}

func (ix *indexer) retryNow() {
	r := &ix.retry
	r.mu.Lock()
	ch := make([]store.Change, 0, len(r.inos))
	for ino := range r.inos {
		ch = append(ch, store.Change{Kind: store.Changed, Ino: ino})
	}
	r.inos, r.timer = nil, nil
	r.mu.Unlock()
	ix.w.handle(ch)
}

// retrying reports memories waiting to be refreshed again.
func (ix *indexer) retrying() bool { return ix.retry.pending() }

// pending reports memories waiting to be refreshed again.
func (r *retries) pending() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.inos) > 0
}
