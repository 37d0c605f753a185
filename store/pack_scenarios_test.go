package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func packBody(k int) []byte {
	return []byte(fmt.Sprintf("---\nimportance: 0.1\n---\nTurn %d %s\n", k, strings.Repeat("the trip to Lisbon ", 10)))
}

// TestPackScenarios: versions, growth past a chunk, truncation, rename
// over, removal while open, hard links and fsck repair of packed files.
func TestPackScenarios(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{ScratchAge: -1})
	d, err := s.mkdirAllLocked("/archive/sessions/2026-01/x")
	must(t, err)
	sem, err := s.mkdirAllLocked("/semantic/kb")
	must(t, err)
	var inos []uint64
	for k := range 10 {
		inos = append(inos, writeFile(t, s, d, fmt.Sprintf("t%02d.md", k), packBody(k)))
	}
	// a versioned file (semantic) with history, then hard-linked into the archive twice
	v := writeFile(t, s, sem, "fact.md", []byte("version one of the fact about Lisbon hotels\n"))
	must(t, s.Open(v, false))
	_, err = s.WriteAt(v, []byte("version two of the fact about Lisbon hotels\n"), 0)
	must(t, err)
	must(t, s.Release(v))
	_, err = s.Link(v, d, "link-a.md")
	must(t, err)
	_, err = s.Link(v, d, "link-b.md")
	must(t, err)
	must(t, s.PackTree(d))
	ps, _ := s.Packs()
	t.Logf("packs %+v", ps)
	fsckClean(t, s)
	a, _ := s.Attr(v)
	t.Logf("linked file pack %d off %d", a.Pack, a.PackOff)

	// write to the versioned packed file: unpack, version kept
	must(t, s.Open(v, false))
	_, err = s.WriteAt(v, []byte("version three of the fact about Lisbon hotels\n"), 0)
	must(t, err)
	must(t, s.Release(v))
	vs, _ := s.Versions(v)
	for _, x := range vs {
		b, _ := s.VersionContent(v, x.N)
		t.Logf("version %d: %q", x.N, b)
	}
	fsckClean(t, s)

	// rename a new file over a packed one
	n := writeFile(t, s, d, "new.md", []byte("replacement"))
	_ = n
	must(t, s.Rename(d, "new.md", d, "t00.md", 0))
	fsckClean(t, s)
	// open a packed file, unlink it, read it, close
	must(t, s.Open(inos[1], true))
	_, err = s.Remove(d, "t01.md")
	must(t, err)
	tr, _ := s.Resolve("/archive/trash")
	ents, _ := s.ReadDir(tr)
	for _, e := range ents {
		if strings.HasPrefix(e.Name, "t01") {
			_, err = s.Remove(tr, e.Name)
			must(t, err)
		}
	}
	if got := readAll(t, s, inos[1]); !bytes.Equal(got, packBody(1)) {
		t.Errorf("orphan reads %q", got)
	}
	must(t, s.Release(inos[1]))
	fsckClean(t, s)
	// grow a packed file past one chunk (blob-less store: KV chunks)
	must(t, s.Open(inos[2], false))
	_, err = s.Append(inos[2], bytes.Repeat([]byte("x"), 40<<10))
	must(t, err)
	must(t, s.Release(inos[2]))
	if got := readAll(t, s, inos[2]); !bytes.HasPrefix(got, packBody(2)) || len(got) != len(packBody(2))+40<<10 {
		t.Errorf("grown file reads %d bytes", len(got))
	}
	// truncate a packed file up
	must(t, s.Truncate(inos[3], 5000))
	if got := readAll(t, s, inos[3]); !bytes.HasPrefix(got, packBody(3)) || len(got) != 5000 {
		t.Errorf("extended file reads %d bytes", len(got))
	}
	// remove every remaining member: the pack must go
	for _, name := range []string{"t00.md", "t02.md", "t03.md", "t04.md", "t05.md", "t06.md", "t07.md", "t08.md", "t09.md", "link-a.md", "link-b.md"} {
		if _, err := s.Remove(d, name); err != nil {
			t.Fatal(name, err)
		}
	}
	var rm func(dir uint64)
	rm = func(dir uint64) {
		es, _ := s.ReadDir(dir)
		for _, e := range es {
			if e.Name == "." || e.Name == ".." {
				continue
			}
			if _, err := s.Remove(dir, e.Name); err != nil {
				rm(e.Ino)
				if err := s.Rmdir(dir, e.Name); err != nil {
					t.Logf("rmdir %s: %v", e.Name, err)
				}
			}
		}
	}
	rm(tr)
	ents, _ = s.ReadDir(tr)
	for _, e := range ents {
		t.Logf("left in trash: %s", e.Name)
	}
	ps, _ = s.Packs()
	t.Logf("packs at end %+v", ps)
	if ps.Packs != 0 {
		t.Errorf("packs left: %+v", ps)
	}
	fsckClean(t, s)
	_ = os.Remove
	_ = filepath.Join
}
