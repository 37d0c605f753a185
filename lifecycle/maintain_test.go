package lifecycle

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/storetest"
	"github.com/mnemofs/mnemofs/policy"
	"github.com/mnemofs/mnemofs/store"
)

// TestMaintainLifecycle: with a controllable clock, a pass archives an
// idle working memory and a cold low-importance session, marks cold
// knowledge and duplicates, purges old trash; a dry run changes nothing;
// a second pass does nothing; history and fsck hold.
func TestMaintainLifecycle(t *testing.T) {
	clock := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	s := storetest.NewStore(t, store.Options{Now: func() time.Time { return clock }, ScratchAge: -1})
	mk := func(p string) uint64 { return storetest.MkdirAll(t, s, p) }
	work, sess, kb, sem := mk("/working/task"), mk("/episodic/sessions/s1"), mk("/semantic/knowledge_base"), storetest.DirIno(t, s, "semantic")
	w := storetest.WriteFile(t, s, work, "scratch.md", []byte("notes for a task\n"))
	fresh := storetest.WriteFile(t, s, work, "fresh.md", []byte("still in use\n"))
	low := storetest.WriteFile(t, s, sess, "t1.md", []byte("---\nimportance: 0.1\n---\nsmall talk\n"))
	high := storetest.WriteFile(t, s, sess, "t2.md", []byte("---\nimportance: 0.9\n---\nthe key decision\n"))
	k := storetest.WriteFile(t, s, kb, "fact.md", []byte("water boils at 100 C\n"))
	dup1 := storetest.WriteFile(t, s, sem, "orig.md", []byte("the same bytes\n"))
	storetest.Rewrite(t, s, k, []byte("water boils at 100 °C\n")) // a version to keep
	gone := storetest.WriteFile(t, s, sem, "old.md", []byte("removed long ago\n"))
	_, err := s.Remove(sem, "old.md")
	storetest.Must(t, err)

	clock = clock.Add(200 * 24 * time.Hour) // past every threshold
	dup2 := storetest.WriteFile(t, s, sem, "copy.md", []byte("the same bytes\n"))
	storetest.Rewrite(t, s, fresh, []byte("touched just now\n"))

	dry, err := Maintain(s, Options{DryRun: true})
	storetest.Must(t, err)
	kinds := map[string]int{}
	for _, a := range dry.Actions {
		kinds[a.Kind]++
	}
	if kinds["archive"] != 2 || kinds["cold"] != 1 || kinds["duplicate"] != 1 || kinds["purge"] != 1 {
		t.Fatalf("dry run actions %+v", dry.Actions)
	}
	if p, _ := s.Path(w); p != "/working/task/scratch.md" {
		t.Fatalf("the dry run moved %s", p)
	}

	r, err := Maintain(s, Options{})
	storetest.Must(t, err)
	if len(r.Actions) != len(dry.Actions) || len(r.Errors) != 0 {
		t.Fatalf("pass: %+v", r)
	}
	for ino, want := range map[uint64]string{
		w:     "/archive/scratchpads/2026-01-10/task/scratch.md",
		low:   "/archive/sessions/2026-01/s1/t1.md",
		high:  "/archive/sessions/2026-01/s1/t2.md", // the whole session: 0.9 faded to 0.19 in 200 days
		fresh: "/working/task/fresh.md",
		k:     "/semantic/knowledge_base/fact.md",
	} {
		if p, err := s.Path(ino); err != nil || p != want {
			t.Errorf("inode %d at %q (%v), want %s", ino, p, err, want)
		}
	}
	if in, _ := s.Info(k); !in.Cold {
		t.Error("cold knowledge not marked")
	}
	if in, _ := s.Info(dup2); in.DuplicateOf != "/semantic/orig.md" {
		t.Errorf("duplicate_of %q", in.DuplicateOf)
	}
	if in, _ := s.Info(dup1); in.DuplicateOf != "" {
		t.Error("the earliest copy was marked a duplicate")
	}
	if _, err := s.Attr(gone); err == nil {
		t.Error("old trash was not purged")
	}
	if vs, _ := s.Versions(k); len(vs) != 1 {
		t.Errorf("versions of cold knowledge: %v", vs)
	}
	log, _ := Log(s, nil)
	if !strings.Contains(string(log), "archive /working/task/scratch.md -> /archive/scratchpads/") {
		t.Errorf("maintenance.log:\n%s", log)
	}
	again, err := Maintain(s, Options{})
	storetest.Must(t, err)
	if len(again.Actions) != 0 {
		t.Fatalf("second pass: %+v", again.Actions)
	}
	storetest.FsckClean(t, s)
}

