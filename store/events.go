package store

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
		s.changes.Taken() // until deliver (Settled)
	}
	s.mu.Unlock()
	return ev
}

// deliver hands events to the handler. No store lock may be held.
func (s *Store) deliver(ev []Change) {
	if len(ev) > 0 {
		s.opts.OnChange(ev)
		s.changes.Handed()
	}
}
