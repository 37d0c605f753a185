package e2e

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMCPReadOnly: `mcp --read-only` (holding the store, or through a
// mount) views and searches but refuses every change, and a read-only
// mount refuses the changes of a server that is not; nothing is written.
func TestMCPReadOnly(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	r := runMnemofs(t, "mcp", "--data", data, "--read-only")
	oneErrorLine(t, r, "there is no store")

	p := startMCP(t, data)
	p.memOK("command", "create", "path", "/memories/semantic/a.md", "file_text", "read me\n")
	p.stop()
	writes := [][]any{
		{"command", "create", "path", "/memories/semantic/b.md", "file_text", "x"},
		{"command", "str_replace", "path", "/memories/semantic/a.md", "old_str", "read", "new_str", "write"},
		{"command", "insert", "path", "/memories/semantic/a.md", "insert_line", 0, "insert_text", "x"},
		{"command", "delete", "path", "/memories/semantic/a.md"},
		{"command", "rename", "old_path", "/memories/semantic/a.md", "new_path", "/memories/semantic/c.md"},
	}
	try := func(p *mcpProc, want string) {
		t.Helper()
		before := mcpState(p, "/memories/semantic/a.md")
		for _, w := range writes {
			p.memFails([]string{want}, w...)
		}
		if got := p.viewFile("/memories/semantic/a.md"); got != "read me\n" {
			t.Errorf("view in a read-only server: %q", got)
		}
		p.ok("search", fields("query", "read"))
		sameState(t, "read-only", before, mcpState(p, "/memories/semantic/a.md"))
	}
	p = startMCP(t, data, "--read-only")
	try(p, "the memory is read-only here")
	p.stop()

	m := startMount(t, data, mnt)
	p = startMCP(t, data, "--read-only")
	try(p, "the memory is read-only here")
	p.stop()
	m.stop(t, syscall.SIGTERM)

	m = startMount(t, data, mnt, "--read-only")
	p = startMCP(t, data)
	try(p, "the memory is read-only here")
	p.stop()
	m.stop(t, syscall.SIGTERM)
	m = startMount(t, data, mnt)
	if ents, _ := os.ReadDir(filepath.Join(mnt, "semantic")); len(ents) != 1 {
		t.Errorf("semantic/ holds %v after read-only sessions, want only a.md", ents)
	}
	m.stop(t, syscall.SIGTERM)
}
