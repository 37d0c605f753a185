package cache

import (
	"strings"
	"testing"
)

// TestStringsGetBytes: GetBytes answers as Get does, computes once, and
// keeps no view of the caller's bytes (a buffer reused after the call
// must not change what is cached under the old word).
func TestStringsGetBytes(t *testing.T) {
	calls := 0
	m := NewStrings(16, func(s string) string { calls++; return strings.ToUpper(s) })
	buf := []byte("walk")
	if got := m.GetBytes(buf); got != "WALK" {
		t.Fatalf("GetBytes(walk) = %q", got)
	}
	copy(buf, "talk") // the caller reuses its buffer
	if got := m.Get("walk"); got != "WALK" || calls != 1 {
		t.Fatalf("Get(walk) after the buffer changed = %q, %d calls (want WALK, 1: cached under a copy)", got, calls)
	}
	if got := m.GetBytes(buf); got != "TALK" || calls != 2 {
		t.Fatalf("GetBytes(talk) = %q, %d calls", got, calls)
	}
	if got := m.GetBytes([]byte("walk")); got != "WALK" || calls != 2 {
		t.Fatalf("GetBytes(walk) again = %q, %d calls (want the cached one)", got, calls)
	}
	if n := testing.AllocsPerRun(100, func() { m.GetBytes(buf) }); n != 0 {
		t.Errorf("GetBytes of a cached word allocates %v times, want 0", n)
	}
}
