package fusefs

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTarOfGeneratedFiles: tar c of history/ and meta/ keeps the real
// bytes (generated files report their true size), and version files carry
// their own times, not the mount's.
func TestTarOfGeneratedFiles(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("semantic/t.md")
	must(t, os.WriteFile(p, []byte("---\ntags: [tar]\n---\nfirst text\n"), 0o644))
	written := time.Now()
	time.Sleep(1100 * time.Millisecond) // the version's time differs from the next write's
	must(t, os.WriteFile(p, []byte("---\ntags: [tar]\n---\nsecond text, longer\n"), 0o644))
	must(t, os.WriteFile(tf.path("semantic/broken.md"), []byte("---\ntags: [x\n---\nbody\n"), 0o644))
	if fi, err := os.Stat(tf.path("meta/index.json")); err != nil || fi.Size() == 0 {
		t.Fatalf("meta/index.json reports size %v (%v)", fi.Size(), err)
	}
	v1 := tf.path("history/semantic/t.md/v1.md")
	fi, err := os.Stat(v1)
	must(t, err)
	if fi.Size() != int64(len("---\ntags: [tar]\n---\nfirst text\n")) {
		t.Errorf("v1.md reports size %d", fi.Size())
	}
	if d := fi.ModTime().Sub(written); d < -time.Second || d > time.Second {
		t.Errorf("v1.md mtime %v, written at %v", fi.ModTime(), written)
	}

	dir := t.TempDir()
	tarball := filepath.Join(dir, "g.tar")
	if out, err := exec.Command("tar", "-C", tf.dir, "-cf", tarball, "history", "meta").CombinedOutput(); err != nil {
		t.Fatalf("tar c: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "x")
	must(t, os.Mkdir(out, 0o755))
	if o, err := exec.Command("tar", "-C", out, "-xf", tarball).CombinedOutput(); err != nil {
		t.Fatalf("tar x: %v\n%s", err, o)
	}
	for _, rel := range []string{"history/semantic/t.md/v1.md", "meta/index.json", "meta/schema.json", "meta/errors", "meta/policy.yaml"} {
		got, err := os.ReadFile(filepath.Join(out, rel))
		must(t, err)
		want := read(t, tf.path(rel))
		if string(got) != want || len(got) == 0 {
			t.Errorf("%s: tar kept %d bytes, the file holds %d", rel, len(got), len(want))
		}
	}
	var stats map[string]any
	b, err := os.ReadFile(filepath.Join(out, "meta/stats.json"))
	must(t, err)
	if err := json.Unmarshal(b, &stats); err != nil || stats["memories"] == nil {
		t.Errorf("meta/stats.json through tar: %v\n%s", err, b)
	}
	if !strings.Contains(read(t, filepath.Join(out, "meta/errors")), "broken.md") {
		t.Error("meta/errors through tar lacks the broken memory")
	}
}
