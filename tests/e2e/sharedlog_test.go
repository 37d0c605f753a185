package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSharedLogPerLine: a log whose lines belong to different users (the
// layout agents write: turns.jsonl with a user per line) shows each user's
// mount only the lines that user may see — in cat, size, sha256, grep,
// search and views — and is read-only there; a log of only bob's lines is
// hidden from alice.
func TestSharedLogPerLine(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	const (
		pub   = `{"speaker":"host","text":"welcome everyone to the planning call"}`
		alice = `{"user":"alice","text":"alice wants a window seat on the ferry"}`
		bob   = `{"user":"bob","text":"bob's pin is wombatsecret"}`
		both  = `{"users":["alice","bob"],"text":"both agree on Lisbon"}`
	)
	m := startMount(t, data, mnt)
	check(t, os.MkdirAll(p("episodic/sessions/s1"), 0o755))
	check(t, os.WriteFile(p("episodic/sessions/s1/turns.jsonl"), []byte(pub+"\n"+alice+"\n"+bob+"\n"+both+"\n"), 0o644))
	check(t, os.WriteFile(p("episodic/bobonly.jsonl"), []byte(bob+"\n"), 0o644))
	m.stop(t, syscall.SIGTERM)

	for _, u := range []struct {
		name       string
		see, hide  []string
		searchHide string
	}{
		{"alice", []string{pub, alice, both}, []string{bob}, "wombatsecret"},
		{"bob", []string{pub, bob, both}, []string{alice}, "window"},
	} {
		m = startMount(t, data, mnt, "--user", u.name)
		log := p("episodic/sessions/s1/turns.jsonl")
		b, err := os.ReadFile(log)
		check(t, err)
		want := strings.Join(u.see, "\n") + "\n"
		if string(b) != want {
			t.Errorf("%s reads the shared log as:\n%s\nwant:\n%s", u.name, b, want)
		}
		if fi, err := os.Stat(log); err != nil || fi.Size() != int64(len(want)) {
			t.Errorf("%s: size %v (%v), want %d", u.name, fi.Size(), err, len(want))
		}
		sum := sha256.Sum256([]byte(want))
		if x, _ := getxattr(log, "user.mnemofs.sha256"); x != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: sha256 xattr %s is not of what the user reads", u.name, x)
		}
		out, _ := exec.Command("grep", "-rF", u.searchHide, p("episodic"), p("search/"+u.searchHide), p("by-user"), p("meta")).CombinedOutput()
		for _, h := range u.hide {
			if strings.Contains(string(out), h) || strings.Contains(string(b), h) {
				t.Errorf("%s's mount shows another user's line %s:\n%s", u.name, h, out)
			}
		}
		if ents, _ := os.ReadDir(p("search/" + u.searchHide)); len(ents) != 1 {
			t.Errorf("%s: search/%s lists %v", u.name, u.searchHide, ents)
		}
		if _, err := os.Stat(p("by-user/" + u.name + "/episodic/sessions/s1/turns.jsonl")); err != nil {
			t.Errorf("%s: the shared log is not in by-user/%s: %v", u.name, u.name, err)
		}
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
		if !errors.Is(err, syscall.EACCES) {
			t.Errorf("%s appending to a log with lines it cannot see: %v, want EACCES", u.name, err)
		}
		if f != nil {
			f.Close()
		}
		_, err = os.Stat(p("episodic/bobonly.jsonl"))
		if u.name == "alice" && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("alice sees a log of bob's lines only: %v", err)
		}
		if u.name == "bob" && err != nil {
			t.Errorf("bob cannot see his own log: %v", err)
		}
		m.stop(t, syscall.SIGTERM)
	}
	// The operator's mount sees the whole log, unchanged.
	m = startMount(t, data, mnt)
	if b, _ := os.ReadFile(p("episodic/sessions/s1/turns.jsonl")); string(b) != pub+"\n"+alice+"\n"+bob+"\n"+both+"\n" {
		t.Errorf("the operator reads:\n%s", b)
	}
	m.stop(t, syscall.SIGTERM)
}

