package cache

import (
	"hash/maphash"
	"math/bits"
	"sync/atomic"
)

// Memo memoises a pure function of short strings (a tokenizer's
// stemmer) in a fixed table: each input hashes to one slot, which holds
// the last input seen there and its result. A lookup is a hash, an
// atomic load and a comparison, without a lock and without making a
// string of the caller's bytes; two inputs that share a slot take turns
// (the table is a bound, not an LRU: a tokenizer's words are looked up
// from every search and every write at once, and the LRU's lock and list
// were most of what tokenizing cost: BENCHMARKS.md).
type Memo struct {
	fn    func(string) string
	seed  maphash.Seed
	mask  uint64
	slots []atomic.Pointer[memoEntry]
}

type memoEntry struct{ in, out string }

// NewMemo returns a memo of fn with at least size slots (a power of two).
func NewMemo(size int, fn func(string) string) *Memo {
	n := 1 << bits.Len(uint(max(size, 2)-1))
	return &Memo{fn: fn, seed: maphash.MakeSeed(), mask: uint64(n - 1), slots: make([]atomic.Pointer[memoEntry], n)}
}

// GetBytes returns fn(string(b)), making that string only when b is not
// in the table. The result is never b's memory; b may be reused once it
// returns.
func (m *Memo) GetBytes(b []byte) string {
	slot := &m.slots[maphash.Bytes(m.seed, b)&m.mask]
	if e := slot.Load(); e != nil && e.in == string(b) {
		return e.out
	}
	in := string(b)
	out := m.fn(in)
	slot.Store(&memoEntry{in, out})
	return out
}
