package mcp

import (
	"net/url"
	"strings"
	"testing"
)

func TestParsePath(t *testing.T) {
	for _, c := range []struct {
		in    string
		shown string // "" : refused
	}{
		{"/memories", "/memories"},
		{"/memories/", "/memories"},
		{"/memories//semantic///a.md/", "/memories/semantic/a.md"},
		{"/memories/100% sure.md", "/memories/100% sure.md"},
		{"/memories/a%20b", "/memories/a%20b"}, // kept literally
		{"/memories/...", "/memories/..."},
		{"/memories/..x", "/memories/..x"},
		{"/memories/x/..", ""},
		{"/memories/%2e%2e", ""},
		{"/memories/%2e", ""},
		{"/memories/a%2Fb", ""},
		{"/memories/a%5cb", ""},
		{"/memories/a%00", ""},
		{`/memories/..\x`, ""},
		{`/memories/x\..`, ""},
		{"/memories/.", ""},
		{"/memories/a\x00", ""},
		{"/memoriesa", ""},
		{"memories", ""},
		{"", ""},
		{"/memories/" + strings.Repeat("x", 255), "/memories/" + strings.Repeat("x", 255)},
		{"/memories/" + strings.Repeat("x", 256), ""},
	} {
		p, err := parsePath("path", c.in)
		switch {
		case c.shown == "" && err == nil:
			t.Errorf("parsePath(%q) = %q, want it refused", c.in, p.shown)
		case c.shown != "" && err != nil:
			t.Errorf("parsePath(%q): %v", c.in, err)
		case c.shown != "" && p.shown != c.shown:
			t.Errorf("parsePath(%q) = %q, want %q", c.in, p.shown, c.shown)
		}
	}
}

// FuzzParsePath: an accepted path's components are names a store takes
// and no decoding turns into a step out of /memories.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"/memories/a", "/memories/%2e%2e/x", `/memories/..\x`, "/memories//a/../b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePath("path", s)
		if err != nil {
			return
		}
		for _, c := range p.parts {
			d, derr := url.PathUnescape(c)
			if derr != nil {
				d = c
			}
			bad := c == "" || c == "." || c == ".." || len(c) > 255 || strings.ContainsAny(c, "/\x00") ||
				d != c && (d == "." || d == ".." || strings.ContainsAny(d, "/\\\x00"))
			for _, seg := range strings.Split(c, `\`) {
				bad = bad || seg == ".."
			}
			if bad {
				t.Fatalf("parsePath(%q) accepted the component %q", s, c)
			}
		}
	})
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[uint64]string{0: "0B", 512: "512B", 1023: "1023B", 1024: "1.0K", 1536: "1.5K", 17 * 1024: "17K", 5 << 20: "5.0M"} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLines(t *testing.T) {
	for s, want := range map[string]int{"": 0, "a": 1, "a\n": 1, "a\nb": 2, "a\n\n": 2} {
		if got := len(splitLines(s)); got != want {
			t.Errorf("splitLines(%q): %d lines, want %d", s, got, want)
		}
	}
	if got := lineOffset("a\nb\nc", 2); got != 4 {
		t.Errorf("lineOffset: %d, want 4", got)
	}
	if got := lineOffset("a\nb", 2); got != 3 {
		t.Errorf("lineOffset past the last newline: %d, want 3", got)
	}
}
