package cache

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestMemo: GetBytes answers as fn does, compute a word once while
// it holds its slot, and keep no view of the caller's bytes (a buffer
// reused after the call must not change what is kept for the old word).
func TestMemo(t *testing.T) {
	calls := 0
	m := NewMemo(1024, func(s string) string { calls++; return strings.ToUpper(s) })
	buf := []byte("walk")
	if got := m.GetBytes(buf); got != "WALK" {
		t.Fatalf("GetBytes(walk) = %q", got)
	}
	copy(buf, "talk") // the caller reuses its buffer
	if got := m.GetBytes([]byte("walk")); got != "WALK" || calls != 1 {
		t.Fatalf("GetBytes(walk) after the buffer changed = %q, %d calls (want WALK from the table, 1 call)", got, calls)
	}
	if got := m.GetBytes(buf); got != "TALK" {
		t.Fatalf("GetBytes(talk) = %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { m.GetBytes(buf) }); n != 0 {
		t.Errorf("GetBytes of a word in the table allocates %v times, want 0", n)
	}
	if got := m.GetBytes(nil); got != "" {
		t.Errorf("GetBytes(nil) = %q", got)
	}
	// More words than slots: every answer is still fn's.
	small := NewMemo(4, func(s string) string { return s + "!" })
	for i := range 1000 {
		w := fmt.Sprint("w", i%37)
		if got := small.GetBytes([]byte(w)); got != w+"!" {
			t.Fatalf("GetBytes(%s) = %q in a full table", w, got)
		}
	}
}

// TestMemoConcurrent: lookups from many goroutines while slots are
// replaced always give fn's answer (run with -race).
func TestMemoConcurrent(t *testing.T) {
	m := NewMemo(8, func(s string) string { return "<" + s + ">" })
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				w := fmt.Sprint(g, "-", i%50)
				if got := m.GetBytes([]byte(w)); got != "<"+w+">" {
					t.Errorf("GetBytes(%s) = %q", w, got)
					return
				}
			}
		}()
	}
	wg.Wait()
}
