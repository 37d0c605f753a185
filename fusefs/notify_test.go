package fusefs

import (
	"testing"
	"time"
)

// TestContentPending: a queued content invalidation marks its inode until
// the notifier has sent it, so that an open meanwhile drops the kernel's
// cached pages instead of keeping them.
func TestContentPending(t *testing.T) {
	n := NewNotifier()
	n.mu.Lock()
	n.fsys = &FS{} // attached, not yet sending
	n.mu.Unlock()
	n.Content(5)
	n.Content(5)
	n.Entry(5, "x")
	if !n.ContentPending(5) {
		t.Fatal("a queued content invalidation is not pending")
	}
	if n.ContentPending(6) {
		t.Fatal("an inode with nothing queued is pending")
	}
	// A full queue drops an invalidation: the next open is told once.
	for len(n.queue) < 1<<16 {
		n.Entry(1, "y")
	}
	n.Content(7)
	if !n.ContentPending(7) || n.ContentPending(7) {
		t.Fatal("a dropped content invalidation is not reported once")
	}
	go n.run()
	defer n.stop()
	deadline := time.Now().Add(5 * time.Second)
	for n.ContentPending(5) {
		if time.Now().After(deadline) {
			t.Fatal("still pending 5 s after the notifier started sending")
		}
		time.Sleep(time.Millisecond)
	}
}