// TestConsolidation: a session with turns and no summary.md gets one,
// extractive by default or from the operator's command; a failing command
// is an error of the pass and writes nothing; a second pass writes no more.
// A command in the stored policy (as older versions kept it) is not run.
func TestConsolidation(t *testing.T) {
	var op policy.Operator
	s := storetest.NewStore(t, store.Options{ScratchAge: -1, Operator: func() (policy.Operator, error) { return op, nil }})
	mkSession := func(name string) uint64 {
		d := storetest.MkdirAll(t, s, "/episodic/sessions/"+name)
		storetest.WriteFile(t, s, d, "turn-1.md", []byte("---\nspeaker: alice\n---\nWe should fly to Lisbon. It is warm there.\n"))
		storetest.WriteFile(t, s, d, "turn-2.md", []byte("---\nspeaker: bob\n---\nAgreed, book the flight for May!\n"))
		return d
	}
	a := mkSession("s1")
	r, err := Maintain(s, Options{})
	storetest.Must(t, err)
	if len(r.Errors) != 0 {
		t.Fatalf("errors: %v", r.Errors)
	}
	sum, err := s.Lookup(a, "summary.md")
	storetest.Must(t, err)
	got := string(storetest.ReadAll(t, s, sum.Ino))
	for _, want := range []string{"type: summary", "turn-1.md (alice): We should fly to Lisbon.", "turn-2.md (bob): Agreed, book the flight for May!"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "It is warm there") {
		t.Errorf("the extractive summary took more than the first sentence:\n%s", got)
	}
	r, err = Maintain(s, Options{})
	storetest.Must(t, err)
	for _, x := range r.Actions {
		if x.Kind == "summary" {
			t.Fatalf("second pass summarized again: %+v", x)
		}
	}

	// A session whose turns are of users who cannot see each other's gets
	// no summary, and the pass says so, to the operator only.
	sh := storetest.MkdirAll(t, s, "/episodic/sessions/shared")
	storetest.WriteFile(t, s, sh, "turns.jsonl", []byte(`{"user":"alice","text":"I booked two kayaks."}`+"\n"+`{"user":"bob","text":"I will pay in cash."}`+"\n"))
	r, err = Maintain(s, Options{})
	storetest.Must(t, err)
	if _, err := s.Lookup(sh, "summary.md"); err == nil {
		t.Fatal("a session of two users who cannot see each other's turns got a summary")
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "/episodic/sessions/shared") {
		t.Fatalf("notes %q, want one about the shared session", r.Notes)
	}
	if b, err := Log(s, nil); err != nil || !strings.Contains(string(b), "note no summary.md for /episodic/sessions/shared") {
		t.Fatalf("the operator's maintenance.log lacks the note (%v):\n%s", err, b)
	}
	if b, _ := Log(s, func(uint64) bool { return true }); strings.Contains(string(b), "sessions/shared") {
		t.Fatalf("a restricted reader's maintenance.log shows the note:\n%s", b)
	}

	// A legacy policy's command is never run.
	marker := filepath.Join(t.TempDir(), "ran")
	storetest.Must(t, s.PutSetting("policy", []byte("consolidation:\n  command: touch "+marker+"\n")))
	leg := mkSession("legacy")
	_, err = Maintain(s, Options{})
	storetest.Must(t, err)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the stored policy's consolidation.command ran")
	}
	if sum, err := s.Lookup(leg, "summary.md"); err != nil || !strings.Contains(string(storetest.ReadAll(t, s, sum.Ino)), "extractive") {
		t.Fatalf("legacy policy: no extractive summary (%v)", err)
	}

	op.Consolidation = &policy.Command{Argv: []string{"tr", "a-z", "A-Z"}, Timeout: policy.Duration(time.Minute)}
	b := mkSession("s2")
	_, err = Maintain(s, Options{})
	storetest.Must(t, err)
	sum, err = s.Lookup(b, "summary.md")
	storetest.Must(t, err)
	if got := string(storetest.ReadAll(t, s, sum.Ino)); !strings.Contains(got, "WE SHOULD FLY TO LISBON") {
		t.Fatalf("command summary:\n%s", got)
	}

	op.Consolidation = &policy.Command{Argv: []string{"sh", "-c", "echo broken >&2; exit 3"}, Timeout: policy.Duration(time.Minute)}
	c := mkSession("s3")
	r, err = Maintain(s, Options{})
	storetest.Must(t, err)
	if len(r.Errors) != 1 || !strings.Contains(r.Errors[0], "broken") {
		t.Fatalf("a failing command: errors %v", r.Errors)
	}
	if _, err := s.Lookup(c, "summary.md"); err == nil {
		t.Fatal("a failing command left a summary")
	}

	// A command past its timeout is killed with its children.
	op.Consolidation = &policy.Command{Argv: []string{"sh", "-c", "sleep 30 & sleep 30"}, Timeout: policy.Duration(200 * time.Millisecond)}
	d := mkSession("s4")
	start := time.Now()
	r, err = Maintain(s, Options{})
	storetest.Must(t, err)
	if !slices.ContainsFunc(r.Errors, func(e string) bool { return strings.Contains(e, "s4: consolidation command sh timed out") }) || time.Since(start) > 10*time.Second {
		t.Fatalf("a hanging command: errors %v after %v", r.Errors, time.Since(start))
	}
	if _, err := s.Lookup(d, "summary.md"); err == nil {
		t.Fatal("a command that timed out left a summary")
	}
	storetest.FsckClean(t, s)
}

