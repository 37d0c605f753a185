package store

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

// openPT opens a store with blobs in dir/blobs and passthrough sessions on.
func openPT(t *testing.T, dir string) (*Store, backend.KV) {
	t.Helper()
	kv, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
	must(t, err)
	s, err := Open(kv, Options{BlobDir: filepath.Join(dir, "blobs"), ScratchAge: -1})
	must(t, err)
	s.EnablePassthrough()
	return s, kv
}

// TestPassthroughSessionStore drives a session as the kernel would: the
// content file is written directly, the store learns of it by fstat.
func TestPassthroughSessionStore(t *testing.T) {
	t.Parallel()
	s, kv := openPT(t, t.TempDir())
	defer kv.Close()
	defer s.Close()
	w, err := s.Lookup(RootIno, "working")
	must(t, err)

	// Not under an in-place tree: no session.
	sem, err := s.Lookup(RootIno, "semantic")
	must(t, err)
	i, err := s.Create(sem.Ino, "fact.md", 0o644, Owner{})
	must(t, err)
	must(t, s.Open(i.Ino, false))
	if s.Passthrough(i.Ino, PTCreate, true, false) != nil {
		t.Error("a session under semantic/ (versioned)")
	}
	must(t, s.Release(i.Ino))

	i, err = s.Create(w.Ino, "notes.txt", 0o644, Owner{})
	must(t, err)
	must(t, s.Open(i.Ino, true))
	bf := s.Passthrough(i.Ino, PTCreate, true, false)
	if bf == nil {
		t.Fatal("no session for a file just created")
	}
	// A second handle joins; Passthrough hands it the same file.
	must(t, s.Open(i.Ino, true))
	if s.Passthrough(i.Ino, PTNone, false, false) != bf {
		t.Error("a second open does not join the session")
	}
	must(t, s.Release(i.Ino))
	_, err = bf.WriteAt([]byte("kernel bytes"), 0)
	must(t, err)
	if a, err := s.Attr(i.Ino); err != nil || a.Size != 12 {
		t.Fatalf("attr after a kernel write: %+v, %v", a, err)
	}
	if got := readAll(t, s, i.Ino); string(got) != "kernel bytes" {
		t.Fatalf("read through the store: %q", got)
	}
	must(t, s.Release(i.Ino))
	s.endSessions(0)
	if got := readAll(t, s, i.Ino); string(got) != "kernel bytes" {
		t.Fatalf("after the session: %q", got)
	}
	if a, _ := s.Attr(i.Ino); a.Blob != 0 {
		t.Errorf("small content still in blob %d after the session", a.Blob)
	}
	if in, err := s.Info(i.Ino); err != nil || in.SHA256 != sha([]byte("kernel bytes")) {
		t.Errorf("sha256 %q, %v", in.SHA256, err)
	}
	fsckClean(t, s)
}

// TestPassthroughCrashRecovery: a large file committed by fsync and then
// changed in place by the kernel (no commit after) is set right when the
// store opens again without having been closed.
func TestPassthroughCrashRecovery(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, kv := openPT(t, dir)
	w, err := s.Lookup(RootIno, "working")
	must(t, err)
	i, err := s.Create(w.Ino, "big.bin", 0o644, Owner{})
	must(t, err)
	must(t, s.Open(i.Ino, false))
	bf := s.Passthrough(i.Ino, PTCreate, true, false)
	if bf == nil {
		t.Fatal("no session")
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 5<<16) // 5 MiB: hashed later
	_, err = bf.WriteAt(data, 0)
	must(t, err)
	must(t, s.Fsync(i.Ino))
	if in, _ := s.Info(i.Ino); in.SHA256 != "" || in.Size != uint64(len(data)) {
		t.Fatalf("after fsync: size %d sha %q (want the size, the hash left for later)", in.Size, in.SHA256)
	}
	copy(data[10:], "changed in place")
	_, err = bf.WriteAt(data[10:26], 10)
	must(t, err)
	// The process dies here: no Release, no Close of the store.
	must(t, kv.Close())

	s2, kv2 := openPT(t, dir)
	defer kv2.Close()
	defer s2.Close()
	in, err := s2.Info(i.Ino)
	must(t, err)
	if in.SHA256 != sha(data) {
		t.Errorf("sha256 after the restart %q, want %q (the blob's content)", in.SHA256, sha(data))
	}
	if got := readAll(t, s2, i.Ino); !bytes.Equal(got, data) {
		t.Errorf("content after the restart: %d bytes", len(got))
	}
	fsckClean(t, s2)
}

