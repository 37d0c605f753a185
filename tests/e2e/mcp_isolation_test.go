package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestMCPUserIsolation: `mnemofs mcp --user alice` on a store holding
// alice's, bob's and public memories, first holding the store itself, then
// through `mount --user alice`, then through a mount for every user, and
// alice's token of an HTTP server with a token per user through it too
// (a session begun with her token refuses bob's). Nothing of bob's is listed, read, searched,
// overwritten, renamed or inferred: every answer about one of his memories
// is the answer about a path that does not exist, word for word, and
// listings' sizes and the stats count only what alice sees. An MCP server
// for another user than the mount's is refused at start.
func TestMCPUserIsolation(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	in := func(rel string) string { return filepath.Join(mnt, rel) }
	m := startMount(t, data, mnt)
	check(t, os.MkdirAll(in("semantic/people"), 0o755))
	check(t, os.WriteFile(in("semantic/people/bob.md"), []byte("---\nuser: bob\n---\nbob's secret is zanzibarbob\n"), 0o644))
	check(t, os.WriteFile(in("semantic/people/pet.md"), []byte("---\nentities: [user:bob]\n---\nthe quokkabob project\n"), 0o644))
	check(t, os.WriteFile(in("semantic/people/alice.md"), []byte("---\nuser: alice\n---\nalice likes tea\n"), 0o644))
	check(t, os.WriteFile(in("semantic/shared.md"), []byte("office hours are nine to five\n"), 0o644))
	m.stop(t, syscall.SIGTERM)
	m = startMount(t, data, mnt, "--user", "bob")
	check(t, os.MkdirAll(in("episodic/bobdir"), 0o755))
	check(t, os.WriteFile(in("episodic/bob-notes.md"), []byte("notes ownedbybob\n"), 0o644))
	check(t, os.WriteFile(in("episodic/events.jsonl"), []byte(`{"e":"loggedbybob"}`+"\n"), 0o644))
	check(t, os.WriteFile(in("episodic/bobdir/x.md"), []byte("more ownedbybob\n"), 0o644))
	m.stop(t, syscall.SIGTERM)
	p := startMCP(t, data, "--user", "alice")
	checkAliceMCP(t, p, "alone")
	p.stop()

	m = startMount(t, data, mnt, "--user", "alice")
	p = startMCP(t, data, "--user", "alice")
	if !p.saidOnStderr("through the mount at " + mnt) {
		t.Errorf("mcp did not go through the mount: %s", p.stderr.String())
	}
	checkAliceMCP(t, p, "mounted")
	p.stop()
	for _, c := range []struct{ args []string }{{[]string{"--user", "bob"}}, {nil}} {
		r := runMnemofs(t, append([]string{"mcp", "--data", data}, c.args...)...)
		oneErrorLine(t, r, "held by the mount at "+mnt, "for user alice", "run 'mnemofs mcp --user alice'")
	}
	m.stop(t, syscall.SIGTERM)

	// Through a mount for every user: 'mcp --user alice' over stdio, and
	// alice's token of a --tokens server over HTTP.
	m = startMount(t, data, mnt)
	p = startMCP(t, data, "--user", "alice")
	if !p.saidOnStderr("through the mount at " + mnt) {
		t.Errorf("mcp --user alice did not go through the mount for every user: %s", p.stderr.String())
	}
	checkAliceMCP(t, p, "everyone")
	p.stop()
	tokens := filepath.Join(t.TempDir(), "tokens")
	check(t, os.WriteFile(tokens, []byte("alice "+tokenSet["alice"]+"\nbob "+tokenSet["bob"]+"\n"), 0o600))
	h := startTokensMCP(t, data, tokens, "--calls-per-second", "0") // the checks call as fast as they can
	cs, err := h.connect(tokenSet["alice"])
	check(t, err)
	checkAliceMCP(t, &mcpProc{t: t, cs: cs, closed: true}, "http")
	// Alice's session is hers: bob's token cannot use it.
	req, _ := http.NewRequest("POST", h.url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tokenSet["bob"])
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	check(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("bob's token on alice's session: %s, want 403", resp.Status)
	}
	cs.Close()
	m.stop(t, syscall.SIGTERM)

	// As the operator: bob's memories are as he left them.
	m = startMount(t, data, mnt)
	for rel, want := range map[string]string{
		"semantic/people/bob.md": "---\nuser: bob\n---\nbob's secret is zanzibarbob\n",
		"semantic/people/pet.md": "---\nentities: [user:bob]\n---\nthe quokkabob project\n",
		"episodic/bob-notes.md":  "notes ownedbybob\n",
		"episodic/events.jsonl":  `{"e":"loggedbybob"}` + "\n",
		"episodic/bobdir/x.md":   "more ownedbybob\n",
		"semantic/shared.md":     "office hours are nine to five\n",
	} {
		if b, err := os.ReadFile(in(rel)); err != nil || string(b) != want {
			t.Errorf("%s after alice's MCP sessions: %q, %v; want %q", rel, b, err, want)
		}
	}
	// meta/mcp.log has alice's changes with her name, for the operator
	// and for her; a mount for bob shows none of them.
	logs := map[string]string{}
	for _, user := range []string{"", "alice", "bob"} {
		if user != "" {
			m.stop(t, syscall.SIGTERM)
			m = startMount(t, data, mnt, "--user", user)
		}
		b, err := os.ReadFile(in("meta/mcp.log"))
		check(t, err)
		logs[user] = string(b)
	}
	m.stop(t, syscall.SIGTERM)
	for _, user := range []string{"", "alice"} {
		for _, want := range []string{"alice over stdio: create /semantic/mine-alone.md", "alice over stdio: str_replace /semantic/mine-mounted.md", "alice over http: create /semantic/mine-http.md"} {
			if !strings.Contains(logs[user], want) {
				t.Errorf("meta/mcp.log of a mount for %q does not say %q:\n%s", user, want, logs[user])
			}
		}
	}
	if logs["bob"] != "" {
		t.Errorf("meta/mcp.log of a mount for bob shows alice's changes:\n%s", logs["bob"])
	}
}

