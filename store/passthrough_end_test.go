package store

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"
)

// ptWritten creates working/name, writes data into it as the kernel does
// in a passthrough session, and releases it; the session lingers. fsync
// commits before the release, as a writer's fsync would.
func ptWritten(t *testing.T, s *Store, name string, data []byte, fsync bool) uint64 {
	t.Helper()
	w, err := s.Lookup(RootIno, "working")
	must(t, err)
	i, err := s.Create(w.Ino, name, 0o644, Owner{})
	must(t, err)
	must(t, s.Open(i.Ino, false))
	bf := s.Passthrough(i.Ino, PTCreate, true, false)
	if bf == nil {
		t.Fatal("no session for a file just created")
	}
	_, err = bf.WriteAt(data, 0) // the kernel's write
	must(t, err)
	if fsync {
		must(t, s.Fsync(i.Ino))
	}
	s.PassthroughClosed(i.Ino) // as fusefs does for a writing handle
	must(t, s.Release(i.Ino))
	return i.Ino
}

// TestOpenWaitsForSessionEnd: an open that comes while a lingering
// passthrough session is being ended waits for the end, rather than making
// a second open state from the committed inode. With two, the ending
// session's commit pointed the inode back at the blob generation the other
// had just replaced by copy on write, which the next sync deleted: the
// file's content was gone (the SIGKILL crash test found it under load).
func TestOpenWaitsForSessionEnd(t *testing.T) {
	s, kv := openPT(t, t.TempDir())
	defer kv.Close()
	defer s.Close()
	old := bytes.Repeat([]byte("0123456789abcdef"), 200<<10/16) // larger than a chunk: linked as a blob
	ino := ptWritten(t, s, "big.bin", old, true)

	// While the session ends, another handle overwrites the middle (copy
	// on write to the next generation) and fsyncs.
	patch := bytes.Repeat([]byte("X"), 4096)
	want := bytes.Clone(old)
	copy(want[1000:], patch)
	other := make(chan error, 1)
	finishedEarly := false
	hook := func(ended uint64) {
		if ended != ino {
			return
		}
		go func() {
			if err := s.Open(ino, false); err != nil {
				other <- err
				return
			}
			_, err := s.WriteAt(ino, patch, 1000)
			if err == nil {
				err = s.Fsync(ino)
			}
			if rerr := s.Release(ino); err == nil {
				err = rerr
			}
			other <- err
		}()
		select {
		case err := <-other:
			finishedEarly = true
			other <- err
		case <-time.After(300 * time.Millisecond):
		}
	}
	testHookEnding.Store(&hook)
	defer testHookEnding.Store(nil)
	s.endSessions(0)
	testHookEnding.Store(nil)
	select {
	case err := <-other:
		must(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the other handle is still waiting 10 s after the session ended")
	}
	if finishedEarly {
		t.Error("an open went ahead while the session of its inode was ending")
	}
	s.endSessions(0)
	must(t, s.Sync()) // deletes the replaced generations
	if got := readAll(t, s, ino); !bytes.Equal(got, want) {
		t.Fatalf("content after the overwrite: %d bytes, equal to the old content: %v", len(got), bytes.Equal(got, old))
	}
	a, err := s.Attr(ino)
	must(t, err)
	if a.Blob == 0 {
		t.Fatal("large content not in a blob")
	}
	if _, err := os.Stat(s.blobs.Path(ino, a.Blob)); err != nil {
		t.Fatalf("the committed blob generation %d: %v", a.Blob, err)
	}
	fsckClean(t, s)
}

// TestReleasedAgainLingersAnew: a session that endSessions found due, but
// which was reopened and released again before its turn came, lingers
// anew instead of ending at once (go-fuse may still hand its backing
// file to the next open).
func TestReleasedAgainLingersAnew(t *testing.T) {
	s, kv := openPT(t, t.TempDir())
	defer kv.Close()
	defer s.Close()
	inos := []uint64{ptWritten(t, s, "a", []byte("hello"), false), ptWritten(t, s, "b", []byte("hello"), false)}
	time.Sleep(60 * time.Millisecond)
	var other uint64
	hook := func(ino uint64) {
		if other != 0 {
			return
		}
		other = inos[0]
		if ino == inos[0] {
			other = inos[1]
		}
		must(t, s.Open(other, false)) // revives the session
		must(t, s.Release(other))     // which lingers again from now
	}
	testHookEnding.Store(&hook)
	defer testHookEnding.Store(nil)
	s.endSessions(50 * time.Millisecond)
	testHookEnding.Store(nil)
	s.filesMu.Lock()
	still := s.lingeringLocked(other) != nil
	s.filesMu.Unlock()
	if !still {
		t.Errorf("the session of inode %d, released again just now, ended without lingering", other)
	}
}

// TestOverwriteAfterSessionEnd: an import overwrite whose Open waited for
// a session to end works on the inode as the end left it (the end folded
// the truncated content back into the KV and retired the blob), not on
// the one it read before.
func TestOverwriteAfterSessionEnd(t *testing.T) {
	s, kv := openPT(t, t.TempDir())
	defer kv.Close()
	defer s.Close()
	ino := ptWritten(t, s, "log", bytes.Repeat([]byte("x"), 200<<10), false)
	s.endSessions(0)
	// An append session, truncated to zero in place.
	must(t, s.Open(ino, false))
	if s.Passthrough(ino, PTAppend, true, true) == nil {
		t.Fatal("no session for an append to a blob")
	}
	must(t, s.Truncate(ino, 0))
	must(t, s.Release(ino))
	done := make(chan error, 1)
	hook := func(ended uint64) {
		if ended != ino {
			return
		}
		go func() { done <- s.overwrite(ino, []byte("new content")) }()
		time.Sleep(100 * time.Millisecond) // the overwrite's Open waits
	}
	testHookEnding.Store(&hook)
	defer testHookEnding.Store(nil)
	s.endSessions(0)
	testHookEnding.Store(nil)
	must(t, <-done)
	must(t, s.Sync()) // deletes the retired generations
	if got := readAll(t, s, ino); string(got) != "new content" {
		t.Errorf("content after the overwrite and a sync: %q", got)
	}
	fsckClean(t, s)
}

// TestDeferredCommitOfLingeringSession: the xattrs of a file whose last
// close left its commit for later (an append soon after the previous
// commit) and whose session now lingers report the appended content: the
// sha256 agrees with the size.
func TestDeferredCommitOfLingeringSession(t *testing.T) {
	t.Parallel()
	s, kv := openPT(t, t.TempDir())
	defer kv.Close()
	defer s.Close()
	data := bytes.Repeat([]byte("event\n"), 7000) // 42 KB: a blob
	ino := ptWritten(t, s, "events.log", data, false)
	must(t, s.Open(ino, false)) // an append joins the lingering session
	bf := s.Passthrough(ino, PTAppend, true, true)
	if bf == nil {
		t.Fatal("an append did not join the session")
	}
	_, err := bf.WriteAt([]byte("late\n"), int64(len(data)))
	must(t, err)
	data = append(data, "late\n"...)
	must(t, s.Release(ino)) // within ptDefer of the commit: deferred
	size, err := s.GetXattr(ino, SystemXattrPrefix+"size")
	must(t, err)
	sum, err := s.GetXattr(ino, SystemXattrPrefix+"sha256")
	must(t, err)
	if string(size) != strconv.Itoa(len(data)) || string(sum) != sha(data) {
		t.Errorf("xattrs size %s sha256 %s, want %d %s", size, sum, len(data), sha(data))
	}
}

// TestGenerationNotReusedBeforeSync: a session's small content moved back
// into the KV retires the blob generation it was in; a write that moves
// the content out to a blob again before the next sync must not take that
// generation, which the sync deletes. (The model test found it: after a
// remount the file's content file was missing.)
func TestGenerationNotReusedBeforeSync(t *testing.T) {
	s, kv := openPT(t, t.TempDir())
	defer kv.Close()
	defer s.Close()
	ino := ptWritten(t, s, "f", bytes.Repeat([]byte("x"), 200<<10), false)
	s.endSessions(0)
	must(t, s.Open(ino, false))
	if s.Passthrough(ino, PTAppend, true, true) == nil {
		t.Fatal("no session for an append to a blob")
	}
	must(t, s.Truncate(ino, 10))
	must(t, s.Release(ino))
	s.endSessions(0) // settles: the ten bytes go into the KV, the blob is retired
	if i, err := s.inode(ino); err != nil || s.blobGenOf(i) != 0 {
		t.Fatalf("after the session's end the content should be in the KV: %+v %v", i, err)
	}
	big := bytes.Repeat([]byte("y"), 300<<10)
	must(t, s.overwrite(ino, big))
	must(t, s.Sync()) // deletes the retired generation
	if got := readAll(t, s, ino); !bytes.Equal(got, big) {
		t.Errorf("content after the rewrite and a sync: %d bytes, want %d", len(got), len(big))
	}
	fsckClean(t, s)
}
