package e2e

// Helpers for the MCP tests: they start the real binary (`mnemofs mcp`)
// and talk to it with the MCP SDK's own client, over stdio or HTTP.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpProc is a running `mnemofs mcp` and a client session with it.
type mcpProc struct {
	t      testing.TB
	cs     *sdk.ClientSession
	cmd    *exec.Cmd
	stderr syncBuffer
	closed bool
	// wire keeps the last messages the client wrote and read, with
	// when (a call that fails reports them).
	wire *tailLog
	// mount, when set, is the mount that serves this server's calls: a
	// call that fails then reports both processes' goroutines.
	mount *mountProc
}

// startMCP runs `mnemofs mcp --data data extra...` and connects to it over
// stdio. Cleanup closes the session and waits for the process to exit.
func startMCP(t testing.TB, data string, extra ...string) *mcpProc {
	t.Helper()
	return startMCPEnv(t, data, nil, extra...)
}

// startMCPEnv is startMCP with env added to the server's environment
// (MNEMOFS_MCP_TRACE=1: its messages, timed, on its stderr; serverLog
// shows the last ones).
func startMCPEnv(t testing.TB, data string, env []string, extra ...string) *mcpProc {
	t.Helper()
	p := &mcpProc{t: t}
	p.cmd = exec.Command(mnemofsBin, append([]string{"mcp", "--data", data}, extra...)...)
	withBackend(t, p.cmd, data)
	if len(env) > 0 {
		if p.cmd.Env == nil {
			p.cmd.Env = os.Environ()
		}
		p.cmd.Env = append(p.cmd.Env, env...)
	}
	p.cmd.Stderr = &p.stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "mnemofs-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p.wire = &tailLog{}
	cs, err := client.Connect(ctx, &sdk.LoggingTransport{
		Transport: &sdk.CommandTransport{Command: p.cmd, TerminateDuration: 10 * time.Second},
		Writer:    p.wire,
	}, nil)
	if err != nil {
		t.Fatalf("connecting to mnemofs mcp: %v\nstderr: %s", err, p.stderr.String())
	}
	p.cs = cs
	t.Cleanup(p.stop)
	return p
}

// saidOnStderr reports whether the server's stderr says text, waiting a
// little for it (stderr is copied from a pipe by a goroutine of exec).
func (p *mcpProc) saidOnStderr(text string) bool {
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(p.stderr.String(), text) {
			return true
		}
	}
	return false
}

// stop closes the session: the server sees end of input and exits,
// releasing the store.
func (p *mcpProc) stop() {
	if p.closed {
		return
	}
	p.closed = true
	p.cs.Close()
	if p.cmd.ProcessState == nil {
		p.cmd.Wait()
	}
	if s := p.cmd.ProcessState; s != nil && !s.Success() {
		p.t.Errorf("mnemofs mcp exited with %v\nstderr: %s", s, p.serverLog())
	}
}

// call calls tool with args (a map, or json.RawMessage sent as it is).
func (p *mcpProc) call(tool string, args any) *sdk.CallToolResult {
	p.t.Helper()
	if p.mount == nil {
		return callTool(p.t, p.cs, tool, args)
	}
	return callTool(p.t, p.cs, tool, args, func() string {
		p.cmd.Process.Signal(syscall.SIGQUIT)
		return fmt.Sprintf("the mount's goroutines:\n%s\nthe MCP server's stderr:\n%s\nthis client's goroutines:\n%s\nthe client's last messages:\n%s",
			p.mount.dump(), p.serverLog(), clientStacks(), p.wire)
	})
}

// serverLog is the server's stderr with only the last dozen lines of its
// message trace.
func (p *mcpProc) serverLog() string {
	var trace, rest []string
	for _, l := range strings.Split(p.stderr.String(), "\n") {
		if strings.HasPrefix(l, "mcp-trace ") {
			trace = append(trace, clipText(l))
		} else {
			rest = append(rest, l)
		}
	}
	trace = trace[max(0, len(trace)-12):]
	return "its last messages:\n" + strings.Join(trace, "\n") + "\n" + strings.Join(rest, "\n")
}

// tailLog keeps the last lines written to it, each with the time it came.
type tailLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *tailLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, time.Now().Format("15:04:05.000 ")+clipText(strings.TrimSpace(string(b))))
	if len(l.lines) > 12 {
		l.lines = l.lines[1:]
	}
	return len(b), nil
}

func (l *tailLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// clientStacks is the test process's goroutines that are the MCP SDK's
// (the client's reader and writer) or in a system call.
func clientStacks() string {
	buf := make([]byte, 16<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out strings.Builder
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "modelcontextprotocol") || strings.Contains(g, "syscall") {
			out.WriteString(g + "\n\n")
		}
	}
	return out.String()
}

// callTool calls tool; a failed call fails the test with what each of
// report says.
func callTool(t testing.TB, cs *sdk.ClientSession, tool string, args any, report ...func() string) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A call still waiting after 20 s: this client's goroutines then, in
	// the middle of the wait (the report's are taken after it).
	var midway atomic.Pointer[string]
	slow := time.AfterFunc(20*time.Second, func() {
		s := time.Now().Format("15:04:05.000 ") + clientStacks()
		midway.Store(&s)
	})
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	slow.Stop()
	if err != nil {
		var also strings.Builder
		if s := midway.Load(); s != nil {
			also.WriteString("\nthis client's goroutines 20 s into the call, at " + *s)
		}
		for _, r := range report {
			also.WriteString("\n" + r())
		}
		t.Fatalf("calling %s %v: %v%s", tool, args, err, also.String())
	}
	return res
}

