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

// TestSharedLogSavesAndVersions: whose the lines of a log are holds
// through the ways files are saved and kept, not only through writes in
// place. A log saved by a rename from a temporary name (sed -i, an
// editor, os.replace), a file renamed to a .json or .jsonl name, an old
// version of a shared log, a last line with no newline, users named as
// entities on a line, and a .json naming its user twice: none of bob's
// words reach alice's mount (cat, search, history).
func TestSharedLogSavesAndVersions(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	const alice = `{"user":"alice","text":"alice line a1"}`
	m := startMount(t, data, mnt)
	check(t, os.MkdirAll(p("episodic/s"), 0o755))
	check(t, os.MkdirAll(p("working"), 0o755))
	// sed -i: a new file written under a temporary name, renamed over.
	check(t, os.WriteFile(p("episodic/s/sed.jsonl"), []byte(alice+"\n"+`{"user":"bob","text":"sedsecret"}`+"\n"), 0o644))
	if out, err := exec.Command("sed", "-i", "s/a1/a2/", p("episodic/s/sed.jsonl")).CombinedOutput(); err != nil {
		t.Fatalf("sed -i: %v: %s", err, out)
	}
	// os.replace of a .json memory by a temporary file.
	check(t, os.WriteFile(p("working/j.json"), []byte(`{"user":"bob","text":"old"}`), 0o644))
	check(t, os.WriteFile(p("working/tmpj123"), []byte(`{"user":"bob","text":"replacesecret"}`), 0o644))
	check(t, os.Rename(p("working/tmpj123"), p("working/j.json")))
	// A text file renamed to a .json and a .jsonl name.
	check(t, os.WriteFile(p("working/t.txt"), []byte(`{"user":"bob","text":"mvjsonsecret"}`), 0o644))
	check(t, os.Rename(p("working/t.txt"), p("working/t.json")))
	check(t, os.WriteFile(p("working/l.txt"), []byte(alice+"\n"+`{"user":"bob","text":"mvlogsecret"}`+"\n"), 0o644))
	check(t, os.Rename(p("working/l.txt"), p("working/l.jsonl")))
	// A shared log renamed to an editor's backup name (not a log).
	check(t, os.WriteFile(p("working/bk.jsonl"), []byte(alice+"\n"+`{"user":"bob","text":"backupsecret"}`+"\n"), 0o644))
	check(t, os.Rename(p("working/bk.jsonl"), p("working/bk.jsonl~")))
	// An old version of a shared log.
	check(t, os.WriteFile(p("episodic/s/hist.jsonl"), []byte(alice+"\n"+`{"user":"bob","text":"histsecret"}`+"\n"), 0o644))
	check(t, os.WriteFile(p("episodic/s/hist.jsonl"), []byte(alice+"\n"), 0o644))
	// A last line with no newline, entities, a user key twice.
	check(t, os.WriteFile(p("working/tail.jsonl"), []byte(alice+"\n"+`{"user":"bob","text":"tailsecret"}`), 0o644))
	check(t, os.WriteFile(p("working/ent.jsonl"), []byte(alice+"\n"+`{"entities":["User:bob"],"text":"entsecret"}`+"\n"+
		`{"metadata":{"entities":"user:bob"},"text":"entmetasecret"}`+"\n"), 0o644))
	check(t, os.WriteFile(p("working/dup.json"), []byte(`{"user":"bob","user":"alice","text":"dupjsonsecret"}`), 0o644))
	// Lines finished by a later append: bob's stays bob's, alice's hers.
	check(t, os.WriteFile(p("working/grow.jsonl"), []byte(alice+"\n"+`{"user":"bob","text":"growsec`), 0o644))
	appendTo := func(s string) {
		f, err := os.OpenFile(p("working/grow.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
		check(t, err)
		_, err = f.WriteString(s)
		check(t, err)
		check(t, f.Close())
	}
	appendTo(`ret"}` + "\n" + `{"user":"alice","text":"alice la`)
	appendTo(`ter"}` + "\n")
	m.stop(t, syscall.SIGTERM)

	secrets := []string{"growsecret", "backupsecret", "sedsecret", "replacesecret", "mvjsonsecret", "mvlogsecret", "histsecret", "tailsecret",
		"entsecret", "entmetasecret", "dupjsonsecret"}
	m = startMount(t, data, mnt, "--user", "alice")
	var seen []string
	check(t, filepath.WalkDir(mnt, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(mnt, path)
		if strings.HasPrefix(rel, "search/") || strings.HasPrefix(rel, "meta/") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				seen = append(seen, rel+": "+s)
			}
		}
		return nil
	}))
	for _, s := range secrets {
		if ents, err := os.ReadDir(p("search/" + s)); err != nil || len(ents) > 1 { // .results alone
			seen = append(seen, "search/"+s)
		}
	}
	if len(seen) > 0 {
		t.Errorf("alice's mount shows bob's words:\n%s", strings.Join(seen, "\n"))
	}
	// What she may see she still sees: her lines, and her line of the
	// kept version.
	if b, err := os.ReadFile(p("working/grow.jsonl")); err != nil || string(b) != alice+"\n"+`{"user":"alice","text":"alice later"}`+"\n" {
		t.Errorf("alice reads the log finished by appends as %q (%v)", b, err)
	}
	for _, f := range []string{"episodic/s/sed.jsonl", "working/l.jsonl", "working/tail.jsonl", "working/ent.jsonl"} {
		if b, err := os.ReadFile(p(f)); err != nil || !strings.Contains(string(b), `"user":"alice"`) {
			t.Errorf("alice reads %s as %q (%v), want her line", f, b, err)
		}
	}
	if b, err := os.ReadFile(p("history/episodic/s/hist.jsonl/v1.jsonl")); err != nil || string(b) != alice+"\n" {
		t.Errorf("alice reads version 1 of hist.jsonl as %q (%v), want her line alone", b, err)
	} else if st, err := os.Stat(p("history/episodic/s/hist.jsonl/v1.jsonl")); err != nil || st.Size() != int64(len(alice)+1) {
		t.Errorf("version 1 of hist.jsonl: size %v (%v), want %d", st, err, len(alice)+1)
	}
	// A log she sees in part is hers to read, not to change: no write
	// bits, so that an editor opens it read-only; her own files have them.
	if st, err := os.Stat(p("working/l.jsonl")); err != nil || st.Mode().Perm()&0o222 != 0 {
		t.Errorf("alice's view of a shared log: mode %v (%v), want no write bits", st.Mode(), err)
	}
	check(t, os.WriteFile(p("working/mine.md"), []byte("mine\n"), 0o644))
	if st, err := os.Stat(p("working/mine.md")); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("alice's own file: mode %v (%v), want 0644", st.Mode(), err)
	}
	for _, f := range []string{"working/j.json", "working/t.json", "working/dup.json"} {
		if _, err := os.Stat(p(f)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("alice sees bob's %s: %v", f, err)
		}
	}
	m.stop(t, syscall.SIGTERM)
}

