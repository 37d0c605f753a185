package e2e

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestIsolationFailsClosed: the leaks and integrity breaks found under
// --user alice, one by one. Bob's memories: one whose front matter does
// not parse, one whose first version was bob's before it was made public,
// one alice links to and one she copies, and his directory. (His trash:
// the retention is the operator's, TestPolicyCommandNotFromMount.)
func TestIsolationFailsClosed(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	p := func(rel string) string { return filepath.Join(mnt, rel) }

	m := startMount(t, data, mnt)
	check(t, os.MkdirAll(p("semantic/bob"), 0o755))
	// Broken front matter: whose it is cannot be known.
	check(t, os.WriteFile(p("semantic/bob/broken.md"), []byte("---\nuser: bob\ntags: [x\n---\nbroken words pangolinbob\n"), 0o644))
	// Bob's first, public later: v1 is bob's.
	check(t, os.WriteFile(p("semantic/madepublic.md"), []byte("---\nuser: bob\n---\nfirst draft narwhalbob\n"), 0o644))
	check(t, os.WriteFile(p("semantic/madepublic.md"), []byte("now for everyone\n"), 0o644))
	check(t, os.WriteFile(p("semantic/bob/plans.md"), []byte("---\nuser: bob\n---\nplans of bob: axolotlbob\n"), 0o644))
	check(t, os.WriteFile(p("semantic/bob/copyme.md"), []byte("---\nuser: bob\n---\nguessable text\n"), 0o644))
	check(t, os.WriteFile(p("semantic/shared.md"), []byte("everyone's note\n"), 0o644))
	m.stop(t, syscall.SIGTERM)

	m = startMount(t, data, mnt, "--user", "alice")
	// 1. Unreadable front matter: hidden, not shown to everyone.
	if _, err := os.Stat(p("semantic/bob/broken.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("alice sees a memory whose owner cannot be told: %v", err)
	}
	// 2. history/ keeps v1 (bob's) from alice.
	if b, err := os.ReadFile(p("semantic/madepublic.md")); err != nil || string(b) != "now for everyone\n" {
		t.Fatalf("alice cannot read the public memory: %v", err)
	}
	out, _ := exec.Command("grep", "-r", "narwhalbob", p("history")).CombinedOutput()
	if strings.Contains(string(out), "narwhalbob") {
		t.Errorf("alice reads bob's old version through history/:\n%s", out)
	}
	// 3. Links and 4. duplicates reveal nothing of bob's.
	check(t, os.WriteFile(p("semantic/links.md"), []byte("---\nrelated: [bob/plans.md, bob/nothere.md]\n---\nmy links\n"), 0o644))
	// Bob's exact bytes (a guess): they stay alice's, and no pass may
	// confirm the guess by naming bob's copy.
	guess := []byte("---\nuser: bob\n---\nguessable text\n")
	check(t, os.WriteFile(p("semantic/mycopy.md"), guess, 0o644))
	check(t, os.WriteFile(p("semantic/mycopy2.md"), guess, 0o644))
	m.stop(t, syscall.SIGTERM)
	m = startMount(t, data, mnt) // bob's memory moves
	check(t, os.Rename(p("semantic/bob/plans.md"), p("semantic/bob/plans-2027.md")))
	check(t, os.WriteFile(p("semantic/bob/copyme.md"), []byte("---\nuser: bob\n---\nguessable text\n"), 0o644))
	m.stop(t, syscall.SIGTERM)
	mustRun(t, "maintain", "--data", data)
	m = startMount(t, data, mnt, "--user", "alice")
	idx, err := os.ReadFile(p("meta/index.json"))
	check(t, err)
	for _, leak := range []string{"plans-2027", "/semantic/bob/plans.md", "copyme", "broken"} {
		if strings.Contains(string(idx), leak) {
			t.Errorf("alice's meta/index.json shows %q:\n%s", leak, idx)
		}
	}
	if !strings.Contains(string(idx), `"duplicate_of": "/semantic/mycopy.md"`) {
		t.Errorf("alice's own duplicate is not marked:\n%s", idx)
	}
	if !strings.Contains(string(idx), `"bob/plans.md"`) {
		t.Errorf("alice's link to a hidden memory is not shown as she wrote it:\n%s", idx)
	}
	// 5. stats and the maintenance log count only what alice sees.
	st, err := os.ReadFile(p("meta/stats.json"))
	check(t, err)
	for _, leak := range []string{`"/semantic/bob"`, `"blobs"`} {
		if strings.Contains(string(st), leak) {
			t.Errorf("alice's meta/stats.json shows %s:\n%s", leak, st)
		}
	}
	// madepublic, shared, links, mycopy, mycopy2.
	if !strings.Contains(string(st), `"memories": 5,`) {
		t.Errorf("alice's stats do not count the 5 memories she sees:\n%s", st)
	}
	lg, err := os.ReadFile(p("meta/maintenance.log"))
	check(t, err)
	for _, leak := range []string{"bob"} {
		if strings.Contains(string(lg), leak) {
			t.Errorf("alice's meta/maintenance.log mentions %q:\n%s", leak, lg)
		}
	}
	// 6. Nothing written here can become bob's.
	check(t, os.WriteFile(p("semantic/forbob.md"), []byte("---\nuser: bob\n---\nplanted by alice\n"), 0o644))
	check(t, os.WriteFile(p("semantic/mine.md"), []byte("mine\n"), 0o644))
	check(t, os.WriteFile(p("semantic/mine.md"), []byte("---\nuser: bob\n---\nnow given away?\n"), 0o644))
	if e, _ := getxattr(p("semantic/forbob.md"), "user.mnemofs.error"); !strings.Contains(e, "stays alice's") {
		t.Errorf("writing user: bob in alice's mount is not reported: %q", e)
	}
	// 7. Public and others' memories and directories are not hers to change.
	if err := os.WriteFile(p("semantic/shared.md"), []byte("vandalised\n"), 0o644); !errors.Is(err, syscall.EACCES) {
		t.Errorf("alice overwriting a public memory: %v, want EACCES", err)
	}
	if err := os.Remove(p("semantic/shared.md")); !errors.Is(err, syscall.EACCES) {
		t.Errorf("alice removing a public memory: %v, want EACCES", err)
	}
	check(t, os.MkdirAll(p("archive/trash/x"), 0o755))
	if err := os.Rename(p("semantic/bob"), p("archive/trash/x/bob")); !errors.Is(err, syscall.EACCES) {
		t.Errorf("alice moving bob's directory into the trash: %v, want EACCES", err)
	}
	if err := os.RemoveAll(p("semantic/bob")); err == nil {
		t.Errorf("alice removed bob's directory")
	}
	m.stop(t, syscall.SIGTERM)

	m = startMount(t, data, mnt, "--user", "bob")
	for _, h := range []string{"semantic/forbob.md", "semantic/mine.md"} {
		if _, err := os.Stat(p(h)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("bob sees alice's %s: %v", h, err)
		}
	}
	for _, own := range []string{"semantic/bob/plans-2027.md", "semantic/bob/copyme.md"} {
		if _, err := os.Stat(p(own)); err != nil {
			t.Errorf("bob lost his %s: %v", own, err)
		}
	}
	m.stop(t, syscall.SIGTERM)
}
