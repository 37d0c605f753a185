package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store/internal/blobfs"
)

// openBlobStore opens (or reopens) an on-disk store with blob files in dir.
func openBlobStore(t *testing.T, dir string) (*Store, backend.KV) {
	t.Helper()
	kv, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
	must(t, err)
	s, err := Open(kv, Options{BlobDir: filepath.Join(dir, "blobs"), ScratchAge: -1})
	must(t, err)
	return s, kv
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(k%251) ^ seed
	}
	return b
}

func blobGen(t *testing.T, s *Store, ino uint64) uint64 {
	t.Helper()
	i, err := s.inode(ino)
	must(t, err)
	return s.blobGenOf(i)
}

func chunkCount(t *testing.T, s *Store, ino uint64) int {
	t.Helper()
	n := 0
	must(t, s.kv.View(func(tx backend.Txn) error {
		return tx.Scan(backend.ChunkPrefix(ino), nil, true, func(k, _ []byte) bool { n++; return true })
	}))
	return n
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func fsckClean(t testing.TB, s *Store) {
	t.Helper()
	r, err := s.Fsck(false)
	must(t, err)
	if !r.Clean {
		t.Fatalf("fsck: %v", r.Problems)
	}
}

func TestBlobWriteAppendOverwriteTruncate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, kv := openBlobStore(t, dir)
	data := pattern(100<<10, 1)
	ino := writeFile(t, s, RootIno, "big.bin", data)
	if g := blobGen(t, s, ino); g != 1 || chunkCount(t, s, ino) != 0 {
		t.Fatalf("a 100 KiB file: blob generation %d, %d chunks; want 1, 0", g, chunkCount(t, s, ino))
	}
	if !bytes.Equal(readAll(t, s, ino), data) {
		t.Fatal("blob content differs")
	}

	// An append writes into the committed blob, past its committed size.
	must(t, s.Open(ino, false))
	_, err := s.Append(ino, []byte("tail"))
	must(t, err)
	must(t, s.Release(ino))
	data = append(data, "tail"...)
	if g := blobGen(t, s, ino); g != 1 {
		t.Fatalf("append moved the blob to generation %d", g)
	}

	// An overwrite copies first; the old generation goes after a sync.
	must(t, s.Open(ino, false))
	_, err = s.WriteAt(ino, []byte("XYZ"), 10)
	must(t, err)
	if got := readAll(t, s, ino); !bytes.Equal(got[10:13], []byte("XYZ")) {
		t.Fatal("an open handle does not read its own write")
	}
	must(t, s.Release(ino))
	copy(data[10:], "XYZ")
	if g := blobGen(t, s, ino); g != 2 {
		t.Fatalf("overwrite: generation %d, want 2", g)
	}
	old := s.blobs.Path(ino, 1)
	if !exists(old) {
		t.Fatal("replaced generation deleted before the store was synced")
	}
	must(t, s.Sync())
	if exists(old) {
		t.Fatal("replaced generation still there after a sync")
	}
	if !bytes.Equal(readAll(t, s, ino), data) {
		t.Fatal("content after overwrite differs")
	}
	fsckClean(t, s)

	// Truncation below the committed size is a new generation too.
	must(t, s.Truncate(ino, 5))
	if g := blobGen(t, s, ino); g != 3 || !bytes.Equal(readAll(t, s, ino), data[:5]) {
		t.Fatalf("truncate: generation %d, content %q", g, readAll(t, s, ino))
	}
	// Growing by truncate reads zeros.
	must(t, s.Truncate(ino, 200<<10))
	got := readAll(t, s, ino)
	if len(got) != 200<<10 || !bytes.Equal(got[:5], data[:5]) || !bytes.Equal(got[5:], make([]byte, len(got)-5)) {
		t.Fatal("content after growing truncate differs")
	}
	fsckClean(t, s)
	must(t, s.Close())
	must(t, kv.Close())
}

