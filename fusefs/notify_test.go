package fusefs

import (
	"os"
	"testing"
	"time"
)

// TestContentPending: a queued content invalidation marks its inode until
// the notifier has sent it, so that an open meanwhile drops the kernel's
// cached pages instead of keeping them.
func TestContentPending(t *testing.T) {
	t.Parallel()
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

// TestNotifyAfterReaddirplus: a file the kernel knows from its create,
// listed again (READDIRPLUS looks it up once more, and go-fuse drops the
// node that lookup built) and read (cached pages), then changed behind the
// kernel's back and announced: the next read through the mount sees the
// change, and so does a stat of a name removed behind its back. (The
// notifications once went to the dropped node, and were lost.)
func TestNotifyAfterReaddirplus(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("semantic/k.md")
	if err := os.WriteFile(p, []byte("old content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tf.path("semantic/gone.md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := os.ReadDir(tf.path("semantic")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(tf.path("semantic/gone.md")); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := tf.st.Resolve("/semantic")
	if err != nil {
		t.Fatal(err)
	}
	i, err := tf.st.Lookup(dir, "k.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := tf.st.Open(i.Ino, false); err != nil {
		t.Fatal(err)
	}
	if _, err := tf.st.WriteAt(i.Ino, []byte("new"), 0); err != nil {
		t.Fatal(err)
	}
	if err := tf.st.Release(i.Ino); err != nil {
		t.Fatal(err)
	}
	tf.st.NotifyContent(i.Ino)
	if _, err := tf.st.Remove(dir, "gone.md"); err != nil {
		t.Fatal(err)
	}
	tf.st.NotifyEntry(dir, "gone.md")
	tf.st.NotifyDrain()
	if b, err := os.ReadFile(p); err != nil || string(b) != "new content\n" {
		t.Errorf("after a change behind the kernel's back: %q, %v; want %q", b, err, "new content\n")
	}
	if _, err := os.Stat(tf.path("semantic/gone.md")); !os.IsNotExist(err) {
		t.Errorf("a name removed behind the kernel's back: %v, want ENOENT", err)
	}
}
