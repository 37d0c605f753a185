package store

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

func newStore(t testing.TB, o Options) *Store {
	t.Helper()
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(kv, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); kv.Close() })
	return s
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t testing.TB, s *Store, dir uint64, name string, data []byte) uint64 {
	t.Helper()
	i, err := s.Create(dir, name, 0o644, Owner{})
	must(t, err)
	must(t, s.Open(i.Ino, false))
	_, err = s.WriteAt(i.Ino, data, 0)
	must(t, err)
	must(t, s.Release(i.Ino))
	return i.Ino
}

// mkdirAllLocked is mkdirAll for tests.
func (s *Store) mkdirAllLocked(p string) (uint64, error) {
	s.mu.Lock()
	defer s.unlock()
	return s.mkdirAll(p, Owner{})
}

func readAll(t testing.TB, s *Store, ino uint64) []byte {
	t.Helper()
	a, err := s.Attr(ino)
	must(t, err)
	buf := make([]byte, a.Size+10)
	n, err := s.ReadAt(ino, buf, 0)
	must(t, err)
	return buf[:n]
}

func TestFreshStoreLayout(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{})
	ents, err := s.ReadDir(RootIno)
	must(t, err)
	if len(ents) != len(DefaultTrees) {
		t.Fatalf("root has %d entries", len(ents))
	}
	root, _ := s.Attr(RootIno)
	if root.Nlink() != 2+uint32(len(DefaultTrees)) {
		t.Fatalf("root nlink %d", root.Nlink())
	}
}

func TestInodeNumbersNeverReused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seen := map[uint64]bool{}
	for round := 0; round < 3; round++ {
		kv, err := backend.OpenBadger(dir, backend.Options{})
		must(t, err)
		s, err := Open(kv, Options{ScratchAge: -1})
		must(t, err)
		for k := 0; k < 5; k++ {
			i, err := s.Create(RootIno, fmt.Sprintf("f%d-%d", round, k), 0o644, Owner{})
			must(t, err)
			if seen[i.Ino] {
				t.Fatalf("inode %d reused", i.Ino)
			}
			seen[i.Ino] = true
			_, err = s.Remove(RootIno, i.Links[0].Name)
			must(t, err)
		}
		must(t, s.Close())
		must(t, kv.Close())
	}
}

func TestOrphanKeptUntilClose(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{})
	ino := writeFile(t, s, RootIno, "tmpfile.tmp", []byte("data"))
	must(t, s.Open(ino, true))
	_, err := s.Remove(RootIno, "tmpfile.tmp")
	must(t, err)
	if got := readAll(t, s, ino); string(got) != "data" {
		t.Fatalf("orphan read %q", got)
	}
	a, _ := s.Attr(ino)
	if a.Nlink() != 0 {
		t.Fatalf("orphan nlink %d", a.Nlink())
	}
	must(t, s.Release(ino))
	if _, err := s.Attr(ino); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("inode survived last close: %v", err)
	}
}

func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{})
	const n = 16
	var wg sync.WaitGroup
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := 0; k < 20; k++ {
				name := fmt.Sprintf("w%d-%d", w, k)
				ino := writeFile(t, s, RootIno, name, bytes.Repeat([]byte{byte(w)}, 100+k))
				if k%3 == 0 {
					must(t, s.Rename(RootIno, name, RootIno, name+"-r", 0))
				}
				_ = ino
			}
		}(w)
	}
	wg.Wait()
	r, err := s.Fsck(false)
	must(t, err)
	if !r.Clean {
		t.Fatalf("fsck: %v", r.Problems)
	}
	ents, _ := s.ReadDir(RootIno)
	if len(ents) != n*20+len(DefaultTrees) {
		t.Fatalf("%d entries", len(ents))
	}
}

func TestSpillAndTruncateLargeFile(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{})
	i, err := s.Create(RootIno, "big", 0o644, Owner{})
	must(t, err)
	must(t, s.Open(i.Ino, false))
	data := make([]byte, spillBytes*2+999)
	for k := range data {
		data[k] = byte(k % 253)
	}
	for off := 0; off < len(data); off += 1 << 20 {
		_, err := s.WriteAt(i.Ino, data[off:min(len(data), off+1<<20)], int64(off))
		must(t, err)
	}
	// Cut into the spilled part, grow again: the cut bytes read as zeros.
	f := s.openState(i.Ino)
	f.mu.Lock()
	must(t, s.truncateLocked(f, s.inodes[i.Ino], 1000))
	f.mu.Unlock()
	must(t, s.Truncate(i.Ino, 5*ChunkSize))
	must(t, s.Release(i.Ino))
	got := readAll(t, s, i.Ino)
	want := append(append([]byte(nil), data[:1000]...), make([]byte, 5*ChunkSize-1000)...)
	if !bytes.Equal(got, want) {
		t.Fatal("content after spill+truncate differs")
	}
	r, err := s.Fsck(false)
	must(t, err)
	if !r.Clean {
		t.Fatalf("fsck: %v", r.Problems)
	}
}