// TestSupersededSkills: of two skills with one id, the older moves to
// archive/deprecated_skills/ (with its history); a lone skill stays.
func TestSupersededSkills(t *testing.T) {
	clock := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	s := storetest.NewStore(t, store.Options{Now: func() time.Time { return clock }, ScratchAge: -1})
	d := storetest.MkdirAll(t, s, "/semantic/skills")
	old := storetest.WriteFile(t, s, d, "deploy-v1.md", []byte("---\nid: deploy\n---\nssh and copy\n"))
	storetest.Rewrite(t, s, old, []byte("---\nid: deploy\n---\nssh, copy, restart\n"))
	clock = clock.Add(time.Hour)
	newer := storetest.WriteFile(t, s, d, "deploy-v2.md", []byte("---\nid: deploy\n---\nuse the pipeline\n"))
	lone := storetest.WriteFile(t, s, d, "backup.md", []byte("---\nid: backup\n---\nrsync nightly\n"))
	r, err := Maintain(s, Options{})
	storetest.Must(t, err)
	if len(r.Errors) != 0 {
		t.Fatal(r.Errors)
	}
	for ino, want := range map[uint64]string{old: "/archive/deprecated_skills/deploy-v1.md",
		newer: "/semantic/skills/deploy-v2.md", lone: "/semantic/skills/backup.md"} {
		if p, _ := s.Path(ino); p != want {
			t.Errorf("inode %d at %s, want %s", ino, p, want)
		}
	}
	if vs, _ := s.Versions(old); len(vs) != 1 {
		t.Errorf("the deprecated skill lost its history: %v", vs)
	}
	r, err = Maintain(s, Options{})
	storetest.Must(t, err)
	if len(r.Actions) != 0 {
		t.Fatalf("second pass: %+v", r.Actions)
	}
}
