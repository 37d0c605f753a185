package e2e

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMCPThroughMount: with a mount running, `mnemofs mcp` goes through it.
// A file read through the mount (so that the kernel caches its pages,
// attributes and name) and then changed over MCP reads fresh through the
// mount at once, for every kind of change; a file closed in the mount is in
// the next MCP call. When the mount goes away the server takes the store
// and carries on; a mount is then refused with one line naming the mcp
// pid, and works again once mcp has stopped.
func TestMCPThroughMount(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	in := func(rel string) string { return filepath.Join(mnt, rel) }
	m := startMount(t, data, mnt)
	check(t, os.MkdirAll(in("semantic/dir"), 0o755))
	check(t, os.WriteFile(in("semantic/k.md"), []byte("v1\n"), 0o644))
	check(t, os.WriteFile(in("semantic/gone.md"), []byte("to delete\n"), 0o644))
	check(t, os.WriteFile(in("semantic/old.md"), []byte("to rename\n"), 0o644))
	check(t, os.WriteFile(in("semantic/dir/a.md"), []byte("in a dir\n"), 0o644))
	p := startMCP(t, data)
	if !p.saidOnStderr("through the mount at " + mnt) {
		t.Fatalf("mcp did not go through the mount: %s", p.stderr.String())
	}

	// cached reads whether the content through the mount is want, right
	// after the change (within the kernel's 1 s attribute timeout).
	cached := func(rel string) {
		for range 2 {
			if _, err := os.ReadFile(in(rel)); err != nil {
				t.Fatalf("reading %s through the mount: %v", rel, err)
			}
		}
	}
	fresh := func(what, rel, want string) {
		t.Helper()
		b, err := os.ReadFile(in(rel))
		fi, serr := os.Stat(in(rel))
		if err != nil || string(b) != want || serr != nil || fi.Size() != int64(len(want)) {
			t.Errorf("%s: through the mount %s reads %q (%v), size %v; want %q", what, rel, b, err, fi, want)
		}
	}
	gone := func(what, rel string) {
		t.Helper()
		if _, err := os.Stat(in(rel)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %s through the mount: %v, want ENOENT", what, rel, err)
		}
		if _, err := os.ReadFile(in(rel)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: reading %s through the mount: %v, want ENOENT", what, rel, err)
		}
	}

	cached("semantic/k.md")
	p.memOK("command", "str_replace", "path", "/memories/semantic/k.md", "old_str", "v1", "new_str", "version two, longer")
	fresh("str_replace growing the file", "semantic/k.md", "version two, longer\n")
	cached("semantic/k.md")
	p.memOK("command", "insert", "path", "/memories/semantic/k.md", "insert_line", 0, "insert_text", "top")
	fresh("insert", "semantic/k.md", "top\nversion two, longer\n")
	cached("semantic/k.md")
	p.memOK("command", "str_replace", "path", "/memories/semantic/k.md", "old_str", "top\nversion two, longer\n", "new_str", "v4\n")
	fresh("str_replace shrinking the file", "semantic/k.md", "v4\n")

	cached("semantic/gone.md")
	p.memOK("command", "delete", "path", "/memories/semantic/gone.md")
	gone("delete", "semantic/gone.md")
	cached("semantic/old.md")
	p.memOK("command", "rename", "old_path", "/memories/semantic/old.md", "new_path", "/memories/working/new.md")
	gone("rename (old name)", "semantic/old.md")
	fresh("rename (new name)", "working/new.md", "to rename\n")
	gone("before create", "working/made.md")
	p.memOK("command", "create", "path", "/memories/working/made.md", "file_text", "made over MCP\n")
	fresh("create", "working/made.md", "made over MCP\n")
	cached("semantic/dir/a.md")
	p.memOK("command", "delete", "path", "/memories/semantic/dir")
	gone("delete of a directory", "semantic/dir/a.md")
	gone("delete of a directory", "semantic/dir")
	if ents, err := os.ReadDir(in("semantic")); err != nil || len(ents) != 1 || ents[0].Name() != "k.md" {
		t.Errorf("semantic/ through the mount: %v, %v; want only k.md", ents, err)
	}

	// The versions MCP made are the mount's history/.
	var hist struct {
		Versions []struct{ Version int } `json:"versions"`
	}
	structuredOf(t, p.call("history", fields("path", "/memories/semantic/k.md")), &hist)
	ents, err := os.ReadDir(in("history/semantic/k.md"))
	check(t, err)
	if len(ents) != len(hist.Versions) || len(ents) != 3 {
		t.Errorf("history/semantic/k.md lists %d versions, MCP %d; want 3", len(ents), len(hist.Versions))
	}
	if b, err := os.ReadFile(in("history/semantic/k.md/v2.md")); err != nil || string(b) != "version two, longer\n" {
		t.Errorf("history/semantic/k.md/v2.md: %q, %v", b, err)
	}

	// A file closed in the mount is in the next call.
	for i := range 5 {
		body := "written in the mount, round " + strconv.Itoa(i) + " zeppelin\n"
		check(t, os.WriteFile(in("working/live.md"), []byte(body), 0o644))
		if got := p.viewFile("/memories/working/live.md"); got != body {
			t.Errorf("MCP view right after a write in the mount: %q, want %q", got, body)
		}
		if got := p.ok("search", fields("query", "zeppelin")); !strings.Contains(got, "/memories/working/live.md") {
			t.Errorf("MCP search right after a write in the mount: %q", got)
		}
	}
	// The CLI reaches the same store the same way.
	if r := mustRun(t, "search", "--data", data, "--json", "zeppelin"); !strings.Contains(r.stdout, "/working/live.md") {
		t.Errorf("mnemofs search: %s", r.stdout)
	}

	// The mount goes away: the next call takes the store.
	m.stop(t, syscall.SIGTERM)
	if got := p.viewFile("/memories/semantic/k.md"); got != "v4\n" {
		t.Errorf("view after the mount went away: %q", got)
	}
	if !p.saidOnStderr("went away; the calls now go to the store, held by this process") {
		t.Errorf("the server did not say it took the store:\n%s", p.stderr.String())
	}
	p.memOK("command", "create", "path", "/memories/working/after.md", "file_text", "after the mount\n")
	r := runMnemofs(t, "mount", "--data", data, mnt)
	oneErrorLine(t, r, "held by 'mnemofs mcp' (pid "+strconv.Itoa(p.cmd.Process.Pid)+")", "stop it first")
	if isMounted(mnt) {
		t.Fatalf("a mount started while mcp held the store")
	}
	// Other commands go through mcp's own control socket.
	if r := mustRun(t, "stats", "--data", data, "--json"); !strings.Contains(r.stdout, `"memories"`) {
		t.Errorf("mnemofs stats while mcp holds the store: %s", r.stdout)
	}
	p.stop()
	m = startMount(t, data, mnt)
	fresh("after mcp stopped, a new mount", "working/after.md", "after the mount\n")
	fresh("after mcp stopped, a new mount", "semantic/k.md", "v4\n")
	_ = time.Second
	m.stop(t, syscall.SIGTERM)
}

