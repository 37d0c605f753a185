package store

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/internal/testetcd"
)

// TestScanMemories: a scan gives each memory it reads itself the Info,
// inode and content (up to the limit) that Info, Attr and ReadAt give,
// across blocks; it leaves to the caller what it cannot read as they
// would (an open file, a staged rewrite's chunks), says which are gone,
// and stops when asked.
func TestScanMemories(t *testing.T) {
	t.Parallel()
	t.Run("badger", func(t *testing.T) {
		t.Parallel()
		testScanMemories(t, newStore(t, Options{}))
	})
	t.Run("etcd", func(t *testing.T) {
		t.Parallel()
		s, _ := openEtcdStore(t, testetcd.Shared(t), testetcd.Prefix(t))
		testScanMemories(t, s)
	})
}

func testScanMemories(t *testing.T, s *Store) {
	var err error
	const limit = 3*ChunkSize + 100
	var inos []uint64
	for i := range 1100 {
		data := []byte(fmt.Sprintf("---\ntags: [t%d]\n---\nnote %d\n", i%7, i))
		if i%97 == 0 {
			data = content(byte(i), ChunkSize*(1+i%5)+i) // several chunks; some past the limit
		}
		inos = append(inos, writeFile(t, s, RootIno, fmt.Sprintf("n%04d.md", i), data))
	}
	rewritten := writeFile(t, s, RootIno, "staged.md", content(1, 3*spillBytes/2))
	must(t, rewriteBig(t, s, rewritten, content(2, spillBytes+3*ChunkSize)))
	if id, err := s.chunkIDOf(rewritten); err != nil || id == rewritten {
		t.Fatalf("the rewrite's chunks are under %d (%v): not staged", id, err)
	}
	open := writeFile(t, s, RootIno, "open.md", []byte("held open"))
	must(t, s.Open(open, false))
	defer s.Release(open)
	gone := writeFile(t, s, RootIno, "gone.md", []byte("removed"))
	_, err = s.Remove(RootIno, "gone.md")
	must(t, err)
	inos = append(inos, rewritten, open, gone)

	seen := 0
	s.ScanMemories(inos, limit, func(m *Scanned) bool {
		if m.Ino != inos[seen] {
			t.Fatalf("memory %d came as the %dth, want %d", m.Ino, seen, inos[seen])
		}
		seen++
		switch m.Ino {
		case open:
			if m.Own {
				t.Errorf("an open file was read by the scan")
			}
			return true
		case rewritten:
			if m.Own {
				t.Errorf("a staged rewrite's content, under another id, was read by the scan")
			}
			return true
		case gone:
			// Gone, or moved to the trash (a store whose removals keep
			// the file a while): as Info says.
			if _, err := s.Info(gone); errors.Is(err, syscall.ENOENT) {
				if m.Own || !errors.Is(m.Err, syscall.ENOENT) {
					t.Errorf("a removed memory: own %v, err %v", m.Own, m.Err)
				}
				return true
			}
		}
		if !m.Own || m.Err != nil {
			t.Errorf("inode %d: own %v, err %v", m.Ino, m.Own, m.Err)
			return true
		}
		want := readAll(t, s, m.Ino)
		if len(want) > limit {
			want = want[:limit]
		}
		if !bytes.Equal(m.Content, want) {
			t.Errorf("inode %d: %d bytes of content, want %d (or they differ)", m.Ino, len(m.Content), len(want))
		}
		in, err := s.Info(m.Ino)
		must(t, err)
		a, err := s.Attr(m.Ino)
		must(t, err)
		if !reflect.DeepEqual(m.Info, in) || !reflect.DeepEqual(m.Attr, a) {
			t.Errorf("inode %d:\n got %+v %+v\nwant %+v %+v", m.Ino, m.Info, m.Attr, in, a)
		}
		return true
	})
	if seen != len(inos) {
		t.Errorf("%d memories scanned, want %d", seen, len(inos))
	}
	n := 0
	s.ScanMemories(inos, limit, func(*Scanned) bool { n++; return n < 600 })
	if n != 600 {
		t.Errorf("a scan told to stop at 600 called back %d times", n)
	}
	// With prep: each memory comes prepared (on another goroutine, in
	// order), and a stop ends the goroutines before the call returns.
	for _, stopAt := range []int{len(inos), 600, 1} {
		var prepped atomic.Int64
		n := 0
		s.ScanMemoriesPrepared(inos, limit, func(m *Scanned) {
			prepped.Add(1)
			m.Prepared = m.Ino * 3
		}, func(m *Scanned) bool {
			if m.Ino != inos[n] || m.Prepared != m.Ino*3 {
				t.Fatalf("memory %d (prepared %v) came as the %dth, want %d", m.Ino, m.Prepared, n, inos[n])
			}
			n++
			return n < stopAt
		})
		if n != stopAt {
			t.Errorf("a prepared scan told to stop at %d called back %d times", stopAt, n)
		}
		after := prepped.Load()
		time.Sleep(20 * time.Millisecond)
		if p := prepped.Load(); p != after || p < int64(n) || p > int64(n)+3*scanBlock {
			t.Errorf("stopped at %d: %d memories prepared, then %d (a goroutine left running, or too far ahead)", n, after, p)
		}
	}
}

// failingViews is a KV whose next fail scans of the inodes fail (an
// outage of a shared store's cluster, met by the scans of a build).
type failingViews struct {
	backend.KV
	fail atomic.Int32
}

func (f *failingViews) View(fn func(backend.Txn) error) error {
	return f.KV.View(func(t backend.Txn) error { return fn(failingScans{t, f}) })
}

type failingScans struct {
	backend.Txn
	f *failingViews
}

func (t failingScans) Scan(prefix, start []byte, keysOnly bool, fn func(k, v []byte) bool) error {
	if len(prefix) == 1 && prefix[0] == backend.PrefixInode && t.f.fail.Add(-1) >= 0 {
		return errors.New("the cluster is unreachable")
	}
	return t.Txn.Scan(prefix, start, keysOnly, fn)
}

// TestScanMemoriesOutage: a block the KV fails to read comes as memories
// not read (the caller reads them the usual way, which retries), and the
// blocks after it are read.
func TestScanMemoriesOutage(t *testing.T) {
	t.Parallel()
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	must(t, err)
	f := &failingViews{KV: kv}
	s, err := Open(f, Options{})
	must(t, err)
	t.Cleanup(func() { s.Close(); kv.Close() })
	var inos []uint64
	for i := range 2 * scanBlock {
		inos = append(inos, writeFile(t, s, RootIno, fmt.Sprintf("n%04d.md", i), []byte(fmt.Sprintf("note %d\n", i))))
	}
	f.fail.Store(1)
	k := 0
	s.ScanMemories(inos, 1<<20, func(m *Scanned) bool {
		if m.Ino != inos[k] {
			t.Fatalf("memory %d came as the %dth, want %d", m.Ino, k, inos[k])
		}
		if want := k >= scanBlock; m.Own != want || m.Err != nil {
			t.Errorf("memory %d (the %dth): own %v, err %v; want own %v", m.Ino, k, m.Own, m.Err, want)
		}
		k++
		return true
	})
	if k != len(inos) {
		t.Errorf("%d memories given, want %d", k, len(inos))
	}
}
