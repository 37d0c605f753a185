package access

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/mnemofs/mnemofs/backend"
)

// Stat is the accesses of one inode not stored yet: when the last was
// (unix ns), and how many.
type Stat struct {
	Last  int64
	Count int64
}

// Counts are the access statistics not stored yet, per inode. Its zero
// value is ready.
type Counts struct {
	mu sync.Mutex
	m  map[uint64]Stat
	// limit, when set, is fewer records a transaction than Flush's 256:
	// the engine refused more.
	limit atomic.Int32
}

// Touch counts an access to ino at now (unix ns).
func (c *Counts) Touch(ino uint64, now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[uint64]Stat{}
	}
	a := c.m[ino]
	a.Last = now
	a.Count++
	c.m[ino] = a
}

// Pending returns the accesses to ino not stored yet.
func (c *Counts) Pending(ino uint64) (Stat, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[ino]
	return a, ok
}

// Take returns the accesses to ino not stored yet and forgets them: the
// caller stores them (a save hands a memory's accesses to its new inode).
func (c *Counts) Take(ino uint64) (Stat, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.m[ino]
	delete(c.m, ino)
	return a, ok
}

// Flush stores the pending statistics through write, which adds those of
// the inodes given to their records in one transaction (skipping an inode
// removed meanwhile). What write fails to store is pending again.
func (c *Counts) Flush(write func(inos []uint64, pending map[uint64]Stat) error) error {
	c.mu.Lock()
	pending := c.m
	c.m = map[uint64]Stat{}
	c.mu.Unlock()
	inos := make([]uint64, 0, len(pending))
	for ino := range pending {
		inos = append(inos, ino)
	}
	// A few hundred records per transaction: within Badger's limit, and
	// writers wait for one slice at a time, not for all of them; fewer
	// when the engine's limit is lower (etcd: 128 operations).
	perTxn := 256
	if n := c.limit.Load(); n > 0 {
		perTxn = int(n) // learned from the engine's refusal
	}
	for len(inos) > 0 {
		part := inos[:min(perTxn, len(inos))]
		err := write(part, pending)
		if errors.Is(err, backend.ErrTxnTooBig) && len(part) > 1 {
			perTxn = len(part) / 2
			c.limit.Store(int32(perTxn))
			continue
		}
		if err != nil {
			c.requeue(inos, pending)
			return err
		}
		inos = inos[len(part):]
	}
	return nil
}

// requeue puts back access statistics that could not be saved.
func (c *Counts) requeue(inos []uint64, pending map[uint64]Stat) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[uint64]Stat{}
	}
	for _, ino := range inos {
		a, b := c.m[ino], pending[ino]
		c.m[ino] = Stat{Last: max(a.Last, b.Last), Count: a.Count + b.Count}
	}
}
