package fusefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// FuzzViewNames: any name looked up, listed or read in any generated
// directory of a real mount answers with a file, a directory or a plain
// error (never EIO, never a dead mount), and the mount stays up.
func FuzzViewNames(f *testing.F) {
	for _, s := range []string{"food", "alice", "semantic", "2026", "12", "v1.md", "a.md", ".results", "ramen k:2",
		"%2F..%2F..", "user:alice tag:food", "budget:1", "\xff\xfe", "..", "k:0", "after:9999-99-99", "by-tag",
		strings.Repeat("x", 255), "拉面", "search", "index.json", "policy.yaml"} {
		f.Add(s)
	}
	tf := testMount(f)
	p := tf.path
	check := func(err error) {
		if err != nil {
			f.Fatal(err)
		}
	}
	check(os.MkdirAll(p("semantic/notes"), 0o755))
	check(os.WriteFile(p("semantic/notes/a.md"), []byte("---\nuser: alice\ntags: [food, ramen]\ncreated: 2026-12-01\n---\nramen in Tokyo\n"), 0o644))
	check(os.WriteFile(p("semantic/notes/a.md"), []byte("---\nuser: alice\ntags: [food, ramen]\ncreated: 2026-12-01\n---\nramen in Osaka\n"), 0o644))
	check(os.WriteFile(p("episodic/log.jsonl"), []byte(`{"text":"ramen again"}`+"\n"), 0o644))
	dirs := []string{"", "by-tag", "by-user", "by-type", "by-date", "by-date/2026", "by-date/2026/12", "search", "context",
		"history", "history/semantic/notes", "history/semantic/notes/a.md", "meta", "recent", "by-tag/food", "by-tag/food/search",
		"by-user/alice/semantic"}
	f.Fuzz(func(t *testing.T, name string) {
		if name == "" || name == "." || name == ".." || len(name) > 255 || strings.ContainsAny(name, "/\x00") {
			return // the kernel never sends these
		}
		for _, d := range dirs {
			full := filepath.Join(p(d), name)
			fi, err := os.Lstat(full)
			if err == nil && fi.IsDir() {
				ents, err := os.ReadDir(full)
				sane(t, full, err)
				for _, e := range ents {
					if !e.IsDir() {
						_, err := os.ReadFile(filepath.Join(full, e.Name()))
						sane(t, filepath.Join(full, e.Name()), err)
					}
				}
			} else if err == nil {
				_, err = os.ReadFile(full)
				sane(t, full, err)
			} else {
				sane(t, full, err)
			}
		}
		if _, err := os.Stat(p("meta/stats.json")); err != nil {
			t.Fatalf("the mount is gone after %q: %v", name, err)
		}
	})
}

// sane fails the test when err is not an answer a caller can act on.
func sane(t *testing.T, what string, err error) {
	t.Helper()
	for _, ok := range []syscall.Errno{syscall.ENOENT, syscall.EINVAL, syscall.ENAMETOOLONG, syscall.EACCES, syscall.ENOTDIR, syscall.EISDIR} {
		if errors.Is(err, ok) {
			return
		}
	}
	if err != nil {
		t.Fatalf("%q: %v", what, err)
	}
}
