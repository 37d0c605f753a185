package store

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestVacatedNotesExpire: the notes of names memories left stay for
// saveWindow and go after it, a name noted again keeps its newer note, and
// a burst of removals keeps one queue entry a note (no rescans).
func TestVacatedNotesExpire(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	s := newStore(t, Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range 1000 {
		s.vacate(RootIno, "a.md", uint64(100+i)) // the same name, again and again
		s.vacate(RootIno, "b"+string(rune('a'+i%26))+".md", uint64(5000+i))
		clock.Add(int64(time.Millisecond))
	}
	if v := s.vacated[entryName{RootIno, "a.md"}]; v.ino != 1099 {
		t.Errorf("a.md: the note of inode %d, want the newest, 1099", v.ino)
	}
	if n := len(s.vacated); n != 27 {
		t.Errorf("%d notes, want 27 names", n)
	}
	clock.Add(int64(saveWindow) + 1)
	s.vacate(RootIno, "c.md", 9)
	if len(s.vacated) != 1 || len(s.vacatedQ) != 1 {
		t.Errorf("after the window: %d notes, %d queued; want only c.md's", len(s.vacated), len(s.vacatedQ))
	}
}
