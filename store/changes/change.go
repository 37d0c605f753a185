package changes

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

// Change is one event for the store's Options.OnChange. Handlers re-read what they need
// from the store, so events may be merged or arrive out of order.
type Change struct {
	Kind ChangeKind
	Ino  uint64
	// From, for Changed, is the offset before which nothing changed (an
	// append); 0 means the whole content may have changed.
	From uint64
}
