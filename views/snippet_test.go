package views

import (
	"strings"
	"testing"

	"github.com/mnemofs/mnemofs/store"
)

// TestSnippetSkipsFrontMatter: a result's snippet is a line of its body,
// not a front matter key, even when the query's words are in both (a
// summary's "type: summary", a profile's related_files).
func TestSnippetSkipsFrontMatter(t *testing.T) {
	e, st := engineStore(t)
	writeFile(t, st, store.RootIno, "summary.md", "---\ntype: summary\ntags: [kayak, trip]\nrelated_files: [kayak/trip.md]\n---\nAlice and Bob plan a kayak trip in June.\n")
	q, _ := ParseQuery("kayak trip")
	rs := e.WithSnippets(q, e.Search(q, Filter{}))
	if len(rs) != 1 || rs[0].Snippet != "Alice and Bob plan a kayak trip in June." {
		t.Fatalf("results %+v, want the body's line as snippet", rs)
	}
	// A memory that is all front matter still gets a snippet.
	writeFile(t, st, store.RootIno, "bare.md", "---\ntags: [gondola]\n---\n")
	q, _ = ParseQuery("gondola")
	if rs := e.WithSnippets(q, e.Search(q, Filter{})); len(rs) != 1 || !strings.Contains(rs[0].Snippet, "gondola") {
		t.Fatalf("results %+v, want a snippet of its front matter", rs)
	}
}