// TestDeferredAppendAdopted: a close soon after a commit leaves its commit
// for later; if the process dies first, the next start keeps what the
// kernel appended.
func TestDeferredAppendAdopted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, kv := openPT(t, dir)
	w, err := s.Lookup(RootIno, "working")
	must(t, err)
	i, err := s.Create(w.Ino, "events.log", 0o644, Owner{})
	must(t, err)
	must(t, s.Open(i.Ino, false))
	bf := s.Passthrough(i.Ino, PTCreate, true, false)
	if bf == nil {
		t.Fatal("no session")
	}
	data := bytes.Repeat([]byte("event\n"), 7000) // 42 KB: a blob
	_, err = bf.WriteAt(data, 0)
	must(t, err)
	s.PassthroughClosed(i.Ino)
	must(t, s.Flush(i.Ino)) // commits: links the blob, sets the mark
	rec, err := s.storedRecordLocked(i.Ino)
	must(t, err)
	_, err = bf.WriteAt([]byte("late\n"), int64(len(data)))
	must(t, err)
	data = append(data, "late\n"...)
	must(t, s.Flush(i.Ino)) // within ptDefer: no commit
	if r2, _ := s.storedRecordLocked(i.Ino); r2.Version != rec.Version {
		t.Fatalf("the second close committed (version %d → %d): nothing was deferred", rec.Version, r2.Version)
	}
	if a, _ := s.Attr(i.Ino); a.Size != uint64(len(data)) {
		t.Errorf("attr size %d, want %d (the content file is current)", a.Size, len(data))
	}
	must(t, kv.Close()) // the process dies

	s2, kv2 := openPT(t, dir)
	defer kv2.Close()
	defer s2.Close()
	in, err := s2.Info(i.Ino)
	must(t, err)
	if in.Size != uint64(len(data)) || in.SHA256 != sha(data) {
		t.Errorf("after the restart: size %d sha %s, want %d %s", in.Size, in.SHA256, len(data), sha(data))
	}
	if got := readAll(t, s2, i.Ino); !bytes.Equal(got, data) {
		t.Errorf("content after the restart: %d bytes", len(got))
	}
	fsckClean(t, s2)
}

// waitingKernel is a Notifier whose Prefill waits, as the kernel may, for
// a request of the mount that needs the store (a create).
type waitingKernel struct {
	s        *Store
	parent   uint64
	prefills int
	stuck    bool
}

func (k *waitingKernel) Entry(uint64, string) {}
func (k *waitingKernel) Content(uint64)       {}
func (k *waitingKernel) Prefill(ino uint64, data []byte) {
	k.prefills++
	done := make(chan struct{})
	go func() {
		k.s.Create(k.parent, fmt.Sprintf("other-%d.txt", k.prefills), 0o644, Owner{})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		k.stuck = true
	}
}

// TestPrefillHoldsNoLock: the end of a session hands the small content it
// moved into the KV to the kernel's page cache with no store lock held.
// The kernel may wait, before it takes the content, for a request of the
// mount in flight (a rename, a lookup) that needs the store's lock: with
// the lock held, the two waited for each other.
func TestPrefillHoldsNoLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kv, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
	must(t, err)
	defer kv.Close()
	k := &waitingKernel{}
	s, err := Open(kv, Options{BlobDir: filepath.Join(dir, "blobs"), ScratchAge: -1, Notify: k})
	must(t, err)
	defer s.Close()
	s.EnablePassthrough()
	w, err := s.Lookup(RootIno, "working")
	must(t, err)
	k.s, k.parent = s, w.Ino
	ino := ptWritten(t, s, "notes.txt", []byte("kernel bytes"), false)
	s.endSessions(0)
	if k.prefills != 1 || k.stuck {
		t.Errorf("prefills %d, a create meanwhile stuck: %v", k.prefills, k.stuck)
	}
	if got := readAll(t, s, ino); string(got) != "kernel bytes" {
		t.Fatalf("after the session: %q", got)
	}
}
