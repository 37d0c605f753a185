package store

import "syscall"

// What callers other than the kernel need: they check before they change,
// and announce what they changed.
//
// Changes made through the store's API by a caller other than the kernel
// (the MCP server running inside a mount process) never pass through the
// kernel, so its caches (dentries, attributes, pages) do not see them: the
// caller announces each change here, and the mount's Notifier (Options.Notify)
// invalidates what the kernel may hold. Without a Notifier these are no-ops.

// Drainer is a Notifier that can wait until what it was told has reached
// the kernel.
type Drainer interface {
	// Drain returns once every invalidation queued before the call has been
	// sent (or could not be), or after a bounded wait.
	Drain()
}

// NotifyEntry announces that the name parent/name changed (created,
// removed, renamed, or its node's attributes changed).
func (s *Store) NotifyEntry(parent uint64, name string) { s.notifyEntry(parent, name) }

// NotifyContent announces that the content and attributes of ino changed.
func (s *Store) NotifyContent(ino uint64) { s.notifyContent(ino) }

// NotifyDrain waits, when the Notifier is a Drainer, until the changes
// announced so far have reached the kernel: a reader through the mount
// right after then sees them. Call it with no store lock held.
func (s *Store) NotifyDrain() {
	if d, ok := s.opts.Notify.(Drainer); ok {
		d.Drain()
	}
}

// IsReserved reports whether name is reserved at the root (a tree the
// layer above generates, such as meta/).
func (s *Store) IsReserved(name string) bool { return s.opts.Reserved[name] }

// MayChange returns nil when the store's user may change the node ino:
// EROFS for a read-only store, EACCES for a memory that is not the user's
// own, ENOENT for one the user does not see.
func (s *Store) MayChange(ino uint64) error { return s.mayChange(ino) }

// MayRemoveTree returns nil when the store's user may remove the directory
// dir with everything below it: EROFS for a read-only store, EACCES when a
// memory below is not the user's own (hidden ones included, so a caller can
// refuse before it changes anything).
func (s *Store) MayRemoveTree(dir uint64) error {
	if s.opts.ReadOnly {
		return syscall.EROFS
	}
	s.mu.Lock()
	defer s.unlock()
	return s.mayMoveTree(dir)
}
