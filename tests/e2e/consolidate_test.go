package e2e

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLogSessionConsolidation: a session kept as one turns.jsonl (a line
// a turn, appended as the talk goes on) gets a summary.md on the next
// pass, brought up to date as a new version when turns are appended; the
// pass also writes semantic/profiles/<user>.md with what the user said
// about themselves, each statement linked to its turn. Both are the
// user's: another user's mount sees neither.
func TestLogSessionConsolidation(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	m := startMount(t, data, mnt)
	check(t, os.MkdirAll(p("episodic/sessions/s1"), 0o755))
	log := p("episodic/sessions/s1/turns.jsonl")
	appendLine := func(line string) {
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		check(t, err)
		_, err = f.WriteString(line + "\n")
		check(t, err)
		check(t, f.Close())
	}
	appendLine(`{"user":"alice","speaker":"alice","text":"I love hiking in the Alps. Where should I go?"}`)
	appendLine(`{"user":"alice","speaker":"assistant","text":"Zermatt is lovely in June."}`)
	appendLine(`{"user":"alice","speaker":"alice","text":"My budget is 2000 francs."}`)
	mustRun(t, "maintain", "--data", data)
	sum := p("episodic/sessions/s1/summary.md")
	b, err := os.ReadFile(sum)
	check(t, err)
	for _, want := range []string{"summary_turns: 3", `users: ["alice"]`, "Zermatt is lovely in June.", "(alice): I love hiking in the Alps."} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary lacks %q:\n%s", want, b)
		}
	}
	prof := p("semantic/profiles/alice.md")
	b, err = os.ReadFile(prof)
	check(t, err)
	for _, want := range []string{"I love hiking in the Alps.", "My budget is 2000 francs.", "/episodic/sessions/s1/turns.jsonl#L1", "/episodic/sessions/s1/turns.jsonl#L3", "related_files:"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("profile lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "Where should I go") || strings.Contains(string(b), "Zermatt") {
		t.Errorf("the profile holds a question or another speaker's words:\n%s", b)
	}
	// Nothing new: nothing rewritten.
	r := mustRun(t, "maintain", "--data", data)
	if strings.Contains(r.stdout, "summary ") || strings.Contains(r.stdout, "profile ") {
		t.Errorf("a pass with no new turns rewrote:\n%s", r.stdout)
	}
	appendLine(`{"user":"alice","speaker":"alice","text":"I plan to take the train from Zurich."}`)
	mustRun(t, "maintain", "--data", data)
	b, err = os.ReadFile(sum)
	check(t, err)
	if !strings.Contains(string(b), "summary_turns: 4") || !strings.Contains(string(b), "train from Zurich") {
		t.Errorf("the summary is not up to date after an append:\n%s", b)
	}
	if v, err := os.ReadFile(p("history/episodic/sessions/s1/summary.md/v1.md")); err != nil || !strings.Contains(string(v), "summary_turns: 3") {
		t.Errorf("the old summary is not a version: %v\n%s", err, v)
	}
	if b, _ := os.ReadFile(prof); !strings.Contains(string(b), "I plan to take the train from Zurich.") {
		t.Errorf("the profile is not up to date:\n%s", b)
	}
	if _, err := os.Stat(p("history/semantic/profiles/alice.md/v1.md")); err != nil {
		t.Errorf("the old profile is not a version: %v", err)
	}
	m.stop(t, syscall.SIGTERM)

	m = startMount(t, data, mnt, "--user", "bob")
	for _, h := range []string{"semantic/profiles/alice.md", "episodic/sessions/s1/summary.md", "episodic/sessions/s1/turns.jsonl"} {
		if _, err := os.Stat(p(h)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("bob sees alice's %s: %v", h, err)
		}
	}
	m.stop(t, syscall.SIGTERM)
	m = startMount(t, data, mnt, "--user", "alice")
	if _, err := os.ReadFile(p("semantic/profiles/alice.md")); err != nil {
		t.Errorf("alice cannot read her profile: %v", err)
	}
	m.stop(t, syscall.SIGTERM)
}

