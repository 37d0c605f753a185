package e2e

// Hostile queries (every odd byte under search/ and context/ and through
// mnemofs search) and hostile depth (200 levels of directories).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestHostileSearchQueries looks up queries made of every odd byte under
// search/ and context/ and runs them through `mnemofs search`: each gives
// a clear error (EINVAL, ENOENT, exit 1) or a result, never a crash, and
// the mount answers afterwards.
func TestHostileSearchQueries(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	check(t, os.WriteFile(filepath.Join(mnt, "semantic/known.md"), []byte("a memory about the okapi\n"), 0o644))
	var queries []string
	for b := 1; b < 0x20; b++ {
		queries = append(queries, string(rune(b)), "okapi"+string(rune(b))+"okapi")
	}
	queries = append(queries, "\x7f", "okapi\x7f", "%", "%%", "%zz", "%0", "%00", "okapi%00", "%2F", "%2F%2F..%2F..",
		"%25", "%%25", "%C3", "%C3%28", "%FF%FE", "\xff", "\xfe\xff", "\xc3\x28", "\xc0\xaf", "\xed\xa0\x80", "okapi\xff",
		"k:0", "k:-1", "k:99999999999999999999999", "budget:0", "after:", "after:garbage", "before:9999-99-99",
		"path:", "path:..", "user:", "archived:maybe", "::::", ":", "k:", "\u202eokapi", "\ufeff",
		strings.Repeat("okapi ", 42), strings.Repeat("%", 255), strings.Repeat("\xff", 255))
	bad := func(err error) bool {
		return err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT)
	}
	for _, q := range queries {
		if len(q) > 255 {
			q = q[:255]
		}
		for _, tree := range []string{"search", "by-type/semantic/search"} {
			dir := filepath.Join(mnt, tree, q)
			_, err := os.Stat(dir)
			if bad(err) {
				t.Errorf("stat %s/%q: %v, want a result, EINVAL or ENOENT", tree, q, err)
			}
			if err != nil {
				continue
			}
			if _, err := os.ReadDir(dir); err != nil {
				t.Errorf("listing %s/%q: %v", tree, q, err)
			}
			if _, err := os.ReadFile(filepath.Join(dir, ".results")); err != nil {
				t.Errorf("reading %s/%q/.results: %v", tree, q, err)
			}
		}
		if _, err := os.ReadFile(filepath.Join(mnt, "context", q)); bad(err) {
			t.Errorf("context/%q: %v", q, err)
		}
		if m.exited() {
			t.Fatalf("the mount died on query %q\nstderr: %s", q, m.stderr.String())
		}
	}
	// The same through the command line (a query may not hold NUL): a
	// result, or one error line with exit 1 (a user error), never a panic.
	for _, q := range []string{"\x01", "%", "%zz", "\xff\xfe", "k:-1", "after:garbage", "okapi\x7f", "", "path:../../.."} {
		r := runMnemofs(t, "search", "--data", data, q)
		lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
		if r.code != 0 && (r.code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "mnemofs: ")) || strings.Contains(r.stderr, "panic") {
			t.Errorf("mnemofs search %q: %s", q, r)
		}
	}
	names, err := os.ReadDir(filepath.Join(mnt, "search", "okapi"))
	if err != nil || len(names) != 2 {
		t.Errorf("a plain search after the odd ones: %v, %v", names, err)
	}
	alive(t, m, "after odd queries")
}

func TestHostileDeepNesting(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	const depth = 200
	var parts []string
	for i := range depth {
		parts = append(parts, fmt.Sprintf("n%03d", i))
	}
	rel := filepath.Join(append([]string{"working", "deep"}, parts...)...)
	check(t, os.MkdirAll(filepath.Join(mnt, rel), 0o755))
	leaf := filepath.Join(rel, "leaf.md")
	check(t, os.WriteFile(filepath.Join(mnt, leaf), []byte("the bottom holds a quetzalcoatl\n"), 0o644))
	verify := func(root, when string) {
		t.Helper()
		if b, err := os.ReadFile(filepath.Join(mnt, root, "n000", strings.Join(parts[1:], "/"), "leaf.md")); err != nil || !strings.Contains(string(b), "quetzalcoatl") {
			t.Errorf("%s: leaf: %q, %v", when, b, err)
		}
		dirs := 0
		err := filepath.WalkDir(filepath.Join(mnt, root), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs++
			}
			return err
		})
		if err != nil || dirs != depth+1 {
			t.Errorf("%s: walking %s: %d directories, %v", when, root, dirs, err)
		}
		names, err := os.ReadDir(filepath.Join(mnt, "search", "quetzalcoatl"))
		if err != nil || len(names) != 2 {
			t.Errorf("%s: search for the leaf: %v, %v", when, names, err)
		}
		res, err := os.ReadFile(filepath.Join(mnt, "search", "quetzalcoatl", ".results"))
		if err != nil || !strings.Contains(string(res), filepath.Join(root, "n000", strings.Join(parts[1:], "/"), "leaf.md")) {
			t.Errorf("%s: .results does not name the leaf at %s: %.300q, %v", when, root, res, err)
		}
	}
	verify("working/deep", "created")
	// The view mirrors it at twice the length.
	if b, err := os.ReadFile(filepath.Join(mnt, "by-type/working", leaf)); err != nil || !strings.Contains(string(b), "quetzalcoatl") {
		t.Errorf("leaf through by-type/: %q, %v", b, err)
	}
	check(t, os.Rename(filepath.Join(mnt, "working/deep"), filepath.Join(mnt, "semantic/deep")))
	verify("semantic/deep", "after moving the top")
	m.stop(t, syscall.SIGTERM)
	fsckClean(t, data, "after deep nesting")
	m = startMount(t, data, mnt)
	verify("semantic/deep", "after a remount")
	check(t, os.RemoveAll(filepath.Join(mnt, "semantic/deep")))
	alive(t, m, "after deep nesting")
}
