package blobfs

import (
	"syscall"
)

// Held descriptors. Each file the store keeps open past a request (the
// content file of an inode open for writing, a passthrough session's,
// the spare unnamed files) is a descriptor that callers, not the store,
// decide how many of there are: a program that opens files until EMFILE
// would take every descriptor of the process, and the KV (Badger) fails
// beyond repair when it cannot open its next memtable. So those are
// counted, and bounded (SetHeldMax: half the process's limit, Options),
// which keeps the rest for the KV, its logs and transient opens. Past the
// bound, Hold fails: a write that needs a content file gets ENFILE; past
// half of it, HoldSpare does: a passthrough session is not started (the
// daemon carries the data).

// SetHeldMax bounds the descriptors held (0: no bound).
func (b *Dir) SetHeldMax(n int) {
	b.mu.Lock()
	b.heldMax = n
	b.mu.Unlock()
}

// Hold counts one more held descriptor, or returns ENFILE past the
// bound. The caller gives it back with Unhold when it closes the file.
func (b *Dir) Hold() error { return b.hold(b.heldMax) }

// HoldSpare is Hold for a descriptor that only saves work (a passthrough
// session's, a spare unnamed file): it fails at half the bound, so that
// those never take what writes need.
func (b *Dir) HoldSpare() error { return b.hold(b.heldMax / 2) }

func (b *Dir) hold(most int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.heldMax > 0 && b.held >= most {
		return syscall.ENFILE
	}
	b.held++
	return nil
}

// Unhold gives back a descriptor counted by Hold.
func (b *Dir) Unhold() {
	b.mu.Lock()
	b.held--
	b.mu.Unlock()
}

// Held returns the descriptors held now.
func (b *Dir) Held() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}