func TestSmallFileMovesToBlob(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, kv := openBlobStore(t, dir)
	defer kv.Close()
	defer s.Close()
	head := pattern(1000, 7)
	ino := writeFile(t, s, RootIno, "grows.md", head)
	if g, c := blobGen(t, s, ino), chunkCount(t, s, ino); g != 0 || c != 1 {
		t.Fatalf("small file: generation %d, %d chunks; want 0, 1", g, c)
	}
	more := pattern(3*ChunkSize, 9)
	must(t, s.Open(ino, false))
	_, err := s.Append(ino, more)
	must(t, err)
	must(t, s.Release(ino))
	if g, c := blobGen(t, s, ino), chunkCount(t, s, ino); g != 1 || c != 0 {
		t.Fatalf("grown file: generation %d, %d chunks; want 1, 0", g, c)
	}
	if !bytes.Equal(readAll(t, s, ino), append(head, more...)) {
		t.Fatal("content after the move differs")
	}
	rec, err := s.Record(ino)
	must(t, err)
	if rec.SHA256 != sha(append(head, more...)) {
		t.Fatal("sha256 after the move differs")
	}
	fsckClean(t, s)

	// Removing the file (a scratch name: really deleted) removes its blob.
	must(t, s.Rename(RootIno, "grows.md", RootIno, "grows.md.tmp", 0))
	_, err = s.Remove(RootIno, "grows.md.tmp")
	must(t, err)
	must(t, s.Sync())
	if m, _ := filepath.Glob(filepath.Join(dir, "blobs", "*", "*")); len(m) != 0 {
		t.Fatalf("blobs left after removal: %v", m)
	}
}

func TestBlobsSurviveReopenAndLeftoversGo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, kv := openBlobStore(t, dir)
	data := pattern(ChunkSize*4+17, 3)
	ino := writeFile(t, s, RootIno, "keep.bin", data)
	must(t, s.Close())
	must(t, kv.Close())

	// A copy whose commit never happened (a crash) is left behind.
	b := blobfs.New(filepath.Join(dir, "blobs"))
	f, err := b.Create(ino, 7)
	must(t, err)
	f.Close()

	s, kv = openBlobStore(t, dir)
	defer kv.Close()
	defer s.Close()
	if !bytes.Equal(readAll(t, s, ino), data) {
		t.Fatal("blob content differs after reopening")
	}
	if exists(b.Path(ino, 7)) {
		t.Fatal("an uncommitted generation survived reopening")
	}
	fsckClean(t, s)

	// A blob cut short is a problem fsck reports.
	must(t, os.Truncate(b.Path(ino, 1), 100))
	r, err := s.Fsck(false)
	must(t, err)
	if r.Clean {
		t.Fatal("fsck found nothing wrong with a truncated blob")
	}
}

func TestUnlinkDropsEveryKey(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{ScratchAge: -1})
	ino := writeFile(t, s, RootIno, "x.tmp", pattern(3*ChunkSize+5, 2))
	must(t, s.SetXattr(ino, "user.a", []byte("1"), 0))
	must(t, s.SetXattr(ino, "user.b", []byte("2"), 0))
	must(t, s.SetXattr(ino, "user.b", []byte("3"), 0)) // replace: still two
	must(t, s.SetXattr(ino, "user.c", []byte("4"), 0))
	must(t, s.RemoveXattr(ino, "user.c"))
	if i, _ := s.inode(ino); i.Xattrs != 2 {
		t.Fatalf("xattr count %d, want 2", i.Xattrs)
	}
	_, err := s.Remove(RootIno, "x.tmp")
	must(t, err)
	left := 0
	must(t, s.kv.View(func(tx backend.Txn) error {
		for _, p := range [][]byte{backend.ChunkPrefix(ino), backend.XattrPrefix(ino), backend.MetaKey(ino), backend.InodeKey(ino)} {
			if err := tx.Scan(p, nil, true, func(k, _ []byte) bool { left++; return true }); err != nil {
				return err
			}
		}
		return nil
	}))
	if left != 0 {
		t.Fatalf("%d keys of the removed inode are left", left)
	}
	fsckClean(t, s)
}
