package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOddNamesAndHugeFrontMatter: a name that is not UTF-8 keeps its exact
// bytes in meta/index.json and search --json (path_base64) and is found by
// search; a front matter block too large to parse is reported in
// meta/errors and the xattr, never silently ignored, and fails closed
// under --user (whom it names is unknown).
func TestOddNamesAndHugeFrontMatter(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	m := startMount(t, data, mnt)
	odd := "semantic/caf\xe9-\xff.md"
	check(t, os.WriteFile(p(odd), []byte("the wombatword lives here\n"), 0o644))
	huge := append([]byte("---\nuser: bob\nnote: \""), bytes.Repeat([]byte("x"), 10<<20)...)
	huge = append(huge, "\"\n---\nbody of the huge one\n"...)
	check(t, os.WriteFile(p("semantic/huge.md"), huge, 0o644))

	idx, err := os.ReadFile(p("meta/index.json"))
	check(t, err)
	var index struct {
		Memories []struct {
			Path       string `json:"path"`
			PathBase64 string `json:"path_base64"`
		} `json:"memories"`
	}
	check(t, json.Unmarshal(idx, &index))
	found := false
	for _, in := range index.Memories {
		if b, _ := base64.StdEncoding.DecodeString(in.PathBase64); string(b) == "/"+odd {
			found = true
		}
	}
	if !found {
		t.Errorf("meta/index.json has no exact path for a non-UTF-8 name:\n%s", idx)
	}
	ents, err := os.ReadDir(p("search/wombatword"))
	check(t, err)
	if len(ents) != 2 || ents[1].Name() != "01-"+filepath.Base(odd) {
		t.Errorf("search/wombatword lists %v", ents)
	}
	out := mustRun(t, "search", "--data", data, "--json", "wombatword").stdout
	if !strings.Contains(out, base64.StdEncoding.EncodeToString([]byte("/"+odd))) {
		t.Errorf("search --json has no exact path:\n%s", out)
	}

	errs, err := os.ReadFile(p("meta/errors"))
	check(t, err)
	if !strings.Contains(string(errs), "/semantic/huge.md\tfront matter over") {
		t.Errorf("meta/errors does not report the huge front matter:\n%s", errs)
	}
	if e, _ := getxattr(p("semantic/huge.md"), "user.mnemofs.error"); !strings.Contains(e, "not parsed") {
		t.Errorf("user.mnemofs.error of the huge file: %q", e)
	}
	m.stop(t, syscall.SIGTERM)
	m = startMount(t, data, mnt, "--user", "alice")
	if _, err := os.Stat(p("semantic/huge.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("alice sees a memory whose front matter was too large to read: %v", err)
	}
	m.stop(t, syscall.SIGTERM)
}
