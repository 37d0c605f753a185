package views

import (
	"strings"
	"testing"

	"github.com/mnemofs/mnemofs/store"
)

// TestLineResultReader: a line's result is computed for its reader: one
// that may not read the log gets nothing of it (the mount passes
// views.Filter{May: ...} for a restricted reader, fusefs/reader.go).
func TestLineResultReader(t *testing.T) {
	e, st := engineStore(t)
	writeFile(t, st, store.RootIno, "log.jsonl", "{\"user\":\"a\",\"text\":\"one\"}\n{\"user\":\"b\",\"text\":\"two kayaks\"}\n{\"user\":\"a\",\"text\":\"three\"}\n")
	q, _ := ParseQuery("kayaks")
	rs := e.Search(q, Filter{})
	if len(rs) == 0 || rs[0].Line != 2 {
		t.Fatalf("results %+v", rs)
	}
	b, err := e.LineResult(rs[0].Ino, 2, Filter{})
	if err != nil || !strings.Contains(string(b), "2:{") || !strings.Contains(string(b), "1-{") || !strings.Contains(string(b), "3-{") {
		t.Fatalf("%s %v", b, err)
	}
	if _, err := e.LineResult(rs[0].Ino, 2, Filter{May: func(uint64) bool { return false }}); err == nil {
		t.Fatal("a reader who may not read the log got its line")
	}
	if b, err := e.LineResult(rs[0].Ino, 1, Filter{Users: []string{"a"}}); err != nil || strings.Contains(string(b), "kayaks") {
		t.Fatalf("user a's result shows b's line: %s %v", b, err)
	}
	if got := e.Lines(rs[0].Ino); len(got) != 3 || got[1].Users[0] != "b" {
		t.Fatalf("Lines %+v", got)
	}
}
