package store

import (
	"slices"
	"testing"
)

// TestLinksFollowMoves: related links resolve to the memory they name and
// show its current path after it moves, and after the linking memory
// moves; a link to nothing here stays as written.
func TestLinksFollowMoves(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{ScratchAge: -1})
	sem, epi := dirIno(t, s, "semantic"), dirIno(t, s, "episodic")
	writeFile(t, s, sem, "b.md", []byte("the target\n"))
	a := writeFile(t, s, sem, "a.md", []byte("---\nrelated: [b.md, /semantic/b.md, notes/none.md, mem-42]\n---\nlinks\n"))
	related := func() []string {
		in, err := s.Info(a)
		must(t, err)
		return in.Related
	}
	want := []string{"/semantic/b.md", "/semantic/b.md", "notes/none.md", "mem-42"}
	if got := related(); !slices.Equal(got, want) {
		t.Fatalf("related %q, want %q", got, want)
	}
	must(t, s.Rename(sem, "b.md", epi, "c.md", 0))
	want = []string{"/episodic/c.md", "/episodic/c.md", "notes/none.md", "mem-42"}
	if got := related(); !slices.Equal(got, want) {
		t.Fatalf("after the target moved: %q, want %q", got, want)
	}
	must(t, s.Rename(sem, "a.md", epi, "a.md", 0))
	if got := related(); !slices.Equal(got, want) {
		t.Fatalf("after the linking memory moved: %q, want %q", got, want)
	}
	var seen bool
	must(t, s.Memories(func(in Info) error {
		if in.Ino == a {
			seen = slices.Equal(in.Related, want)
		}
		return nil
	}))
	if !seen {
		t.Fatal("Memories (meta/index.json) does not show the moved links")
	}
}
