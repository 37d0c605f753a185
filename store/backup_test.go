package store

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
)

// TestDumpIsOneMoment: a dump taken while a large file is rewritten and
// the store synced (which deletes replaced blob generations) holds the
// file as it was when the dump began; loaded into a new store it reads
// back so, and the new store is consistent.
func TestDumpIsOneMoment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, kv := openBlobStore(t, dir)
	before := pattern(100<<10, 1)
	ino := writeFile(t, s, RootIno, "big.bin", before)
	small := writeFile(t, s, RootIno, "small.md", []byte("small\n"))

	type blob struct {
		ino, gen uint64
		content  []byte
	}
	var keys [][2][]byte
	var blobs []blob
	first := true
	err := s.Dump(func(k, v []byte) error {
		if first {
			// The dump's snapshot is taken: rewrite the large file (a
			// new generation) and sync, which deletes the old one
			// unless the dump holds it.
			first = false
			must(t, s.Open(ino, false))
			_, err := s.WriteAt(ino, []byte("CHANGED"), 0)
			must(t, err)
			must(t, s.Release(ino))
			must(t, s.Sync())
		}
		keys = append(keys, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
		return nil
	}, func(ino, gen uint64, size int64, f *os.File) error {
		b, err := io.ReadAll(io.LimitReader(f, size))
		blobs = append(blobs, blob{ino, gen, b})
		return err
	})
	must(t, err)
	if len(blobs) != 1 || blobs[0].ino != ino || blobs[0].gen != 1 || !bytes.Equal(blobs[0].content, before) {
		t.Fatalf("the dump's blobs: %d, want generation 1 of inode %d as it was", len(blobs), ino)
	}
	must(t, s.Sync())
	if exists(s.blobs.Path(ino, 1)) {
		t.Error("the replaced generation is still there after the dump and a sync")
	}
	must(t, s.Close())
	must(t, kv.Close())

	// Loaded into a new store.
	dir2 := t.TempDir()
	kv2, err := backend.OpenBadger(filepath.Join(dir2, "db"), backend.Options{})
	must(t, err)
	l := NewLoader(kv2, filepath.Join(dir2, "blobs"))
	for _, kv := range keys {
		must(t, l.Key(kv[0], kv[1]))
	}
	for _, b := range blobs {
		must(t, l.Blob(b.ino, b.gen, bytes.NewReader(b.content)))
	}
	must(t, l.Close())
	must(t, kv2.Close())
	s2, kv2 := openBlobStore(t, dir2)
	if got := readAll(t, s2, ino); !bytes.Equal(got, before) {
		t.Fatalf("restored big.bin: %q…, want the content before the rewrite", got[:16])
	}
	if got := readAll(t, s2, small); string(got) != "small\n" {
		t.Fatalf("restored small.md: %q", got)
	}
	fsckClean(t, s2)
	must(t, s2.Close())
	must(t, kv2.Close())

	// A loader with no blob directory (an encrypted store) refuses blobs.
	kv3, err := backend.OpenBadger(filepath.Join(t.TempDir(), "db"), backend.Options{})
	must(t, err)
	defer kv3.Close()
	l3 := NewLoader(kv3, "")
	defer l3.Cancel()
	if err := l3.Blob(ino, 1, bytes.NewReader(nil)); err == nil {
		t.Fatal("a loader without a blob directory took a blob")
	}
}

// TestFormatChecked: a store of another format is refused at open, with
// nothing written, and the error says which format it is.
func TestFormatChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, kv := openBlobStore(t, dir)
	must(t, s.Close())
	must(t, kv.Update(func(tx backend.Txn) error { return tx.Set(backend.StoreKey("version"), []byte("2")) }))
	_, err := Open(kv, Options{})
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Found != "2" {
		t.Fatalf("open of a format-2 store: %v", err)
	}
	_, err = Open(kv, Options{ReadOnly: true})
	if !errors.As(err, &fe) {
		t.Fatalf("read-only open of a format-2 store: %v", err)
	}
	must(t, kv.Close())
}

// TestDumpKeepsLargeFilesAsTheyWere: a large file that keeps no versions
// is normally changed in place (inplace.go); while a dump reads the
// generations its snapshot points at, a change goes to a copy instead,
// so the dump reads the file as it was at its snapshot.
func TestDumpKeepsLargeFilesAsTheyWere(t *testing.T) {
	t.Parallel()
	s, kv := openBlobStore(t, t.TempDir())
	defer kv.Close()
	defer s.Close()
	w, err := s.Lookup(RootIno, "working")
	must(t, err)
	before := pattern(inPlaceMin+(64<<10), 3)
	ino := writeFile(t, s, w.Ino, "big.bin", before)
	var got []byte
	first := true
	must(t, s.Dump(func(k, v []byte) error {
		if first {
			first = false
			must(t, s.Open(ino, false))
			_, err := s.WriteAt(ino, []byte("CHANGED"), 4096)
			must(t, err)
			must(t, s.Release(ino))
		}
		return nil
	}, func(bino, gen uint64, size int64, f *os.File) error {
		if bino == ino {
			got, err = io.ReadAll(io.LimitReader(f, size))
		}
		return err
	}))
	if !bytes.Equal(got, before) {
		t.Fatalf("the dump read %d bytes of big.bin, not as they were at its snapshot (changed in place meanwhile?)", len(got))
	}
	if now := readAll(t, s, ino); !bytes.Equal(now[4096:4103], []byte("CHANGED")) {
		t.Fatalf("the change made during the dump is lost: %q", now[4096:4103])
	}
}
