package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImportIndex: an import leaves the index behind (its snapshot; the
// default, --index), so that the next mount reads it rather than
// building, and its first search finds what was imported; --index=false
// leaves it to the mount; a store that keeps no snapshot (encrypted)
// imports as before, and says so when --index was asked for.
func TestImportIndex(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	for i := range 40 {
		p := filepath.Join(src, fmt.Sprintf("d%d", i%3), fmt.Sprintf("n%02d.md", i))
		check(t, os.MkdirAll(filepath.Dir(p), 0o755))
		check(t, os.WriteFile(p, []byte(fmt.Sprintf("---\ntags: [t%d]\n---\nnote %d about a kingfisher %d\n", i%4, i, i)), 0o644))
	}
	check(t, os.WriteFile(filepath.Join(src, "rare.md"), []byte("the only nightjar here\n"), 0o644))

	t.Run("kept", func(t *testing.T) {
		plain := t.TempDir()
		mustRun(t, "import", src, "--index=false", "--data", plain)
		if _, err := os.Stat(filepath.Join(plain, "index")); err == nil {
			t.Error("import --index=false left an index snapshot")
		}
		data := t.TempDir()
		r := mustRun(t, "import", src, "--data", data)
		if !strings.Contains(r.stdout, "imported 41 files") || !strings.Contains(r.stdout, "indexed in") {
			t.Errorf("import --index said:\n%s", r)
		}
		if _, err := os.Stat(filepath.Join(data, "index", "views.snap")); err != nil {
			t.Fatalf("no index snapshot after import --index: %v", err)
		}
		mnt := t.TempDir()
		m := startMount(t, data, mnt)
		ents, err := os.ReadDir(filepath.Join(mnt, "search", "nightjar"))
		found := false
		for _, e := range ents {
			found = found || e.Name() == "01-rare.md"
		}
		if err != nil || !found {
			t.Errorf("search/nightjar after import --index: %v, %v", ents, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(m.stderr.String(), "from its snapshot") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if log := m.stderr.String(); !strings.Contains(log, "read the index of 41 memories from its snapshot") || strings.Contains(log, "indexed ") {
			t.Errorf("the mount after import --index did not start from the index it left:\n%s", log)
		}
	})

	t.Run("encrypted", func(t *testing.T) {
		data, key := t.TempDir(), filepath.Join(t.TempDir(), "key")
		check(t, os.WriteFile(key, []byte("0123456789abcdef0123456789abcdef"), 0o600))
		r := mustRun(t, "import", src, "--data", data, "--encryption-key-file", key)
		if !strings.Contains(r.stdout, "imported 41 files") || strings.Contains(r.stdout, "indexed") {
			t.Errorf("import of an encrypted store:\n%s", r)
		}
		r = runMnemofs(t, "import", src, "--to", "/again", "--index", "--data", data, "--encryption-key-file", key)
		if r.code == 0 || !strings.Contains(r.stdout, "imported 41 files") || !strings.Contains(r.stderr, "keeps no index") {
			t.Errorf("import --index of an encrypted store:\n%s", r)
		}
		if _, err := os.Stat(filepath.Join(data, "index")); err == nil {
			t.Error("an encrypted store got an index snapshot")
		}
	})
}
