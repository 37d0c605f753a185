package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestMCPConcurrentEdits: an agent's parallel tool calls editing one file
// take turns. Twenty str_replace calls at once, each on its own line, and
// twenty inserts at once, leave every edit in place and no line torn,
// lost or doubled (each call used to write over the others' bytes from
// its own idea of the file).
func TestMCPConcurrentEdits(t *testing.T) {
	t.Parallel()
	p := startMCP(t, t.TempDir())
	const n = 20
	var lines, want []string
	for i := range n {
		lines = append(lines, fmt.Sprintf("line%02d", i))
		want = append(want, fmt.Sprintf("LINE%02d-edited-%s", i, strings.Repeat("e", i)))
	}
	p.memOK("command", "create", "path", "/memories/working/torn.md", "file_text", strings.Join(lines, "\n")+"\n")
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			p.memOK("command", "str_replace", "path", "/memories/working/torn.md", "old_str", lines[i], "new_str", want[i])
		})
	}
	wg.Wait()
	if got := p.viewFile("/memories/working/torn.md"); got != strings.Join(want, "\n")+"\n" {
		t.Errorf("after %d parallel str_replace calls:\n%s\nwant:\n%s", n, got, strings.Join(want, "\n")+"\n")
	}

	p.memOK("command", "create", "path", "/memories/working/ins.md", "file_text", "")
	for i := range n {
		wg.Go(func() {
			p.memOK("command", "insert", "path", "/memories/working/ins.md", "insert_line", 0, "insert_text", fmt.Sprintf("inserted %02d", i))
		})
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(p.viewFile("/memories/working/ins.md"), "\n"), "\n")
	seen := map[string]bool{}
	for _, l := range got {
		seen[l] = true
	}
	for i := range n {
		if !seen[fmt.Sprintf("inserted %02d", i)] {
			t.Errorf("insert %d is lost: %q", i, got)
		}
	}
	if len(got) != n {
		t.Errorf("%d lines after %d inserts: %q", len(got), n, got)
	}
}