// textOf is the text content of a result.
func textOf(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// ok calls tool and fails the test unless it succeeds; it returns the text.
func (p *mcpProc) ok(tool string, args any) string {
	p.t.Helper()
	r := p.call(tool, args)
	if r.IsError {
		p.t.Fatalf("%s %v: error %q", tool, args, textOf(r))
	}
	return textOf(r)
}

// fails calls tool and fails the test unless the result is an error
// (isError) whose text contains every want; it returns the text.
func (p *mcpProc) fails(tool string, args any, want ...string) string {
	p.t.Helper()
	r := p.call(tool, args)
	txt := textOf(r)
	if !r.IsError {
		p.t.Errorf("%s %v: succeeded (%q), want an error", tool, args, clipText(txt))
		return txt
	}
	for _, w := range want {
		if !strings.Contains(txt, w) {
			p.t.Errorf("%s %v: error %q does not say %q", tool, args, txt, w)
		}
	}
	return txt
}

// mem calls the memory tool with alternating field names and values.
func (p *mcpProc) mem(kv ...any) *sdk.CallToolResult {
	p.t.Helper()
	return p.call("memory", fields(kv...))
}

// memOK is mem that must succeed.
func (p *mcpProc) memOK(kv ...any) string {
	p.t.Helper()
	return p.ok("memory", fields(kv...))
}

// memFails is mem that must fail, saying every string in want.
func (p *mcpProc) memFails(want []string, kv ...any) string {
	p.t.Helper()
	return p.fails("memory", fields(kv...), want...)
}

func fields(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// viewFile returns the content of a file as the memory tool's view shows
// it, numbers and header stripped.
func (p *mcpProc) viewFile(path string) string {
	p.t.Helper()
	return unnumber(p.t, p.memOK("command", "view", "path", path))
}

var numbered = regexp.MustCompile(`^ {0,5}\d{1,6}\t`)

// unnumber turns a view of a file back into its content.
func unnumber(t testing.TB, view string) string {
	t.Helper()
	lines := strings.Split(view, "\n")
	if !strings.HasPrefix(lines[0], "Here's the content of ") {
		t.Fatalf("not a file view: %q", clipText(view))
	}
	var b strings.Builder
	for _, l := range lines[1:] {
		loc := numbered.FindStringIndex(l)
		if loc == nil {
			t.Fatalf("view line %q has no line number", l)
		}
		b.WriteString(l[loc[1]:] + "\n")
	}
	return b.String()
}

// structuredOf decodes a result's structured content into v.
func structuredOf(t testing.TB, r *sdk.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatalf("structured content %v: %v", r.StructuredContent, err)
	}
}

func clipText(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// writeToken writes a private token file and returns its path and token.
func writeToken(t *testing.T, dir string) (string, string) {
	t.Helper()
	tok := fmt.Sprintf("tok-%d-%s", time.Now().UnixNano(), strings.Repeat("x", 24))
	f := filepath.Join(dir, "token")
	check(t, os.WriteFile(f, []byte(tok+"\n"), 0o600))
	return f, tok
}

// httpMCP is a `mnemofs mcp --http` process.
type httpMCP struct {
	cmd    *exec.Cmd
	url    string
	stderr syncBuffer
}

var readyHTTP = regexp.MustCompile(`MCP server on (http://\S+/) for`)

// startHTTPMCP runs `mnemofs mcp --http 127.0.0.1:0 --token-file tokenFile`
// and waits for the line that gives its address.
func startHTTPMCP(t *testing.T, data, tokenFile string, extra ...string) *httpMCP {
	t.Helper()
	return startHTTPMCPAt(t, data, tokenFile, "127.0.0.1:0", extra...)
}

// startHTTPMCPAt is startHTTPMCP on addr.
func startHTTPMCPAt(t *testing.T, data, tokenFile, addr string, extra ...string) *httpMCP {
	t.Helper()
	h := &httpMCP{}
	startHTTP(t, h, append([]string{"mcp", "--data", data, "--http", addr, "--token-file", tokenFile}, extra...))
	return h
}

// startHTTP runs mnemofs with args (an 'mcp --http' whose --data is
// args[2]) into h and waits for the line that gives its address.
func startHTTP(t *testing.T, h *httpMCP, args []string) {
	t.Helper()
	data := args[2]
	h.cmd = exec.Command(mnemofsBin, args...)
	withBackend(t, h.cmd, data)
	pipe, err := h.cmd.StderrPipe()
	check(t, err)
	check(t, h.cmd.Start())
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			fmt.Fprintln(&h.stderr, sc.Text())
			if m := readyHTTP.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		h.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { h.cmd.Wait(); close(done) }()
		select {
		case <-done:
			if s := h.cmd.ProcessState; s != nil && !s.Success() {
				t.Errorf("mnemofs mcp --http exited with %v after SIGINT\nstderr: %s", s, h.stderr.String())
			}
		case <-time.After(15 * time.Second):
			h.cmd.Process.Kill()
			<-done
			t.Errorf("mnemofs mcp --http ignored SIGINT for 15 s")
		}
	})
	select {
	case h.url = <-found:
	case <-time.After(30 * time.Second):
		t.Fatalf("mnemofs mcp --http not ready after 30 s\nstderr: %s", h.stderr.String())
	}
}

// bearer adds an Authorization header to every request ("" adds none).
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b != "" {
		r.Header.Set("Authorization", "Bearer "+string(b))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a client session over HTTP with token.
func (h *httpMCP) connect(token string) (*sdk.ClientSession, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "mnemofs-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: h.url,
		HTTPClient: &http.Client{Transport: bearer(token)}, MaxRetries: -1}, nil)
}
