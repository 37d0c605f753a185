package cache

import lru "github.com/hashicorp/golang-lru/v2"

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
