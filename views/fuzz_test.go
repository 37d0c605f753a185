package views

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseQuery: any directory name parses without panicking into a
// query whose bounds hold and whose path filter cannot leave the store.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "ramen", "ramen user:bob k:3", "..%2F..", "path:..%2F..%2Fetc",
		"after:2024-01-02 before:2025-01-01", "%zz %", "budget:0", "k:-1", "拉面 tag:食物",
		"archived:true path:/archive", "k:99999999999999999999", "\x00\xff\xfe", "user:%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		q, err := ParseQuery(name)
		if err != nil {
			return // a clear error is an answer
		}
		if q.K < 1 || q.K > MaxK {
			t.Fatalf("k %d out of [1, %d]", q.K, MaxK)
		}
		if q.Budget < 1 || q.Budget > 1<<20 {
			t.Fatalf("budget %d out of range", q.Budget)
		}
		if p := q.Filter.Path; p != "" {
			if !strings.HasPrefix(p, "/") || path.Clean(p) != p || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
				t.Fatalf("path filter %q is not a clean store path", p)
			}
		}
		for _, term := range q.Terms {
			if term == "" {
				t.Fatal("empty search term")
			}
			if utf8.ValidString(name) && !utf8.ValidString(term) {
				t.Fatalf("term %q of valid UTF-8 input is not valid UTF-8", term)
			}
		}
	})
}
