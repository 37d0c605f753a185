package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRedactionMCP: the same over MCP (the SDK's client, mnemofs mcp
// holding the store): the memory tool's view shows the bytes as stored
// (masked in store mode), and search (text and structured), context,
// history (store mode) and stats never show a secret, while the memory is
// found by its other words and not by the secret's.
func TestRedactionMCP(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"index", "store"} {
		t.Run(mode, func(t *testing.T) {
			data := t.TempDir()
			makeStore(t, data)
			mustRun(t, "policy", "set", "--data", data, redactPolicy(t, mode))
			p := startMCP(t, data)
			for _, c := range redactCases {
				p.memOK("command", "create", "path", "/memories/"+c.file, "file_text", "The "+c.word+" memo: "+c.secret+" is what it says.\n")
			}
			p.memOK("command", "create", "path", "/memories/semantic/benign.md", "file_text", redactBenign)
			for _, c := range redactCases {
				marker := "[redacted:" + c.rule + "]"
				got := p.viewFile("/memories/" + c.file)
				if mode == "store" && (strings.Contains(got, c.secret) || !strings.Contains(got, marker)) {
					t.Errorf("store mode: view of %s: %q", c.file, got)
				}
				if mode == "index" && !strings.Contains(got, c.secret) {
					t.Errorf("index mode: view of %s: %q, not the bytes written", c.file, got)
				}
				r := p.call("search", fields("query", c.word))
				txt := textOf(r)
				js, _ := json.Marshal(r.StructuredContent)
				if !strings.Contains(txt, c.file) || !strings.Contains(txt, marker) || !strings.Contains(string(js), marker) {
					t.Errorf("search %s: %s\n%s", c.word, txt, js)
				}
				noSecret(t, "MCP search "+c.word, txt+string(js))
				ctx := p.ok("context", fields("query", c.word))
				if !strings.Contains(ctx, marker) {
					t.Errorf("MCP context %s: no marker:\n%s", c.word, ctx)
				}
				noSecret(t, "MCP context "+c.word, ctx)
				r = p.call("search", fields("query", secretWords(c.secret)))
				var sc struct{ Results []map[string]any } // beside them, the query as sent
				structuredOf(t, r, &sc)
				js, _ = json.Marshal(sc.Results)
				if strings.Contains(string(js), c.file) {
					t.Errorf("searching for the secret finds %s: %s", c.file, js)
				}
				_, rest, _ := strings.Cut(textOf(r), "\n") // the header echoes the query
				noSecret(t, "MCP search for the secret", rest+string(js))
			}
			if got := p.viewFile("/memories/semantic/benign.md"); got != redactBenign {
				t.Errorf("the benign corpus changed: %q", got)
			}
			if txt := p.ok("search", fields("query", "harmonica")); strings.Contains(txt, "[redacted") {
				t.Errorf("benign search: %s", txt)
			}
			if mode == "store" {
				f := "/memories/" + redactCases[0].file
				edited := p.memOK("command", "str_replace", "path", f, "old_str", "is what it says", "new_str", "and again "+redactCases[3].secret)
				if !strings.Contains(edited, "and again [redacted:api_key]") {
					t.Errorf("str_replace's snippet: %q", edited)
				}
				noSecret(t, "str_replace's snippet", edited)
				hist := p.ok("history", fields("path", f))
				v1 := p.ok("history", fields("path", f, "version", 1))
				if !strings.Contains(v1, "[redacted:email]") {
					t.Errorf("history version 1: %s", v1)
				}
				noSecret(t, "MCP history", hist+v1+p.viewFile(f))
			}
			stats := p.ok("stats", fields())
			if !strings.Contains(stats, "redactions") {
				t.Errorf("stats: no redactions:\n%s", clipText(stats))
			}
			noSecret(t, "MCP stats", stats)
			p.stop()
			noSecret(t, "the mcp server's stderr", p.stderr.String())
			if found := grepData(t, data); mode == "store" && found != "" {
				t.Errorf("store mode: grep -r of the data dir finds the secrets in:\n%s", found)
			}
		})
	}
}

// TestRedactionMCPThroughMount: store mode with `mnemofs mcp` going
// through a mount: what MCP creates reads masked through the mount at once
// (the kernel's cached pages and size of a file read before are dropped),
// and MCP search shows no secret.
func TestRedactionMCPThroughMount(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	makeStore(t, data)
	mustRun(t, "policy", "set", "--data", data, redactPolicy(t, "store"))
	m := startMount(t, data, mnt)
	p := startMCP(t, data)
	if !p.saidOnStderr("through the mount at " + mnt) {
		t.Fatalf("mcp did not go through the mount: %s", p.stderr.String())
	}
	c := redactCases[0]
	p.memOK("command", "create", "path", "/memories/semantic/viamcp.md", "file_text", "The sitar memo\n")
	readText(t, filepath.Join(mnt, "semantic/viamcp.md")) // cached by the kernel
	p.memOK("command", "insert", "path", "/memories/semantic/viamcp.md", "insert_line", 1, "insert_text", "write to "+c.secret+"\n")
	want := "The sitar memo\nwrite to [redacted:email]\n"
	if got := readText(t, filepath.Join(mnt, "semantic/viamcp.md")); got != want {
		t.Errorf("through the mount: %q, want %q", got, want)
	}
	// And the other way: written in the mount, searched over MCP.
	check(t, os.WriteFile(filepath.Join(mnt, "semantic/inmount.md"), []byte("The lute memo: "+c.secret+"\n"), 0o644))
	txt := p.ok("search", fields("query", "lute sitar"))
	if !strings.Contains(txt, "inmount.md") || !strings.Contains(txt, "viamcp.md") {
		t.Errorf("MCP search: %s", txt)
	}
	noSecret(t, "MCP search through the mount", txt)
	p.stop()
	m.stop(t, syscall.SIGTERM)
	if found := grepData(t, data); found != "" {
		t.Errorf("grep -r of the data dir finds the secret in:\n%s", found)
	}
}
