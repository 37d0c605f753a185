package store

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"syscall"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
)

// TestScanMemories: a scan gives each memory it reads itself the Info,
// inode and content (up to the limit) that Info, Attr and ReadAt give,
// across blocks; it leaves to the caller what it cannot read as they
// would (an open file, a staged rewrite's chunks), says which are gone,
// and stops when asked.
func TestScanMemories(t *testing.T) {
	t.Parallel()
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	must(t, err)
	s, err := Open(kv, Options{})
	must(t, err)
	t.Cleanup(func() { s.Close(); kv.Close() })
	const limit = 3*ChunkSize + 100
	var inos []uint64
	for i := range 1100 {
		data := []byte(fmt.Sprintf("---\ntags: [t%d]\n---\nnote %d\n", i%7, i))
		if i%97 == 0 {
			data = content(byte(i), ChunkSize*(1+i%5)+i) // several chunks; some past the limit
		}
		inos = append(inos, writeFile(t, s, RootIno, fmt.Sprintf("n%04d.md", i), data))
	}
	staged := writeFile(t, s, RootIno, "staged.md", content(1, 3*spillBytes/2))
	must(t, rewriteBig(t, s, staged, content(2, spillBytes+3*ChunkSize)))
	open := writeFile(t, s, RootIno, "open.md", []byte("held open"))
	must(t, s.Open(open, false))
	defer s.Release(open)
	gone := writeFile(t, s, RootIno, "gone.md", []byte("removed"))
	_, err = s.Remove(RootIno, "gone.md")
	must(t, err)
	inos = append(inos, staged, open, gone)

	seen := 0
	must(t, s.ScanMemories(inos, limit, func(m *Scanned) bool {
		if m.Ino != inos[seen] {
			t.Fatalf("memory %d came as the %dth, want %d", m.Ino, seen, inos[seen])
		}
		seen++
		switch m.Ino {
		case staged, open:
			if m.Own {
				t.Errorf("inode %d (staged or open) was read by the scan", m.Ino)
			}
			return true
		case gone:
			if m.Own || !errors.Is(m.Err, syscall.ENOENT) {
				t.Errorf("a removed memory: own %v, err %v", m.Own, m.Err)
			}
			return true
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
