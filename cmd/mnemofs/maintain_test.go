package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMaintainCommand: `mnemofs maintain` through a running mount, with
// --now in the future: a dry run lists the archiving of an idle working
// memory and changes nothing; the real pass moves it (history and content
// intact) and writes meta/maintenance.log; a second pass does nothing.
func TestMaintainCommand(t *testing.T) {
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	check(t, os.MkdirAll(p("working/task"), 0o755))
	check(t, os.WriteFile(p("working/task/notes.md"), []byte("draft\n"), 0o644))
	future := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)

	r := mustRun(t, "maintain", "--data", data, "--dry-run", "--now", future)
	if !strings.Contains(r.stdout, "would archive /working/task/notes.md -> /archive/scratchpads/") {
		t.Fatalf("dry run: %s", r)
	}
	if _, err := os.Stat(p("working/task/notes.md")); err != nil {
		t.Fatalf("the dry run moved the file: %v", err)
	}
	r = mustRun(t, "maintain", "--data", data, "--now", future)
	if !strings.Contains(r.stdout, "1 actions, 0 errors") {
		t.Fatalf("pass: %s", r)
	}
	day := time.Now().UTC().Format("2006-01-02")
	if b, err := os.ReadFile(p("archive/scratchpads/" + day + "/task/notes.md")); err != nil || string(b) != "draft\n" {
		t.Fatalf("archived memory: %q, %v", b, err)
	}
	if _, err := os.Stat(p("working/task/notes.md")); err == nil {
		t.Fatal("the memory is still in working/")
	}
	log, err := os.ReadFile(p("meta/maintenance.log"))
	if err != nil || !strings.Contains(string(log), "archive /working/task/notes.md") {
		t.Fatalf("meta/maintenance.log: %q, %v", log, err)
	}
	r = mustRun(t, "maintain", "--data", data, "--now", future)
	if !strings.Contains(r.stdout, "0 actions, 0 errors") {
		t.Fatalf("second pass: %s", r)
	}
	if bad := runMnemofs(t, "maintain", "--data", data, "--now", "someday"); bad.code != 1 {
		t.Fatalf("a bad --now: %s", bad)
	}
	m.stop(t, syscall.SIGTERM)
	if r := runMnemofs(t, "fsck", "--data", data); r.code != 0 || !strings.Contains(r.stdout, "consistent") {
		t.Fatalf("fsck after maintenance: %s", r)
	}
}
