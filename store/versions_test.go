package store

import (
	"bytes"
	"path/filepath"
	"testing"
)

// rewrite replaces the content of ino in one open (as an editor's save or
// os.WriteFile does: truncate, write, close).
func rewrite(t *testing.T, s *Store, ino uint64, data []byte) {
	t.Helper()
	must(t, s.Open(ino, false))
	must(t, s.Truncate(ino, 0))
	_, err := s.WriteAt(ino, data, 0)
	must(t, err)
	must(t, s.Release(ino))
}

func appendBytes(t *testing.T, s *Store, ino uint64, data []byte) {
	t.Helper()
	must(t, s.Open(ino, false))
	_, err := s.Append(ino, data)
	must(t, err)
	must(t, s.Release(ino))
}

func versionBytes(t *testing.T, s *Store, ino uint64) [][]byte {
	t.Helper()
	vs, err := s.Versions(ino)
	must(t, err)
	var out [][]byte
	for _, v := range vs {
		b, err := s.VersionContent(ino, v.N)
		must(t, err)
		out = append(out, b)
	}
	return out
}

func dirIno(t *testing.T, s *Store, name string) uint64 {
	t.Helper()
	ino, err := s.Resolve("/" + name)
	must(t, err)
	return ino
}

func TestVersionsFollowPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, kv := openBlobStore(t, dir)
	defer kv.Close()
	defer s.Close()
	sem, epi, work := dirIno(t, s, "semantic"), dirIno(t, s, "episodic"), dirIno(t, s, "working")

	// semantic/ is versioned: writing three times keeps the two old ones.
	a := writeFile(t, s, sem, "a.md", []byte("one"))
	rewrite(t, s, a, []byte("two"))
	rewrite(t, s, a, []byte("three"))
	if got := versionBytes(t, s, a); len(got) != 2 || string(got[0]) != "one" || string(got[1]) != "two" {
		t.Fatalf("semantic versions %q, want one, two", got)
	}
	// They follow a rename.
	must(t, s.Rename(sem, "a.md", sem, "b.md", 0))
	if got := versionBytes(t, s, a); len(got) != 2 {
		t.Fatalf("versions after a rename: %q", got)
	}

	// episodic/ is append-friendly: appends are not versions, rewrites are.
	l := writeFile(t, s, epi, "log.jsonl", []byte("{\"a\":1}\n"))
	appendBytes(t, s, l, []byte("{\"a\":2}\n"))
	appendBytes(t, s, l, []byte("{\"a\":3}\n"))
	if got := versionBytes(t, s, l); len(got) != 0 {
		t.Fatalf("appends made versions: %q", got)
	}
	rewrite(t, s, l, []byte("{\"b\":1}\n"))
	if got := versionBytes(t, s, l); len(got) != 1 || string(got[0]) != "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n" {
		t.Fatalf("episodic rewrite versions %q", got)
	}

	// working/ is in place: no history.
	w := writeFile(t, s, work, "plan.md", []byte("v1"))
	rewrite(t, s, w, []byte("v2"))
	if got := versionBytes(t, s, w); len(got) != 0 {
		t.Fatalf("working/ kept versions: %q", got)
	}
	// Until the policy says otherwise.
	must(t, s.PutSetting("policy", []byte("trees:\n  working: {update: versioned}\n")))
	rewrite(t, s, w, []byte("v3"))
	if got := versionBytes(t, s, w); len(got) != 1 || string(got[0]) != "v2" {
		t.Fatalf("working/ versions after the policy change: %q", got)
	}

	// A large (blob) file: overwritten in its middle (copy on write) and
	// appended to in place, each old content is kept whole.
	big := pattern(100<<10, 5)
	g := writeFile(t, s, sem, "big.bin", big)
	must(t, s.Open(g, false))
	_, err := s.WriteAt(g, []byte("XYZ"), 5000)
	must(t, err)
	must(t, s.Release(g))
	patched := append([]byte(nil), big...)
	copy(patched[5000:], "XYZ")
	appendBytes(t, s, g, []byte("tail"))
	got := versionBytes(t, s, g)
	if len(got) != 2 || !bytes.Equal(got[0], big) || !bytes.Equal(got[1], patched) {
		t.Fatalf("blob versions: %d, sizes %v", len(got), func() (n []int) {
			for _, b := range got {
				n = append(n, len(b))
			}
			return
		}())
	}
	fsckClean(t, s)

	// Removing for good drops the versions with the inode.
	must(t, s.Rename(sem, "b.md", sem, "b.md.tmp", 0))
	_, err = s.Remove(sem, "b.md.tmp")
	must(t, err)
	if vs, _ := s.Versions(a); len(vs) != 0 {
		t.Fatalf("versions of a removed file remain: %v", vs)
	}
	_ = filepath.Join
}

// TestVersionOfTruncatedFile: a truncation committed on its own (truncate
// with no handle open, as a shell's > can do) keeps the content it cut.
func TestVersionOfTruncatedFile(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{ScratchAge: -1})
	sem := dirIno(t, s, "semantic")
	a := writeFile(t, s, sem, "alice.md", []byte("---\nuser: alice\n---\nAlice likes ramen.\n"))
	must(t, s.Truncate(a, 0))
	must(t, s.Open(a, false))
	_, err := s.WriteAt(a, []byte("Alice is vegetarian.\n"), 0)
	must(t, err)
	must(t, s.Release(a))
	if got := versionBytes(t, s, a); len(got) != 1 || string(got[0]) != "---\nuser: alice\n---\nAlice likes ramen.\n" {
		t.Fatalf("versions %q", got)
	}
}