// TestSearchAsUserWithoutMount: 'mnemofs search --user alice' with no
// mount running ranks in an index of only what alice may see, as her
// mount would: bob's lines of a log they share neither show nor lift
// hers (through a mount for every user it filters that mount's ranking,
// as by-user/alice/search/ does).
func TestSearchAsUserWithoutMount(t *testing.T) {
	t.Parallel()
	data, src := t.TempDir(), t.TempDir()
	check(t, os.WriteFile(filepath.Join(src, "t.jsonl"), []byte(`{"user":"alice","text":"alice harbour line"}`+"\n"+
		`{"user":"bob","text":"bob narwhalzzz"}`+"\n"+`{"text":"public line"}`+"\n"+`{"text":"public line"}`+"\n"), 0o644))
	mustRun(t, "import", "--data", data, src, "--to", "episodic/s")
	if r := mustRun(t, "search", "--data", data, "--user", "alice", "--json", "narwhalzzz"); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("alice's search for bob's word: %s", r.stdout)
	}
	if r := mustRun(t, "search", "--data", data, "--user", "alice", "--json", "harbour"); strings.Count(r.stdout, `"line"`) != 1 || !strings.Contains(r.stdout, "alice harbour") {
		t.Errorf("alice's search for her word: %s, want her line", r.stdout)
	}
	if r := mustRun(t, "search", "--data", data, "--json", "narwhalzzz"); !strings.Contains(r.stdout, "narwhalzzz") {
		t.Errorf("the operator's search for bob's word: %s", r.stdout)
	}
	if r := runMnemofs(t, "search", "--data", data, " "); r.code == 0 || !strings.Contains(r.stderr, "the query is empty") {
		t.Errorf("an empty query: exit %d, %s%s", r.code, r.stdout, r.stderr)
	}
}

// TestNoDefaultStoreMadeByAQuestion: 'mnemofs stats' (or search) with no
// --data and no store in the default place says so, and makes none: a
// forgotten --data must not answer about a new, empty store.
func TestNoDefaultStoreMadeByAQuestion(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, args := range [][]string{{"stats"}, {"search", "trip"}} {
		cmd := exec.Command(mnemofsBin, args...)
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME=", "MNEMOFS_DATA=", "MNEMOFS_BACKEND=")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "there is no store in") {
			t.Errorf("mnemofs %v with no store: %v, %s", args, err, out)
		}
	}
	if ents, _ := os.ReadDir(home); len(ents) != 0 {
		t.Errorf("a question made %v in the home directory", ents)
	}
}
