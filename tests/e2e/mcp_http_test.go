package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMCPHTTP: the streamable HTTP transport with the SDK's client: the
// right token works (every tool), a wrong token and none are refused with
// 401 before any MCP, and the token never appears in the server's output.
// SIGHUP re-reads the token file (a file it cannot take changes nothing).
// At start: --http needs --token-file, a non-loopback address without one
// is refused with its own message, the token file must be private and
// long enough, ':PORT' binds loopback.
func TestMCPHTTP(t *testing.T) {
	t.Parallel()
	data, dir := t.TempDir(), t.TempDir()
	tokFile, tok := writeToken(t, dir)
	h := startHTTPMCP(t, data, tokFile)
	if !strings.HasPrefix(h.url, "http://127.0.0.1:") {
		t.Errorf("server at %s, want loopback", h.url)
	}

	cs, err := h.connect(tok)
	if err != nil {
		t.Fatalf("connect with the right token: %v\nstderr: %s", err, h.stderr.String())
	}
	r := callTool(t, cs, "memory", fields("command", "create", "path", "/memories/semantic/h.md", "file_text", "over http, ramen\n"))
	if r.IsError {
		t.Fatalf("create over HTTP: %s", textOf(r))
	}
	if got := textOf(callTool(t, cs, "memory", fields("command", "view", "path", "/memories/semantic/h.md"))); !strings.Contains(got, "     1\tover http, ramen") {
		t.Errorf("view over HTTP: %q", got)
	}
	if got := textOf(callTool(t, cs, "search", fields("query", "ramen"))); !strings.Contains(got, "/memories/semantic/h.md") {
		t.Errorf("search over HTTP: %q", got)
	}
	for _, tool := range []string{"context", "history", "stats"} {
		args := map[string]any{"context": fields("query", "ramen"), "history": fields("path", "/memories/semantic/h.md"), "stats": fields()}[tool]
		if r := callTool(t, cs, tool, args); r.IsError {
			t.Errorf("%s over HTTP: %s", tool, textOf(r))
		}
	}
	r = callTool(t, cs, "memory", fields("command", "view", "path", "/etc"))
	if !r.IsError {
		t.Errorf("a bad path over HTTP: %q, want an error", textOf(r))
	}
	cs.Close()

	for _, bad := range []string{"", "wrong-" + tok, tok[:len(tok)-1]} {
		if cs, err := h.connect(bad); err == nil {
			cs.Close()
			t.Errorf("connected with token %q", bad)
		}
	}
	// Plain HTTP: no header, another scheme, a wrong token: 401.
	for _, auth := range []string{"", "Basic " + tok, "Bearer nope"} {
		req, _ := http.NewRequest("POST", h.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		check(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("Authorization %q: %s (WWW-Authenticate %q), want 401", auth, resp.Status, resp.Header.Get("WWW-Authenticate"))
		}
	}
	// A web page of another origin (DNS rebinding) is refused even with
	// the token; one of this machine's is served.
	for origin, want := range map[string]int{"http://evil.example": http.StatusForbidden, "http://127.0.0.1:5173": http.StatusOK, "http://localhost": http.StatusOK} {
		req, _ := http.NewRequest("POST", h.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		check(t, err)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Origin %s: %s, want %d", origin, resp.Status, want)
		}
	}
	for _, why := range []string{"no Authorization header", "not a bearer token", "wrong bearer token"} {
		if !strings.Contains(h.stderr.String(), why) {
			t.Errorf("the server's log does not say %q:\n%s", why, h.stderr.String())
		}
	}
	if strings.Contains(h.stderr.String(), tok) || strings.Contains(h.stderr.String(), tok[:len(tok)-1]) {
		t.Errorf("the token appears in the server's output:\n%s", h.stderr.String())
	}

	// SIGHUP re-reads the token file: the new token works, the old one
	// no longer; a file it cannot take leaves the token as it was.
	newTok := "renewed-" + tok
	check(t, os.WriteFile(tokFile, []byte(newTok+"\n"), 0o600))
	check(t, h.cmd.Process.Signal(syscall.SIGHUP))
	waitFor(t, func() bool { return strings.Contains(h.stderr.String(), "SIGHUP: re-read") }, "the server re-read its token file")
	if cs, err := h.connect(tok); err == nil {
		cs.Close()
		t.Errorf("the replaced token still connects")
	}
	cs, err = h.connect(newTok)
	if err != nil {
		t.Fatalf("the new token after SIGHUP: %v", err)
	}
	cs.Close()
	check(t, os.Chmod(tokFile, 0o644))
	check(t, h.cmd.Process.Signal(syscall.SIGHUP))
	waitFor(t, func() bool { return strings.Contains(h.stderr.String(), "the tokens were not re-read") }, "the server refused a token file open to others")
	if cs, err := h.connect(newTok); err != nil {
		t.Errorf("the token after a refused re-read: %v", err)
	} else {
		cs.Close()
	}
	check(t, os.WriteFile(tokFile, []byte(tok+"\n"), 0o600))
	check(t, os.Chmod(tokFile, 0o600))
	if strings.Contains(h.stderr.String(), newTok[:20]) {
		t.Errorf("the token appears in the server's output:\n%s", h.stderr.String())
	}

	// Refusals at start: one line each, and the token never in them.
	open := filepath.Join(dir, "open-token")
	check(t, os.WriteFile(open, []byte(tok), 0o644))
	short := filepath.Join(dir, "short-token")
	check(t, os.WriteFile(short, []byte("abc\n"), 0o600))
	spaced := filepath.Join(dir, "spaced-token")
	check(t, os.WriteFile(spaced, []byte("abc def ghi jkl mno\n"), 0o600))
	d2 := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "127.0.0.1:0"}, "--http needs --tokens FILE"},
		{[]string{"--http", "0.0.0.0:0"}, "is not a loopback address"},
		{[]string{"--token-file", tokFile}, "--token-file goes with --http"},
		{[]string{"--http", "127.0.0.1", "--token-file", tokFile}, "--http needs HOST:PORT or :PORT"},
		{[]string{"--http", "127.0.0.1:0", "--token-file", open}, "is open to other users (mode 0644)"},
		{[]string{"--http", "127.0.0.1:0", "--token-file", short}, "is too short (3 bytes)"},
		{[]string{"--http", "127.0.0.1:0", "--token-file", spaced}, "holds spaces"},
		{[]string{"--http", "127.0.0.1:0", "--token-file", filepath.Join(dir, "missing")}, "cannot read the token file"},
		{[]string{"--user", "a/b"}, "--user needs a user name"},
	} {
		res := runMnemofs(t, append([]string{"mcp", "--data", d2}, c.args...)...)
		oneErrorLine(t, res, c.want)
		if strings.Contains(res.stderr, tok) {
			t.Errorf("mcp %v printed the token: %q", c.args, res.stderr)
		}
	}
	// ":PORT" is loopback.
	h2 := startHTTPMCPAt(t, t.TempDir(), tokFile, ":0")
	if !strings.HasPrefix(h2.url, "http://127.0.0.1:") {
		t.Errorf("--http :0 serves at %s, want 127.0.0.1", h2.url)
	}
}
