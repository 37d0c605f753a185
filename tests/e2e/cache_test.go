package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemofs/mnemofs/cache"
)

// TestCacheSizeFlag: --cache-size takes sizes such as 64MiB (0 turns the
// caches off), refuses anything else in one line, and the caches' counters
// show in meta/stats.json and in mnemofs stats --json.
func TestCacheSizeFlag(t *testing.T) {
	t.Parallel()
	oneErrorLine(t, runMnemofs(t, "mount", "--data", t.TempDir(), "--cache-size", "lots", t.TempDir()), "--cache-size", "64MiB")

	stats := func(mnt string) map[string]cache.Stats {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(mnt, "meta/stats.json"))
		check(t, err)
		var s struct {
			Cache map[string]cache.Stats `json:"cache"`
		}
		check(t, json.Unmarshal(b, &s))
		return s.Cache
	}
	for _, c := range []struct {
		flag            string
		content, scache int64
	}{{"", 56 << 20, 8 << 20}, {"16MiB", 14 << 20, 2 << 20}, {"0", 0, 0}} {
		t.Run("size="+c.flag, func(t *testing.T) {
			data, mnt := t.TempDir(), t.TempDir()
			var extra []string
			if c.flag != "" {
				extra = []string{"--cache-size", c.flag}
			}
			m := startMount(t, data, mnt, extra...)
			p := filepath.Join(mnt, "semantic/note.md")
			check(t, os.WriteFile(p, []byte("the cache keeps hot memories\n"), 0o644))
			// A search reads each hit's snippet through the store; the
			// CLI's searches go to the mount's engine.
			b, err := os.ReadFile(filepath.Join(mnt, "search/hot memories/.results"))
			if err != nil || !strings.Contains(string(b), "/semantic/note.md") {
				t.Fatalf("search/: %q, %v", b, err)
			}
			for k := 0; k < 2; k++ {
				if r := mustRun(t, "search", "--data", data, "hot memories"); !strings.Contains(r.stdout, "/semantic/note.md") {
					t.Fatalf("mnemofs search: %s", r)
				}
			}
			s := stats(mnt)
			if s["content"].MaxBytes != c.content || s["queries"].MaxBytes != c.scache {
				t.Fatalf("--cache-size %q: stats %+v", c.flag, s)
			}
			if _, ok := s["records"]; !ok {
				t.Fatalf("no records cache in %+v", s)
			}
			// (The first read of a file only admits it: the snippet read
			// after the index build's is a miss that fills.)
			if c.content > 0 && (s["content"].Misses == 0 || s["queries"].Hits == 0) {
				t.Errorf("repeated searches did not hit the caches: %+v", s)
			}
			r := mustRun(t, "stats", "--json", "--data", data)
			if !strings.Contains(r.stdout, `"queries"`) || !strings.Contains(r.stdout, `"content"`) {
				t.Errorf("mnemofs stats --json has no cache counters:\n%s", r.stdout)
			}
			m.stop(t, os.Interrupt)
		})
	}
}