// TestMCPEditsWhileOpenInMount: each MCP edit is its own commit, and so
// keeps the content it replaced as a version, even while a process holds
// the file open in the mount (a pager, or a reader whose close the kernel
// has not yet released). Before, the last close made the commit, and
// the two edits made one version.
func TestMCPEditsWhileOpenInMount(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	p := startMCP(t, data)
	p.mount = m
	p.memOK("command", "create", "path", "/memories/semantic/notes.md", "file_text", "one\n")
	held, err := os.Open(filepath.Join(mnt, "semantic/notes.md"))
	check(t, err)
	defer held.Close()
	p.memOK("command", "str_replace", "path", "/memories/semantic/notes.md", "old_str", "one", "new_str", "two")
	p.memOK("command", "insert", "path", "/memories/semantic/notes.md", "insert_line", 1, "insert_text", "three")
	var hist struct {
		Versions []struct{ Version int } `json:"versions"`
	}
	structuredOf(t, p.call("history", fields("path", "/memories/semantic/notes.md")), &hist)
	if len(hist.Versions) != 2 {
		t.Errorf("history of notes.md with a handle open in the mount: %+v, want 2 versions (one, two)", hist.Versions)
	}
	for n, want := range map[string]string{"v1.md": "one\n", "v2.md": "two\n"} {
		if b, err := os.ReadFile(filepath.Join(mnt, "history/semantic/notes.md", n)); err != nil || string(b) != want {
			t.Errorf("history/semantic/notes.md/%s: %q, %v; want %q", n, b, err, want)
		}
	}
	if b, err := io.ReadAll(held); err != nil || string(b) != "two\nthree\n" {
		t.Errorf("the handle held open reads %q, %v", b, err)
	}
}
