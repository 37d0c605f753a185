package e2e

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// asNobody runs a command as uid/gid 65534 and returns its output and
// whether it succeeded.
func asNobody(args ...string) (string, bool) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// TestAllowOtherGeneratedFiles: with --allow-other, a local user who may
// not read a 0600 file learns nothing of it through any generated file:
// search listings and .results, context/, history/ (versions keep the
// owner and mode they had), every view, and meta/* are computed for that
// user. The owner still sees everything.
func TestAllowOtherGeneratedFiles(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as another user")
	}
	data, base := t.TempDir(), t.TempDir()
	mnt := filepath.Join(base, "mnt")
	check(t, os.Mkdir(mnt, 0o755))
	for _, d := range []string{base, filepath.Dir(base)} {
		check(t, os.Chmod(d, 0o755))
	}
	m := startMount(t, data, mnt, "--allow-other")
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	secret := p("semantic/rootonly.md")
	check(t, os.WriteFile(secret, []byte("---\ntags: [hush]\nrelated: [public.md]\n---\nthe vault code is kumquatsecret\n"), 0o600))
	check(t, os.WriteFile(secret, []byte("---\ntags: [hush]\n---\nthe vault code is kumquatsecret, changed\n"), 0o600))
	check(t, os.Chmod(secret, 0o600))
	check(t, os.MkdirAll(p("semantic/closed"), 0o700))
	check(t, os.WriteFile(p("semantic/closed/open.md"), []byte("in a closed room: kumquatsecret\n"), 0o644))
	check(t, os.WriteFile(p("semantic/public.md"), []byte("---\ntags: [open]\n---\nthe kumquat is a fruit\n"), 0o644))
	mustRun(t, "maintain", "--data", data)

	if _, ok := asNobody("cat", secret); ok {
		t.Fatal("nobody read the 0600 file itself")
	}
	// Phrases of the hidden memories (a file may echo a query's words).
	leaks := []string{"rootonly", "code is kumquatsecret", "room: kumquatsecret", "closed/open.md", `"hush"`, "by-tag/hush"}
	files := []string{
		"search/kumquatsecret/.results", "search/vault%20code/.results", "search/kumquat/.results",
		"context/kumquatsecret", "context/vault", "by-tag/open/search/kumquat/.results",
		"meta/index.json", "meta/stats.json", "meta/errors", "meta/maintenance.log", "meta/report.html",
	}
	for _, f := range files {
		out, ok := asNobody("cat", p(f))
		if !ok {
			t.Errorf("nobody cannot read %s: %s", f, out)
		}
		for _, l := range leaks {
			if strings.Contains(out, l) {
				t.Errorf("nobody reads %q in %s:\n%s", l, f, out)
			}
		}
	}
	// Listings: searches, views, the tag of the secret file.
	for _, d := range []string{"search/kumquatsecret", "search/kumquat", "by-tag", "by-type/semantic/semantic", "recent/semantic", "by-date"} {
		out, _ := asNobody("ls", "-laR", p(d))
		for _, l := range []string{"rootonly", "closed", "hush"} {
			if strings.Contains(out, l) {
				t.Errorf("nobody lists %q in %s:\n%s", l, d, out)
			}
		}
	}
	if out, ok := asNobody("ls", p("search/"+url.PathEscape("the kumquat"))); !ok || !strings.Contains(out, "public.md") {
		t.Errorf("nobody does not find the public memory: %s", out)
	}
	// history/: the versions of the 0600 file are its owner's.
	if out, ok := asNobody("cat", p("history/semantic/rootonly.md/v1.md")); ok || strings.Contains(out, "kumquat") {
		t.Errorf("nobody reads an old version of the 0600 file: %s", out)
	}
	if b, err := os.ReadFile(p("history/semantic/rootonly.md/v1.md")); err != nil || !strings.Contains(string(b), "kumquatsecret") {
		t.Errorf("the owner cannot read the old version: %v", err)
	}
	// The owner sees it all.
	if b, err := os.ReadFile(p("search/kumquatsecret/.results")); err != nil || !strings.Contains(string(b), "rootonly.md") {
		t.Errorf("the owner's search lacks the secret file: %v\n%s", err, b)
	}
	if b, err := os.ReadFile(p("meta/index.json")); err != nil || !strings.Contains(string(b), "rootonly.md") {
		t.Errorf("the owner's index lacks the secret file: %v", err)
	}
	if b, err := os.ReadFile(p("meta/report.html")); err != nil || !strings.Contains(string(b), `data-label="hush"`) {
		t.Errorf("the owner's report lacks the secret file's tag: %v", err)
	}
	m.stop(t, syscall.SIGTERM)
}
