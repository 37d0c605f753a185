package cache

import (
	"unsafe"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Strings memoises a pure string function (such as a stemmer) for the most
// recently used inputs.
type Strings struct {
	fn func(string) string
	c  *lru.Cache[string, string]
}

// NewStrings returns a memo of fn holding up to size entries.
func NewStrings(size int, fn func(string) string) *Strings {
	c, err := lru.New[string, string](size)
	if err != nil {
		panic(err) // only for size <= 0
	}
	return &Strings{fn: fn, c: c}
}

// Get returns fn(s), computing it only when s is not cached.
func (m *Strings) Get(s string) string {
	if v, ok := m.c.Get(s); ok {
		return v
	}
	v := m.fn(s)
	m.c.Add(s, v)
	return v
}

// GetBytes is Get of string(b), without making that string when b is
// cached: a tokenizer's words are mostly ones it has seen, and a string a
// word was most of what tokenizing allocated. The result is the cached
// string (shared by every caller), never b's memory; b may be reused once
// it returns.
func (m *Strings) GetBytes(b []byte) string {
	if len(b) == 0 {
		return m.Get("")
	}
	// The cache only looks the key up (a map index and the list's move to
	// the front); nothing keeps it past the call.
	if v, ok := m.c.Get(unsafe.String(unsafe.SliceData(b), len(b))); ok {
		return v
	}
	s := string(b)
	v := m.fn(s)
	m.c.Add(s, v)
	return v
}