// TestLargeSharedLogPerLine: a shared log large enough that an open for
// reading alone would let the kernel read its content file directly
// (passthrough reads, in an in-place tree) still shows alice's mount
// only her lines, and a log of hers alone is read whole.
func TestLargeSharedLogPerLine(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	var shared, hers, want strings.Builder
	for i := 0; shared.Len() < 2<<20; i++ {
		a := `{"user":"alice","text":"alice line ` + strings.Repeat("a", 40) + `"}` + "\n"
		b := `{"user":"bob","text":"bob line wombatsecret ` + strings.Repeat("b", 40) + `"}` + "\n"
		shared.WriteString(a + b)
		hers.WriteString(a)
		want.WriteString(a)
	}
	m := startMount(t, data, mnt)
	check(t, os.MkdirAll(p("working"), 0o755))
	check(t, os.WriteFile(p("working/shared.jsonl"), []byte(shared.String()), 0o644))
	check(t, os.WriteFile(p("working/hers.jsonl"), []byte(hers.String()), 0o644))
	m.stop(t, syscall.SIGTERM)

	m = startMount(t, data, mnt, "--user", "alice")
	for range 2 { // the second read within the first's session, were there one
		b, err := os.ReadFile(p("working/shared.jsonl"))
		check(t, err)
		if strings.Contains(string(b), "wombatsecret") || string(b) != want.String() {
			t.Fatalf("alice reads %d bytes of the large shared log (want her %d), bob's lines in it: %v",
				len(b), want.Len(), strings.Contains(string(b), "wombatsecret"))
		}
	}
	if b, err := os.ReadFile(p("working/hers.jsonl")); err != nil || string(b) != hers.String() {
		t.Errorf("alice's own large log: %d bytes, %v; want %d", len(b), err, hers.Len())
	}
	m.stop(t, syscall.SIGTERM)
}

// TestSharedLogUnsureLines: a line of a shared log whose users cannot be
// told (a JSON object written over several lines, a cut-off line, a user
// key twice) is in no user's view of it, nor in search; users under
// "metadata" count; front matter after a byte order mark or blank lines
// still names its users. The operator's mount reads everything.
func TestSharedLogUnsureLines(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	const (
		alice  = `{"user":"alice","text":"alice line one"}`
		pretty = "{\n  \"user\": \"bob\",\n  \"text\": \"pretty printed prettysecret\"\n}"
		cut    = `{"user":"bob","text":"cut off cutsecret`
		nested = `{"metadata":{"user":"bob"},"text":"nested nestsecret"}`
		twice  = `{"user":"bob","user":"alice","text":"twice dupsecret"}`
	)
	whole := alice + "\n" + pretty + "\n" + cut + "\n" + nested + "\n" + twice + "\n"
	m := startMount(t, data, mnt)
	check(t, os.MkdirAll(p("episodic/sessions/s3"), 0o755))
	check(t, os.WriteFile(p("episodic/sessions/s3/turns.jsonl"), []byte(whole), 0o644))
	check(t, os.MkdirAll(p("semantic/fm"), 0o755))
	check(t, os.WriteFile(p("semantic/fm/bom.md"), []byte("\xef\xbb\xbf---\nuser: bob\n---\nbom bomsecret\n"), 0o644))
	check(t, os.WriteFile(p("semantic/fm/late.md"), []byte("\n---\nuser: bob\n---\nlate latesecret\n"), 0o644))
	m.stop(t, syscall.SIGTERM)

	m = startMount(t, data, mnt, "--user", "alice")
	b, err := os.ReadFile(p("episodic/sessions/s3/turns.jsonl"))
	check(t, err)
	if string(b) != alice+"\n" {
		t.Errorf("alice reads the log as:\n%s\nwant only her line", b)
	}
	if u, _ := getxattr(p("episodic/sessions/s3/turns.jsonl"), "user.mnemofs.users"); u != "alice" {
		t.Errorf("alice's view of the log names its users %q, want only alice", u)
	}
	for _, secret := range []string{"prettysecret", "cutsecret", "nestsecret", "dupsecret", "bomsecret", "latesecret"} {
		if ents, err := os.ReadDir(p("search/" + secret)); err != nil || len(ents) > 1 { // .results alone
			t.Errorf("alice's search/%s lists %d entries (%v)", secret, len(ents), err)
		}
	}
	for _, f := range []string{"semantic/fm/bom.md", "semantic/fm/late.md"} {
		if _, err := os.Stat(p(f)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("alice sees bob's %s: %v", f, err)
		}
	}
	m.stop(t, syscall.SIGTERM)

	m = startMount(t, data, mnt)
	if b, _ := os.ReadFile(p("episodic/sessions/s3/turns.jsonl")); string(b) != whole {
		t.Errorf("the operator reads:\n%s", b)
	}
	m.stop(t, syscall.SIGTERM)
}
