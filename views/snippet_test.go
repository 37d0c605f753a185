package views

import (
	"fmt"
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

// TestParseQueryRefusesBadFilters: a filter key with no value, or an
// archived: that is neither true nor false, is an error, not words.
func TestParseQueryRefusesBadFilters(t *testing.T) {
	for _, q := range []string{"trip user:", "type: notes", "archived:maybe", "k:0", "after:notadate"} {
		if _, err := ParseQuery(q); err == nil {
			t.Errorf("ParseQuery(%q): no error", q)
		}
	}
	for q, archived := range map[string]bool{"trip archived:true": true, "trip archived:no": false, "note: remember": false} {
		if p, err := ParseQuery(q); err != nil || p.Filter.Archived != archived {
			t.Errorf("ParseQuery(%q): archived %v, %v", q, p.Filter.Archived, err)
		}
	}
}

// TestContextWholeLines: context/ cuts what does not fit at a line's end,
// never inside a turn, and shows a session's summary without its front
// matter.
func TestContextWholeLines(t *testing.T) {
	e, st := engineStore(t)
	dir, err := st.Mkdir(store.RootIno, "s1", 0o755, store.Owner{})
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for i := range 40 {
		fmt.Fprintf(&log, `{"speaker":"alice","text":"turn %d about the kayak trip and a long enough sentence to take room in the budget"}`+"\n", i)
	}
	writeFile(t, st, dir.Ino, "turns.jsonl", log.String())
	writeFile(t, st, dir.Ino, "summary.md", "---\ntype: summary\nsummary_source_bytes: 12\n---\nAlice plans a kayak trip.\n")
	q, _ := ParseQuery("kayak trip budget:200")
	got := string(e.Context(q, Filter{}))
	if strings.Contains(got, "summary_source_bytes") || !strings.Contains(got, "Alice plans a kayak trip.") {
		t.Errorf("the summary in context/:\n%s", got)
	}
	if tokens(got) > 200 {
		t.Errorf("context/ is %d tokens, over its budget of 200", tokens(got))
	}
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, "- L") && !strings.HasSuffix(l, "**") && !strings.HasSuffix(l, "budget") {
			t.Errorf("a turn cut inside: %q", l)
		}
	}
}
