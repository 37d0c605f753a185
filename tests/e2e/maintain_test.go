package e2e

import (
	"encoding/json"
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
	t.Parallel()
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

// TestArchivedSessionThroughMount: a cold low-importance session written
// through the mount is archived whole by `mnemofs maintain`, packed
// (meta/stats.json counts it), and still reads byte for byte, greps, and is
// found by search with archived:true (not without); an append through the
// mount unpacks the turn; fsck is clean after.
func TestArchivedSessionThroughMount(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	check(t, os.MkdirAll(p("episodic/sessions/trip"), 0o755))
	turns := map[string]string{
		"turn-1.md": "---\nimportance: 0.1\nspeaker: alice\n---\nShall we take the night train to Lisbon?\n",
		"turn-2.md": "---\nimportance: 0.2\nspeaker: bob\n---\nYes, the night train to Lisbon leaves at ten.\n",
	}
	for name, body := range turns {
		check(t, os.WriteFile(p("episodic/sessions/trip/"+name), []byte(body), 0o644))
	}
	later := time.Now().Add(40 * 24 * time.Hour).UTC()
	r := mustRun(t, "maintain", "--data", data, "--now", later.Format(time.RFC3339))
	if !strings.Contains(r.stdout, "archive /episodic/sessions/trip -> /archive/sessions/") {
		t.Fatalf("pass: %s", r)
	}
	arch := "archive/sessions/" + time.Now().UTC().Format("2006-01") + "/trip/"
	for name, body := range turns {
		if b, err := os.ReadFile(p(arch + name)); err != nil || string(b) != body {
			t.Fatalf("%s: %q, %v", name, b, err)
		}
	}
	if _, err := os.Stat(p(arch + "summary.md")); err != nil {
		t.Fatalf("no summary in the archived session: %v", err)
	}
	if _, err := os.Stat(p("episodic/sessions/trip")); !os.IsNotExist(err) {
		t.Fatalf("the session is still in episodic/: %v", err)
	}
	packed := func(b []byte) int {
		var st struct {
			Packs struct{ Packs, Files int } `json:"archive_packs"`
		}
		check(t, json.Unmarshal(b, &st))
		return st.Packs.Files
	}
	stats, err := os.ReadFile(p("meta/stats.json"))
	check(t, err)
	if n := packed(stats); n != 3 { // the two turns and the summary
		t.Fatalf("meta/stats.json counts %d packed files: %s", n, stats)
	}
	found := func(q string) bool {
		ents, err := os.ReadDir(p("search/" + q))
		check(t, err)
		for _, e := range ents {
			if strings.Contains(e.Name(), "turn-2.md") {
				return true
			}
		}
		return false
	}
	if !found("night train archived:true") || found("night train") {
		t.Fatal("search: want the archived turn with archived:true only")
	}
	f, err := os.OpenFile(p(arch+"turn-2.md"), os.O_APPEND|os.O_WRONLY, 0)
	check(t, err)
	_, err = f.WriteString("Booked.\n")
	check(t, err)
	check(t, f.Close())
	if b, _ := os.ReadFile(p(arch + "turn-2.md")); string(b) != turns["turn-2.md"]+"Booked.\n" {
		t.Fatalf("after an append: %q", b)
	}
	m.stop(t, syscall.SIGTERM)
	if r := runMnemofs(t, "fsck", "--data", data); r.code != 0 || !strings.Contains(r.stdout, "consistent") {
		t.Fatalf("fsck: %s", r)
	}
	r = mustRun(t, "stats", "--data", data, "--json")
	if n := packed([]byte(r.stdout)); n != 2 { // summary.md and turn-1.md are still packed
		t.Fatalf("stats after the append: %d packed: %s", n, r.stdout)
	}
}
