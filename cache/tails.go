package cache

import lru "github.com/hashicorp/golang-lru/v2"

// Tail is the last content chunk of a file as last committed.
type Tail struct {
	Index uint32
	Data  []byte // shared and never modified: copy before changing
	// Size is the file's committed size; Hash the SHA-256 state over it
	// (nil if unknown); Settled: appends cannot change its metadata.
	Size    uint64
	Hash    []byte
	Settled bool
}

// Tails keeps the last chunk of recently written files, so an append does
// not read back the chunk it is about to extend.
type Tails struct{ c *lru.Cache[uint64, Tail] }

// NewTails holds up to n files' tails.
func NewTails(n int) *Tails {
	c, err := lru.New[uint64, Tail](n)
	if err != nil {
		panic(err) // only for n <= 0
	}
	return &Tails{c: c}
}

// Get returns the cached tail of ino.
func (t *Tails) Get(ino uint64) (Tail, bool) { return t.c.Get(ino) }

// Set records the tail of ino.
func (t *Tails) Set(ino uint64, tail Tail) { t.c.Add(ino, tail) }

// Forget drops ino (its chunks changed some other way).
func (t *Tails) Forget(ino uint64) { t.c.Remove(ino) }

// Purge drops every tail.
func (t *Tails) Purge() { t.c.Purge() }
