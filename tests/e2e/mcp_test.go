package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMCPMemoryTool drives every command of the memory tool over stdio
// against a store the server holds itself (no mount), with the memory
// tool's documented answers, then every error case, checking after each
// batch that nothing changed; finally a mount of the same store shows what
// the server wrote.
func TestMCPMemoryTool(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	p := startMCP(t, data)

	// The tools and the memory tool's schema (Anthropic's field names).
	lt, err := p.cs.ListTools(t.Context(), nil)
	check(t, err)
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		if tl.Name == "memory" {
			b, _ := json.Marshal(tl.InputSchema)
			for _, f := range []string{"command", "path", "file_text", "old_str", "new_str", "insert_line", "insert_text", "old_path", "new_path", "view_range"} {
				if !strings.Contains(string(b), `"`+f+`"`) {
					t.Errorf("the memory tool's input schema has no %q: %s", f, b)
				}
			}
		}
	}
	slices.Sort(names)
	if want := []string{"context", "history", "memory", "search", "stats"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}

	// A fresh store.
	want := "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
		"0B\t/memories\n0B\t/memories/archive/\n0B\t/memories/episodic/\n0B\t/memories/semantic/\n0B\t/memories/working/"
	if got := p.memOK("command", "view", "path", "/memories"); got != want {
		t.Errorf("view of a fresh store:\n%s\nwant:\n%s", got, want)
	}

	// create, and the directories on the way.
	prefs := "---\nuser: alice\ntags: [food]\n---\nAlice is vegetarian.\nShe likes ramen.\n"
	if got := p.memOK("command", "create", "path", "/memories/semantic/people/alice.md", "file_text", prefs); got != "File created successfully at: /memories/semantic/people/alice.md" {
		t.Errorf("create: %q", got)
	}
	p.memOK("command", "create", "path", "/memories/working/todo.md", "file_text", "one\ntwo\nthree\n")
	p.memOK("command", "create", "path", "/memories/episodic/log.md", "file_text", "day 1\n")
	p.memOK("command", "create", "path", "/memories/semantic/.hidden.md", "file_text", "not listed\n")
	got := p.memOK("command", "view", "path", "/memories/semantic")
	n := fmt.Sprintf("%dB", len(prefs))
	want = "Here're the files and directories up to 2 levels deep in /memories/semantic, excluding hidden items and node_modules:\n" +
		n + "\t/memories/semantic\n" + n + "\t/memories/semantic/people/\n" + n + "\t/memories/semantic/people/alice.md"
	if got != want {
		t.Errorf("view of a directory:\n%s\nwant:\n%s", got, want)
	}
	if got := p.viewFile("/memories/semantic/people/alice.md"); got != prefs {
		t.Errorf("view of the file: %q, want %q", got, prefs)
	}
	want = "Here's the content of /memories/working/todo.md with line numbers:\n     2\ttwo\n     3\tthree"
	if got := p.memOK("command", "view", "path", "/memories/working/todo.md", "view_range", []int{2, -1}); got != want {
		t.Errorf("view_range [2, -1]: %q, want %q", got, want)
	}
	if got := p.memOK("command", "view", "path", "/memories/working/todo.md", "view_range", []int{1, 1}); !strings.HasSuffix(got, "\n     1\tone") {
		t.Errorf("view_range [1, 1]: %q", got)
	}

	// str_replace: one match.
	got = p.memOK("command", "str_replace", "path", "/memories/semantic/people/alice.md", "old_str", "ramen", "new_str", "udon")
	if !strings.HasPrefix(got, "The memory file has been edited.") || !strings.Contains(got, "     6\tShe likes udon.") {
		t.Errorf("str_replace: %q", got)
	}
	// insert at the top and after the last line.
	if got := p.memOK("command", "insert", "path", "/memories/working/todo.md", "insert_line", 0, "insert_text", "zero"); got != "The file /memories/working/todo.md has been edited." {
		t.Errorf("insert: %q", got)
	}
	p.memOK("command", "insert", "path", "/memories/working/todo.md", "insert_line", 4, "insert_text", "four\n")
	if got := p.viewFile("/memories/working/todo.md"); got != "zero\none\ntwo\nthree\nfour\n" {
		t.Errorf("after inserts: %q", got)
	}

	// Versions: semantic/ keeps one at every change; episodic/ appends are
	// not versions.
	p.memOK("command", "str_replace", "path", "/memories/semantic/people/alice.md", "old_str", "udon", "new_str", "soba")
	var hist struct {
		Current  int `json:"current_version"`
		Versions []struct {
			Version int `json:"version"`
		} `json:"versions"`
	}
	structuredOf(t, p.call("history", fields("path", "/memories/semantic/people/alice.md")), &hist)
	if hist.Current != 3 || len(hist.Versions) != 2 || hist.Versions[0].Version != 1 {
		t.Errorf("history of alice.md: %+v, want current 3 and versions 1, 2", hist)
	}
	v1 := unnumber(t, strings.Replace(p.ok("history", fields("path", "/memories/semantic/people/alice.md", "version", 1)), "Here's version 1 of", "Here's the content of", 1))
	if v1 != prefs {
		t.Errorf("version 1: %q, want %q", v1, prefs)
	}
	p.memOK("command", "insert", "path", "/memories/episodic/log.md", "insert_line", 1, "insert_text", "day 2")
	if got := p.ok("history", fields("path", "/memories/episodic/log.md")); !strings.Contains(got, "has no kept versions") {
		t.Errorf("history after an append in episodic/: %q, want no versions", got)
	}

	// rename, making the destination's directories.
	if got := p.memOK("command", "rename", "old_path", "/memories/working/todo.md", "new_path", "/memories/archive/done/todo.md"); got != "Successfully renamed /memories/working/todo.md to /memories/archive/done/todo.md" {
		t.Errorf("rename: %q", got)
	}
	p.memOK("command", "rename", "old_path", "/memories/semantic/people", "new_path", "/memories/semantic/persons")
	structuredOf(t, p.call("history", fields("path", "/memories/semantic/persons/alice.md")), &hist)
	if len(hist.Versions) != 2 {
		t.Errorf("versions after moving the directory: %+v, want them to follow", hist)
	}

	// delete: a file just made is scratch (really deleted); an older one
	// goes to the trash, and so do the memories of a deleted directory.
	p.memOK("command", "create", "path", "/memories/working/scratch.md", "file_text", "x")
	if got := p.memOK("command", "delete", "path", "/memories/working/scratch.md"); got != "Successfully deleted /memories/working/scratch.md" {
		t.Errorf("delete of a new file: %q", got)
	}
	time.Sleep(3100 * time.Millisecond) // past the scratch age
	got = p.memOK("command", "delete", "path", "/memories/episodic/log.md")
	if !strings.HasPrefix(got, "Successfully deleted /memories/episodic/log.md (moved to /memories/archive/trash/episodic/log.md") {
		t.Errorf("delete: %q", got)
	}
	if got := p.viewFile("/memories/archive/trash/episodic/log.md"); got != "day 1\nday 2\n" {
		t.Errorf("the trashed file: %q", got)
	}
	p.memOK("command", "create", "path", "/memories/semantic/persons/bob.md", "file_text", "bob\n")
	time.Sleep(3100 * time.Millisecond)
	if got := p.memOK("command", "delete", "path", "/memories/semantic/persons"); !strings.Contains(got, "(2 memories moved to /memories/archive/trash") {
		t.Errorf("delete of a directory: %q", got)
	}
	p.memFails([]string{"The path /memories/semantic/persons does not exist. Please provide a valid path."}, "command", "view", "path", "/memories/semantic/persons")

	testMCPMemoryErrors(t, p)

	// The same store in a mount: what the server reported is on disk.
	p.stop()
	mnt := t.TempDir()
	startMount(t, data, mnt)
	b, err := os.ReadFile(filepath.Join(mnt, "archive/trash/semantic/persons/alice.md"))
	if err != nil || !strings.Contains(string(b), "She likes soba.") {
		t.Errorf("alice.md in the trash, through the mount: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "archive/done/todo.md")); err != nil || string(b) != "zero\none\ntwo\nthree\nfour\n" {
		t.Errorf("todo.md through the mount: %q, %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(mnt, "working/scratch.md")); !os.IsNotExist(err) {
		t.Errorf("the deleted scratch file: %v", err)
	}
	if v, err := getxattr(filepath.Join(mnt, "archive/done/todo.md"), "user.mnemofs.version"); err != nil || v == "" {
		t.Errorf("system metadata of a file written over MCP: %q, %v", v, err)
	}
}
