package views

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mnemofs/mnemofs/store"
)

// TestStaleVectorsAfterEmptying (regression): a memory rewritten to binary or empty keeps the vectors of its old text.
func TestStaleVectorsAfterEmptying(t *testing.T) {
	dir := t.TempDir()
	enc := &hashEncoder{name: "hash-a"}
	f := openEmbed(t, dir, enc)
	defer f.close()
	a := f.write("a.md", "the night train to Lisbon departs at nine")
	f.write("b.md", "a recipe for ramen")
	for k := range 60 {
		f.write(fmt.Sprintf("filler-%d.md", k), fmt.Sprintf("filler note %d about gardening tomatoes and weather %d", k, k*7))
	}
	f.settle()
	f.write("a.md", "\x00\x01binary")
	f.settle()
	s := f.e.EmbedStats()
	t.Logf("stats after emptying: %+v keys=%d", *s, f.vectorKeys())
	q, _ := ParseQuery("night train Lisbon")
	res := f.e.Search(q, Filter{})
	for _, r := range res {
		t.Logf("hit %d %s lex=%d vec=%d", r.Ino, r.Path, r.Lexical, r.Vector)
		if r.Ino == a && r.Vector > 0 {
			t.Errorf("emptied memory %d found by its old vectors (vector rank %d)", a, r.Vector)
		}
	}
	if s.Memories != 61 {
		t.Errorf("emptied memory still has vectors: %+v", *s)
	}
}

// TestGhostVectors (regression): removed while no model is loaded, the
// vectors used to stay in the KV and are
// loaded into the index at the next start with a model, for good.
func TestGhostVectors(t *testing.T) {
	dir := t.TempDir()
	f := openEmbed(t, dir, &hashEncoder{name: "hash-a"})
	f.write("a.md", "the night train to Lisbon")
	f.write("b.md", "a recipe for ramen")
	f.settle()
	f.close()
	f = openEmbed(t, dir, nil)
	if _, err := f.st.Remove(store.RootIno, "a.md"); err != nil {
		t.Fatal(err)
	}
	ino, _ := f.st.Resolve("/archive/trash")
	ents, _ := f.st.ReadDir(ino)
	for _, e := range ents {
		if strings.HasPrefix(e.Name, "a") {
			f.st.Remove(ino, e.Name)
		}
	}
	f.close()
	f = openEmbed(t, dir, &hashEncoder{name: "hash-a"})
	defer f.close()
	s := f.settle()
	t.Logf("%+v keys=%d", *s, f.vectorKeys())
	if s.Memories != 1 || f.vectorKeys() != 1 {
		t.Errorf("vectors of a removed memory kept: %+v, %d keys", *s, f.vectorKeys())
	}
}