var bobWords = regexp.MustCompile(`zanzibarbob|quokkabob|ownedbybob|loggedbybob|bob\.md|pet\.md|bob-notes|events\.jsonl|x\.md`)

// checkAliceMCP tries every way to reach bob's memories through an MCP
// server for alice (tag keeps the names it makes apart between runs).
func checkAliceMCP(t *testing.T, p *mcpProc, tag string) {
	// Listings: every directory, two levels at a time.
	var all strings.Builder
	dirs := []string{"/memories"}
	for len(dirs) > 0 {
		d := dirs[0]
		dirs = dirs[1:]
		v := p.memOK("command", "view", "path", d)
		all.WriteString(v + "\n")
		for _, l := range strings.Split(v, "\n")[2:] {
			if _, path, ok := strings.Cut(l, "\t"); ok && strings.HasSuffix(path, "/") && strings.Count(path, "/")-strings.Count(d, "/") == 2 {
				dirs = append(dirs, strings.TrimSuffix(path, "/"))
			}
		}
	}
	if w := bobWords.FindString(all.String()); w != "" {
		t.Errorf("%s: alice's listings show %q:\n%s", tag, w, all.String())
	}
	alice := len("---\nuser: alice\n---\nalice likes tea\n")
	if v := p.memOK("command", "view", "path", "/memories/semantic/people"); !strings.Contains(v, "\n"+humanBytes(alice)+"\t/memories/semantic/people\n") {
		t.Errorf("%s: the size of semantic/people counts more than alice's memory (%dB):\n%s", tag, alice, v)
	}
	if v := p.memOK("command", "view", "path", "/memories/episodic"); !strings.Contains(v, "0B\t/memories/episodic\n") || !strings.Contains(v, "0B\t/memories/episodic/bobdir/") {
		t.Errorf("%s: episodic/ and bobdir/ should be empty for alice:\n%s", tag, v)
	}

	// Every answer about bob's memories is the answer about a missing path.
	hidden := []string{"/memories/semantic/people/bob.md", "/memories/semantic/people/pet.md", "/memories/episodic/bob-notes.md", "/memories/episodic/events.jsonl", "/memories/episodic/bobdir/x.md"}
	for _, h := range hidden {
		missing := filepath.Dir(h) + "/nothere" + filepath.Ext(h)
		for _, op := range [][]any{
			{"command", "view"},
			{"command", "view", "view_range", []int{1, 1}},
			{"command", "str_replace", "old_str", "secret", "new_str", "x"},
			{"command", "insert", "insert_line", 0, "insert_text", "x"},
			{"command", "delete"},
		} {
			same(t, p, "memory", fields(append(op, "path", h)...), fields(append(op, "path", missing)...), h, missing)
		}
		same(t, p, "memory", fields("command", "rename", "old_path", h, "new_path", "/memories/working/stolen-"+tag+".md"),
			fields("command", "rename", "old_path", missing, "new_path", "/memories/working/stolen-"+tag+".md"), h, missing)
		same(t, p, "history", fields("path", h), fields("path", missing), h, missing)
		same(t, p, "history", fields("path", h, "version", 1), fields("path", missing, "version", 1), h, missing)
		// A name held by a hidden memory cannot be taken (SECURITY.md).
		p.memFails([]string{"is taken by a memory you cannot see"}, "command", "create", "path", h, "file_text", "overwritten")
		p.memFails([]string{"is taken by a memory you cannot see"}, "command", "create", "path", h+"/child.md", "file_text", "under it")
	}
	mine := "/memories/semantic/mine-" + tag + ".md"
	p.memOK("command", "create", "path", mine, "file_text", "alice's own note, "+tag+"\n")
	p.memFails([]string{"is taken by a memory you cannot see"}, "command", "rename", "old_path", mine, "new_path", "/memories/semantic/people/bob.md")
	if got := p.viewFile(mine); got != "alice's own note, "+tag+"\n" {
		t.Errorf("%s: alice's note after the refused rename: %q", tag, got)
	}

	// Search, context, stats.
	for _, q := range []string{"zanzibarbob", "quokkabob", "ownedbybob", "loggedbybob", "secret user:bob", "bob"} {
		var res struct {
			Results []struct{ Path string } `json:"results"`
		}
		r := p.call("search", fields("query", q, "k", 50))
		structuredOf(t, r, &res)
		for _, x := range res.Results {
			if bobWords.MatchString(x.Path) {
				t.Errorf("%s: search %q finds %s", tag, q, x.Path)
			}
		}
		if c := p.ok("context", fields("query", q)); regexp.MustCompile(`secret is|the quokkabob project|notes ownedbybob|"e":"loggedbybob"`).MatchString(c) {
			t.Errorf("%s: context %q shows bob's text:\n%s", tag, q, c)
		}
	}
	var stats struct {
		Memories int `json:"memories"`
	}
	r := p.call("stats", fields())
	structuredOf(t, r, &stats)
	if want := 3 + map[string]int{"alone": 0, "mounted": 1, "everyone": 2, "http": 3}[tag]; stats.Memories != want { // alice.md, shared.md, mine-*.md
		t.Errorf("%s: stats count %d memories, want the %d alice sees:\n%s", tag, stats.Memories, want, textOf(r))
	}
	if w := bobWords.FindString(textOf(r)); w != "" {
		t.Errorf("%s: stats show %q", tag, w)
	}

	// Public and shared memories are read-only for alice; a directory
	// holding bob's memories cannot go.
	p.memFails([]string{"this server is for user alice, who changes only memories that are alice's alone"}, "command", "str_replace", "path", "/memories/semantic/shared.md", "old_str", "nine", "new_str", "ten")
	p.memFails([]string{"this server is for user alice"}, "command", "delete", "path", "/memories/semantic/shared.md")
	p.memFails([]string{"this server is for user alice"}, "command", "delete", "path", "/memories/semantic/people")
	p.memFails([]string{"this server is for user alice"}, "command", "rename", "old_path", "/memories/episodic/bobdir", "new_path", "/memories/working/bobdir-"+tag)
	if got := p.viewFile("/memories/semantic/people/alice.md"); !strings.Contains(got, "alice likes tea") {
		t.Errorf("%s: alice.md after the refused deletion: %q", tag, got)
	}
	// Alice's own memory she may change.
	p.memOK("command", "str_replace", "path", mine, "old_str", "own", "new_str", "very own")
}

// same calls tool with args a (about hidden) and b (about missing) and
// checks that the answers match once the paths are swapped.
func same(t *testing.T, p *mcpProc, tool string, a, b map[string]any, hidden, missing string) {
	t.Helper()
	ra, rb := p.call(tool, a), p.call(tool, b)
	ta := strings.ReplaceAll(textOf(ra), hidden, missing)
	if !ra.IsError || !rb.IsError || ta != textOf(rb) {
		t.Errorf("%s %v: %q (error %v)\nbut for a missing path: %q (error %v)", tool, a, textOf(ra), ra.IsError, textOf(rb), rb.IsError)
	}
}

// humanBytes is the memory tool's size of n bytes below 1 KiB.
func humanBytes(n int) string { return strconv.Itoa(n) + "B" }
