package store

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"syscall"
	"testing"

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
	must(t, s.ScanMemories(inos, limit, func(m *Scanned) bool {
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
	}))
	if seen != len(inos) {
		t.Errorf("%d memories scanned, want %d", seen, len(inos))
	}
	n := 0
	must(t, s.ScanMemories(inos, limit, func(*Scanned) bool { n++; return n < 600 }))
	if n != 600 {
		t.Errorf("a scan told to stop at 600 called back %d times", n)
	}
}
