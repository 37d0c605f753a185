package store

// ChangeKind says what happened to a memory.
type ChangeKind int

const (
	// Changed: content or metadata committed, or a new memory.
	Changed ChangeKind = iota
	// Moved: the memory has a new path (rename, trash, or a parent's rename).
	Moved
	// Removed: the memory is gone for good.
	Removed
	// Reindexed: which files are memories may have changed for every
	// memory at once (the policy's ignore rules changed; Ino is 0):
	// handlers rebuild what they derived.
	Reindexed
)

// Change is one event for Options.OnChange. Handlers re-read what they need
// from the store, so events may be merged or arrive out of order.
type Change struct {
	Kind ChangeKind
	Ino  uint64
	// From, for Changed, is the offset before which nothing changed (an
	// append); 0 means the whole content may have changed.
	From uint64
}

// event records a change to deliver when mu is released. Caller holds mu.
func (s *Store) event(kind ChangeKind, ino uint64) {
	if s.opts.OnChange != nil {
		s.events = append(s.events, Change{Kind: kind, Ino: ino})
	}
}

// eventFrom records a content change at or after offset from. Caller holds mu.
func (s *Store) eventFrom(ino, from uint64) {
	if s.opts.OnChange != nil {
		s.events = append(s.events, Change{Kind: Changed, Ino: ino, From: from})
	}
}

// unlock releases mu and then delivers the events recorded under it, so
// handlers may call back into the store. Callers that still hold an
// openFile.mu use unlockKeep and deliver after releasing it.
func (s *Store) unlock() { s.deliver(s.unlockKeep()) }

// unlockKeep releases mu and returns the events recorded under it.
func (s *Store) unlockKeep() []Change {
	ev := s.events
	s.events = nil
	if len(ev) > 0 {
		s.delivering.Add(1) // until deliver (Settled)
	}
	s.mu.Unlock()
	return ev
}

// deliver hands events to the handler. No store lock may be held.
func (s *Store) deliver(ev []Change) {
	if len(ev) > 0 {
		s.opts.OnChange(ev)
		s.delivering.Add(-1)
	}
}
