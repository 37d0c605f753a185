package store

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

// BenchmarkCreateWriteCommit is the store's share of create+write+close.
func BenchmarkCreateWriteCommit(b *testing.B) {
	kv, err := backend.OpenBadger(b.TempDir(), backend.Options{})
	must(b, err)
	s, err := Open(kv, Options{})
	must(b, err)
	defer kv.Close()
	defer s.Close()
	data := make([]byte, 1024)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		writeFile(b, s, RootIno, fmt.Sprintf("f%d", i), data)
	}
}

// BenchmarkAppendLine is the store's share of open O_APPEND + write a line
// + close, on a file that grows past a chunk (so into a blob).
func BenchmarkAppendLine(b *testing.B) {
	dir := b.TempDir()
	kv, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
	must(b, err)
	s, err := Open(kv, Options{BlobDir: filepath.Join(dir, "blobs")})
	must(b, err)
	defer kv.Close()
	defer s.Close()
	ino := writeFile(b, s, RootIno, "append.log", nil)
	line := make([]byte, 80)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		must(b, s.Open(ino, false))
		_, err := s.Append(ino, line)
		must(b, err)
		must(b, s.Flush(ino))
		must(b, s.Release(ino))
	}
}

// BenchmarkUnlinkNew and BenchmarkRename are the store's share of unlink
// (a file younger than the scratch age: really deleted) and of a rename
// to another directory.
func BenchmarkUnlinkNew(b *testing.B)   { benchNamespace(b, false, 0) }
func BenchmarkUnlinkTrash(b *testing.B) { benchNamespace(b, false, -1) }
func BenchmarkRename(b *testing.B)      { benchNamespace(b, true, 0) }

func benchNamespace(b *testing.B, rename bool, scratch time.Duration) {
	dir := b.TempDir()
	kv, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
	must(b, err)
	s, err := Open(kv, Options{BlobDir: filepath.Join(dir, "blobs"), ScratchAge: scratch})
	must(b, err)
	defer kv.Close()
	defer s.Close()
	from, err := s.Mkdir(RootIno, "a", 0o755, Owner{})
	must(b, err)
	to, err := s.Mkdir(RootIno, "b", 0o755, Owner{})
	must(b, err)
	data := make([]byte, 1024)
	for i := 0; i < b.N; i++ {
		writeFile(b, s, from.Ino, fmt.Sprintf("f%d", i), data)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("f%d", i)
		if rename {
			must(b, s.Rename(from.Ino, name, to.Ino, name, 0))
		} else {
			_, err := s.Remove(from.Ino, name)
			must(b, err)
		}
	}
}
