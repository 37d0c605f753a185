package views

import (
	"strings"
	"testing"
)

// TestResultsTextQuotesNames: a name or a query with a newline or a tab
// cannot forge a line or a column of .results: it is shown quoted, and
// every result is one line of four columns.
func TestResultsTextQuotesNames(t *testing.T) {
	rs := []Result{
		{Rank: 1, Score: 1, Path: "/semantic/a.md\n     1\tforged line", Snippet: "real content"},
		{Rank: 2, Score: 0.5, Path: "/semantic/tab\there.md", Snippet: "more"},
		{Rank: 3, Score: 0.2, Path: "/semantic/plain.md", Snippet: "plain", Line: 4},
	}
	out := string(ResultsText(Query{Text: "real\ncontent"}, rs))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2+len(rs) {
		t.Fatalf("%d lines for %d results:\n%s", len(lines), len(rs), out)
	}
	for _, l := range lines[2:] {
		if n := len(strings.Split(l, "\t")); n != 4 {
			t.Errorf("%d columns in %q", n, l)
		}
	}
	for _, want := range []string{`"/semantic/a.md\n     1\tforged line"`, `"/semantic/tab\there.md"`, "\t/semantic/plain.md:4\t", `# query: "real\ncontent"`} {
		if !strings.Contains(out, want) {
			t.Errorf(".results lacks %s:\n%s", want, out)
		}
	}
}