func TestFsckFindsAndRepairs(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{})
	ino := writeFile(t, s, RootIno, "a", []byte("hello"))
	// Damage: a dangling entry, stray chunks, a wrong hash.
	must(t, s.kv.Update(func(tx backend.Txn) error {
		must(t, tx.Set(backend.DirentKey(RootIno, "ghost"), encodeDirent(999999, syscall.S_IFREG)))
		must(t, tx.Set(backend.ChunkKey(888888, 0), []byte("stray")))
		must(t, tx.Set(backend.ChunkKey(ino, 0), []byte("HELLO")))
		return nil
	}))
	r, err := s.Fsck(false)
	must(t, err)
	if r.Clean || len(r.Problems) != 3 {
		t.Fatalf("fsck found %v", r.Problems)
	}
	r, err = s.Fsck(true)
	must(t, err)
	if r.Repaired != 3 {
		t.Fatalf("repaired %d", r.Repaired)
	}
	r, err = s.Fsck(false)
	must(t, err)
	if !r.Clean {
		t.Fatalf("still: %v", r.Problems)
	}
}

func TestVersionCountsCommittedChanges(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{Now: func() time.Time { return time.Unix(1e9, 0) }})
	ino := writeFile(t, s, RootIno, "v", []byte("1"))
	for _, c := range []string{"2", "2", "3"} {
		must(t, s.Open(ino, false))
		_, err := s.WriteAt(ino, []byte(c), 0)
		must(t, err)
		must(t, s.Release(ino))
	}
	r, err := s.Record(ino)
	must(t, err)
	if r.Version != 3 { // "1", "2", "3": rewriting the same bytes is no new version
		t.Fatalf("version %d", r.Version)
	}
}

func TestManyAccessesAreSaved(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{})
	var inos []uint64
	// More records than one Badger transaction takes (16 MiB memtables),
	// written in bulk (as an import writes them).
	b := s.NewBulk()
	for k := 0; k < 30000; k++ {
		must(t, b.AddFile(fmt.Sprintf("/a%d", k), []byte("x"), 0o644, Owner{}, 0))
	}
	must(t, b.Flush())
	for k := 0; k < 30000; k++ {
		i, err := s.Lookup(RootIno, fmt.Sprintf("a%d", k))
		must(t, err)
		inos = append(inos, i.Ino)
	}
	for _, ino := range inos {
		must(t, s.Open(ino, true))
		must(t, s.Release(ino))
	}
	must(t, s.flushAccess())
	r, err := s.Record(inos[len(inos)-1])
	must(t, err)
	if r.AccessCount != 1 || r.LastAccessed == 0 {
		t.Fatalf("access not saved: %+v", r)
	}
}

func TestFsckAcceptsOrphanBeingReleased(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{})
	ino := writeFile(t, s, RootIno, "x.tmp", []byte("x"))
	must(t, s.Open(ino, true))
	_, err := s.Remove(RootIno, "x.tmp")
	must(t, err)
	// As between a last close dropping the handle and freeing the inode.
	s.filesMu.Lock()
	delete(s.writes, ino)
	s.filesMu.Unlock()
	r, err := s.Fsck(false)
	must(t, err)
	if !r.Clean {
		t.Fatalf("fsck: %v", r.Problems)
	}
}

func appendTo(t testing.TB, s *Store, ino uint64, data string) {
	t.Helper()
	must(t, s.Open(ino, false))
	_, err := s.Append(ino, []byte(data))
	must(t, err)
	must(t, s.Release(ino))
}

func TestAppendsKeepMetadataAndHash(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{})
	ino := writeFile(t, s, RootIno, "n.md", []byte("---\nuser: alice\n---\nfirst\n"))
	content := "---\nuser: alice\n---\nfirst\n"
	for k := 0; k < 200; k++ {
		line := fmt.Sprintf("line %d %s\n", k, bytes.Repeat([]byte("x"), 60))
		appendTo(t, s, ino, line)
		content += line
	}
	in, err := s.Info(ino)
	must(t, err)
	if in.SHA256 != sha([]byte(content)) || len(in.Users) != 1 || in.Users[0] != "alice" || in.Version != 201 {
		t.Fatalf("after appends: %+v", in)
	}
	// Front matter closed only by an append is parsed then.
	ino2 := writeFile(t, s, RootIno, "o.md", []byte("---\nuser: bob\n"))
	if in, _ := s.Info(ino2); in.Error == "" {
		t.Fatal("unclosed front matter not reported")
	}
	appendTo(t, s, ino2, "---\nbody\n")
	if in, _ := s.Info(ino2); in.Error != "" || len(in.Users) != 1 || in.Users[0] != "bob" {
		t.Fatalf("closing append: %+v", in)
	}
	r, err := s.Fsck(false)
	must(t, err)
	if !r.Clean {
		t.Fatalf("fsck: %v", r.Problems)
	}
}