// TestProfileTellsNothingOfOthers: alice's profile, made from a log she
// shares with bob, links her lines as her view of the log numbers them
// (nothing of bob's lines between), and a change of bob's memories
// changes nothing in it: not its source count, not a new version.
func TestProfileTellsNothingOfOthers(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	m := startMount(t, data, mnt)
	check(t, os.MkdirAll(p("episodic/sessions/s1"), 0o755))
	check(t, os.MkdirAll(p("episodic/bobpriv"), 0o755))
	check(t, os.WriteFile(p("episodic/sessions/s1/turns.jsonl"), []byte(
		`{"user":"bob","speaker":"bob","text":"I like secret things."}`+"\n"+
			`{"user":"alice","speaker":"alice","text":"I love hiking in the Alps."}`+"\n"+
			`{"user":"bob","speaker":"bob","text":"I am planning a surprise."}`+"\n"+
			`{"user":"alice","speaker":"alice","text":"My budget is 2000 francs."}`+"\n"), 0o644))
	diary := p("episodic/bobpriv/diary.md")
	check(t, os.WriteFile(diary, []byte("---\nuser: bob\nspeaker: bob\n---\nI have a diary.\n"), 0o644))
	m.stop(t, syscall.SIGTERM)
	mustRun(t, "maintain", "--data", data)
	m = startMount(t, data, mnt)
	before, err := os.ReadFile(p("semantic/profiles/alice.md"))
	check(t, err)
	for _, want := range []string{"/episodic/sessions/s1/turns.jsonl#L1", "/episodic/sessions/s1/turns.jsonl#L2"} {
		if !strings.Contains(string(before), want) {
			t.Errorf("alice's profile lacks the link %s (her view of the log):\n%s", want, before)
		}
	}
	if strings.Contains(string(before), "#L4") {
		t.Errorf("alice's profile numbers her line as the whole log does:\n%s", before)
	}
	check(t, os.WriteFile(diary, []byte("---\nuser: bob\nspeaker: bob\n---\nI have a diary.\nI wrote a lot more in it today.\n"), 0o644))
	m.stop(t, syscall.SIGTERM)
	mustRun(t, "maintain", "--data", data)
	m = startMount(t, data, mnt)
	after, err := os.ReadFile(p("semantic/profiles/alice.md"))
	check(t, err)
	if string(after) != string(before) {
		t.Errorf("bob's diary changed alice's profile:\n%s\nwas:\n%s", after, before)
	}
	if _, err := os.Stat(p("history/semantic/profiles/alice.md/v1.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bob's diary made a new version of alice's profile: %v", err)
	}
	m.stop(t, syscall.SIGTERM)
	// In her own mount, the lines the links name are hers.
	m = startMount(t, data, mnt, "--user", "alice")
	b, err := os.ReadFile(p("episodic/sessions/s1/turns.jsonl"))
	check(t, err)
	if lines := strings.Split(string(b), "\n"); len(lines) < 2 || !strings.Contains(lines[0], "Alps") || !strings.Contains(lines[1], "2000 francs") {
		t.Errorf("alice's view of the log:\n%s", b)
	}
	m.stop(t, syscall.SIGTERM)
}

// TestPassInUserMountSeesWhole: a maintenance pass run while a --user
// mount holds the store (through its socket) plans from the whole store,
// as the operator's does: a session whose log holds lines of alice and
// of bob gets no summary, which neither of them could read whole.
func TestPassInUserMountSeesWhole(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	m := startMount(t, data, mnt)
	check(t, os.MkdirAll(p("episodic/sessions/s1"), 0o755))
	check(t, os.WriteFile(p("episodic/sessions/s1/turns.jsonl"), []byte(
		`{"user":"alice","speaker":"alice","text":"I love hiking in the Alps."}`+"\n"+
			`{"user":"bob","speaker":"bob","text":"I am planning a surprise."}`+"\n"+
			`{"user":"alice","speaker":"alice","text":"My budget is 2000 francs."}`+"\n"+
			`{"user":"bob","speaker":"bob","text":"I like secret things."}`+"\n"), 0o644))
	m.stop(t, syscall.SIGTERM)
	m = startMount(t, data, mnt, "--user", "alice")
	mustRun(t, "maintain", "--data", data)
	if _, err := os.Stat(p("episodic/sessions/s1/summary.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a pass in alice's mount summarised the shared session from her view: %v", err)
	}
	b, err := os.ReadFile(p("semantic/profiles/alice.md"))
	check(t, err)
	if !strings.Contains(string(b), "turns.jsonl#L2") || strings.Contains(string(b), "#L3") {
		t.Errorf("alice's profile does not link her lines as her view numbers them:\n%s", b)
	}
	m.stop(t, syscall.SIGTERM)
}
