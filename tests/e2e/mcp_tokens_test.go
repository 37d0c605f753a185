package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// One MCP server for many agents, through a mount for every user: the
// scenario of TestMCPTokens, run with the Go SDK's client and with the
// TypeScript SDK's (mcp_tsclient_test.go), through tokenClient.

// tokenClient is an MCP client over streamable HTTP that holds a session
// per name, each begun with its own bearer token.
type tokenClient interface {
	// connect begins the session of name with token (an error: refused).
	connect(name, token string) error
	// call calls tool in the session of name.
	call(name, tool string, args map[string]any) callResult
	// flood makes the calls of every group at once, and returns their
	// results, group by group.
	flood(groups []floodGroup) [][]callResult
	// close ends every session.
	close()
}

// callResult is one call's outcome: the tool's answer, or Err when the
// call got none (the session refused, the connection gone).
type callResult struct {
	Text       string          `json:"text"`
	IsError    bool            `json:"isError"`
	Structured json.RawMessage `json:"structured,omitempty"`
	Err        string          `json:"err,omitempty"`
	// End is when the call returned, in ms since its flood began.
	End float64 `json:"end"`
}

// floodGroup is Count calls of Tool for the session of Name, all at once
// (or one after another, when Sequential).
type floodGroup struct {
	Name       string         `json:"name"`
	Count      int            `json:"count"`
	Tool       string         `json:"tool"`
	Args       map[string]any `json:"args"`
	Sequential bool           `json:"sequential"`
}

// goClient is tokenClient with the Go SDK's client.
type goClient struct {
	url string
	mu  sync.Mutex
	ss  map[string]*sdk.ClientSession
}

func newGoClient(url string) *goClient {
	return &goClient{url: url, ss: map[string]*sdk.ClientSession{}}
}

func (g *goClient) connect(name, token string) error {
	client := sdk.NewClient(&sdk.Implementation{Name: "mnemofs-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: g.url,
		HTTPClient: &http.Client{Transport: bearer(token)}, MaxRetries: -1}, nil)
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.ss[name] = cs
	g.mu.Unlock()
	return nil
}

func (g *goClient) call(name, tool string, args map[string]any) callResult {
	g.mu.Lock()
	cs := g.ss[name]
	g.mu.Unlock()
	if cs == nil {
		return callResult{Err: "no session for " + name}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return callResult{Err: err.Error()}
	}
	out := callResult{Text: textOf(r), IsError: r.IsError}
	if r.StructuredContent != nil {
		out.Structured, _ = json.Marshal(r.StructuredContent)
	}
	return out
}

func (g *goClient) flood(groups []floodGroup) [][]callResult {
	out := make([][]callResult, len(groups))
	start := time.Now()
	var wg sync.WaitGroup
	for i, grp := range groups {
		out[i] = make([]callResult, grp.Count)
		one := func(k int) {
			r := g.call(grp.Name, grp.Tool, grp.Args)
			r.End = float64(time.Since(start).Microseconds()) / 1000
			out[i][k] = r
		}
		if grp.Sequential {
			wg.Go(func() {
				for k := range grp.Count {
					one(k)
				}
			})
			continue
		}
		for k := range grp.Count {
			wg.Go(func() { one(k) })
		}
	}
	wg.Wait()
	return out
}

func (g *goClient) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, cs := range g.ss {
		cs.Close()
	}
	g.ss = map[string]*sdk.ClientSession{}
}

// startTokensMCP runs `mnemofs mcp --http 127.0.0.1:0 --tokens tokens`.
func startTokensMCP(t *testing.T, data, tokens string, extra ...string) *httpMCP {
	t.Helper()
	h := &httpMCP{}
	startHTTP(t, h, append([]string{"mcp", "--data", data, "--http", "127.0.0.1:0", "--tokens", tokens}, extra...))
	return h
}

// tokenSet is the tokens of the scenario, by name.
var tokenSet = map[string]string{
	"alice": "alice-3f9c2a7d51e84b06a9d2c4e7f1b3a5c8",
	"bob":   "bob-8e1d4c7a2f5b9063d1e4a7c2b5f8e0a3",
	"carol": "carol-0a7e3c5f9d2b4168e7a0c3f6b9d2e5a8", // read-only
	"dave":  "dave-5c2f8a1e7d4b0936c5f8a1e4d7b0c3f6",  // added by SIGHUP
	"eve":   "eve-9d6b3f0c8a5e2714d9b6f3c0a7e4b1d8",   // at most 2 calls at once
	"frank": "frank-2b8e5d1a9f6c3047b2e8d5a1f7c4e0b3", // at most 5 calls a second, 2 at once
}

// writeTokens writes the tokens file with the lines of names.
func writeTokens(t *testing.T, file string, names ...string) {
	t.Helper()
	extra := map[string]string{"carol": " read-only", "eve": " concurrent-calls=2 calls-per-second=0", "frank": " calls-per-second=5 concurrent-calls=2"}
	var b strings.Builder
	b.WriteString("# NAME TOKEN [read-only] [calls-per-second=N] [concurrent-calls=N]\n")
	for _, n := range names {
		fmt.Fprintf(&b, "%s %s%s\n", n, tokenSet[n], extra[n])
	}
	check(t, os.WriteFile(file, []byte(b.String()), 0o600))
}

// TestMCPTokens, with the Go SDK's client: see runTokenScenario.
func TestMCPTokens(t *testing.T) {
	t.Parallel()
	runTokenScenario(t, func(url string) tokenClient { return newGoClient(url) })
}

// runTokenScenario: a mount for every user holds the store; one
// `mnemofs mcp --http --tokens` serves it through the mount to a token
// per agent. Each token sees only its user's memories (and public ones;
// of a shared log, its lines); a write through MCP is in the mount at
// once, as the user's (its users xattr, by-user/, meta/mcp.log); a
// read-only token cannot write; no token or a wrong one gets 401 and no
// session; SIGHUP adds a token and withdraws one (its session ends);
// stats shows the sessions per user; under 100 calls at once a token
// bounded to 2 at a time never has more running, a token bounded to 5
// a second gets about that many through, and another agent's calls never
// wait behind theirs.
func runTokenScenario(t *testing.T, newClient func(url string) tokenClient) {
	data, mnt, dir := t.TempDir(), t.TempDir(), t.TempDir()
	in := func(rel string) string { return filepath.Join(mnt, rel) }
	m := startMount(t, data, mnt)
	check(t, os.MkdirAll(in("semantic/people"), 0o755))
	check(t, os.MkdirAll(in("episodic/s1"), 0o755))
	check(t, os.WriteFile(in("semantic/people/bob.md"), []byte("---\nuser: bob\n---\nbob's secret is zanzibarbob\n"), 0o644))
	check(t, os.WriteFile(in("semantic/people/alice.md"), []byte("---\nuser: alice\n---\nalice drinks rooibostea\n"), 0o644))
	check(t, os.WriteFile(in("semantic/shared.md"), []byte("office hours are nine to five\n"), 0o644))
	check(t, os.WriteFile(in("episodic/s1/turns.jsonl"), []byte(`{"user":"alice","text":"quokka alice planned the trip"}
{"user":"bob","text":"quokka bob hid the key under secretbobstone"}
{"text":"quokka the team met on monday"}
`), 0o644))
	tokens := filepath.Join(dir, "tokens")
	writeTokens(t, tokens, "alice", "bob", "carol", "eve", "frank")
	h := startTokensMCP(t, data, tokens)
	if !strings.Contains(h.stderr.String(), "through the mount at "+mnt) {
		t.Fatalf("mcp did not go through the mount:\n%s", h.stderr.String())
	}
	c := newClient(h.url)
	defer c.close()
	for _, n := range []string{"alice", "bob", "carol", "eve", "frank"} {
		if err := c.connect(n, tokenSet[n]); err != nil {
			t.Fatalf("connect as %s: %v\nserver: %s", n, err, h.stderr.String())
		}
	}
	ok := func(name, tool string, args map[string]any) callResult {
		t.Helper()
		r := c.call(name, tool, args)
		if r.Err != "" || r.IsError {
			t.Fatalf("%s: %s %v: %+v", name, tool, args, r)
		}
		return r
	}

	// Each token sees its user's memories, the public ones, and of the
	// shared log its own lines and the public ones.
	// What each one's memories say (never in the queries, which the
	// answers repeat).
	bobWords := regexp.MustCompile(`secret is|hid the key|bob\.md`)
	aliceWords := regexp.MustCompile(`drinks|planned the trip|alice\.md`)
	for _, who := range []struct {
		name, mine string
		theirs     *regexp.Regexp
	}{{"alice", "rooibostea", bobWords}, {"bob", "zanzibarbob", aliceWords}} {
		var seen strings.Builder
		for _, p := range []string{"/memories", "/memories/semantic/people", "/memories/episodic/s1/turns.jsonl"} {
			seen.WriteString(ok(who.name, "memory", fields("command", "view", "path", p)).Text + "\n")
		}
		for _, q := range []string{"zanzibarbob", "rooibostea", "quokka", "secretbobstone", "trip", "key", "office"} {
			seen.WriteString(ok(who.name, "search", fields("query", q, "k", 50)).Text + "\n")
			seen.WriteString(ok(who.name, "context", fields("query", q)).Text + "\n")
		}
		if w := who.theirs.FindString(seen.String()); w != "" {
			t.Errorf("%s's session shows %q of another user's:\n%s", who.name, w, seen.String())
		}
		if !strings.Contains(seen.String(), who.mine) || !strings.Contains(seen.String(), "quokka the team met") || !strings.Contains(seen.String(), "office hours") {
			t.Errorf("%s's session misses its own memory (%s) or the public ones:\n%s", who.name, who.mine, seen.String())
		}
	}

	// A write through MCP is the user's, in the mount at once.
	ok("alice", "memory", fields("command", "create", "path", "/memories/semantic/from-alice.md", "file_text", "alice wrote this over MCP\n"))
	if b, err := os.ReadFile(in("semantic/from-alice.md")); err != nil || string(b) != "alice wrote this over MCP\n" {
		t.Errorf("semantic/from-alice.md in the mount: %q, %v", b, err)
	}
	if u, err := getxattr(in("semantic/from-alice.md"), "user.mnemofs.users"); err != nil || u != "alice" {
		t.Errorf("semantic/from-alice.md belongs to %q (%v), want alice", u, err)
	}
	if _, err := os.Stat(in("by-user/alice/semantic/from-alice.md")); err != nil {
		t.Errorf("by-user/alice/semantic/from-alice.md: %v", err)
	}
	if _, err := os.Stat(in("by-user/bob/semantic/from-alice.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("by-user/bob/semantic/from-alice.md: %v, want ENOENT", err)
	}
	if r := c.call("bob", "memory", fields("command", "view", "path", "/memories/semantic/from-alice.md")); !r.IsError || !strings.Contains(r.Text, "does not exist") {
		t.Errorf("bob views alice's new memory: %+v", r)
	}
	ok("alice", "memory", fields("command", "str_replace", "path", "/memories/semantic/from-alice.md", "old_str", "wrote", "new_str", "edited"))
	ok("bob", "memory", fields("command", "create", "path", "/memories/working/bob-todo.md", "file_text", "bob's todo\n"))

	// A read-only token reads, and its writes are refused, saying why.
	ok("carol", "memory", fields("command", "view", "path", "/memories/semantic/shared.md"))
	for _, args := range []map[string]any{
		fields("command", "create", "path", "/memories/working/carol.md", "file_text", "x\n"),
		fields("command", "delete", "path", "/memories/semantic/shared.md"),
	} {
		r := c.call("carol", "memory", args)
		if !r.IsError || !strings.Contains(r.Text, "token carol is read-only") {
			t.Errorf("carol's %v: %+v, want a refusal saying the token is read-only", args["command"], r)
		}
	}
	if _, err := os.Stat(in("working/carol.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("working/carol.md after carol's refused create: %v", err)
	}
	if _, err := os.Stat(in("semantic/shared.md")); err != nil {
		t.Errorf("semantic/shared.md after carol's refused delete: %v", err)
	}

	// No token, a wrong one, one not (yet) in the file: no session, 401.
	for _, bad := range []string{"", "wrong-" + tokenSet["alice"], tokenSet["dave"]} {
		if err := c.connect("intruder", bad); err == nil || !strings.Contains(err.Error(), "401") && !strings.Contains(err.Error(), "nauthorized") {
			t.Errorf("connect with token %q: %v, want a 401", bad, err)
		}
	}
	checkHTTP401(t, h.url)

	// The changes are in meta/mcp.log, with the token's name.
	logText, err := os.ReadFile(in("meta/mcp.log"))
	check(t, err)
	for _, want := range []string{"alice over http: create /semantic/from-alice.md", "alice over http: str_replace /semantic/from-alice.md", "bob over http: create /working/bob-todo.md"} {
		if !strings.Contains(string(logText), want) {
			t.Errorf("meta/mcp.log does not say %q:\n%s", want, logText)
		}
	}
	if strings.Contains(string(logText), "carol") {
		t.Errorf("meta/mcp.log records carol's refused writes:\n%s", logText)
	}

	// stats: the sessions of a user's own token; of every user for the
	// operator.
	var st struct {
		Sessions []struct {
			User     string `json:"user"`
			Sessions int    `json:"sessions"`
		} `json:"mcp_sessions"`
	}
	check(t, json.Unmarshal(ok("alice", "stats", fields()).Structured, &st))
	if len(st.Sessions) != 1 || st.Sessions[0].User != "alice" || st.Sessions[0].Sessions != 1 {
		t.Errorf("alice's stats show the sessions %+v, want hers alone: 1", st.Sessions)
	}
	sessions := operatorSessions(t, data)
	for _, n := range []string{"alice", "bob", "carol", "eve", "frank"} {
		if sessions[n].Sessions != 1 {
			t.Errorf("mnemofs stats: %s has %d sessions, want 1 (%+v)", n, sessions[n].Sessions, sessions)
		}
	}

	// SIGHUP: dave comes, bob goes (his open session with him).
	writeTokens(t, tokens, "alice", "carol", "dave", "eve", "frank")
	check(t, h.cmd.Process.Signal(syscall.SIGHUP))
	waitFor(t, func() bool { return strings.Contains(h.stderr.String(), "SIGHUP: re-read") }, "the server re-read its tokens:\n"+h.stderr.String())
	if err := c.connect("dave", tokenSet["dave"]); err != nil {
		t.Fatalf("dave's token after SIGHUP: %v", err)
	}
	if r := ok("dave", "memory", fields("command", "view", "path", "/memories/semantic")).Text; aliceWords.MatchString(r) || bobWords.MatchString(r) || !strings.Contains(r, "shared.md") {
		t.Errorf("dave's view of semantic/: %s", r)
	}
	if r := c.call("bob", "memory", fields("command", "view", "path", "/memories/working/bob-todo.md")); r.Err == "" && !r.IsError {
		t.Errorf("bob's session still works after his token was withdrawn: %+v", r)
	}
	if err := c.connect("bob", tokenSet["bob"]); err == nil {
		t.Errorf("bob's withdrawn token began a session")
	}
	waitFor(t, func() bool { return operatorSessions(t, data)["bob"].Sessions == 0 }, "bob's session ended after SIGHUP")
	ok("alice", "memory", fields("command", "view", "path", "/memories/semantic/from-alice.md"))

	// Limits under 100 calls at once: eve 2 at a time, frank 5 a second,
	// alice (the default limits) not held behind either.
	// A call that takes a while (a view of 2000 lines): without their
	// bounds, the calls of a flood would overlap.
	var big strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&big, "line %d of the long handbook, which every agent reads\n", i)
	}
	check(t, os.WriteFile(in("semantic/handbook.md"), []byte(big.String()), 0o644))
	view := fields("command", "view", "path", "/memories/semantic/handbook.md")
	start := time.Now()
	res := c.flood([]floodGroup{
		{Name: "eve", Count: 100, Tool: "memory", Args: view},
		{Name: "frank", Count: 100, Tool: "memory", Args: view},
		{Name: "alice", Count: 3, Tool: "memory", Args: fields("command", "view", "path", "/memories/semantic/shared.md"), Sequential: true},
	})
	took := time.Since(start)
	for _, r := range res[0] {
		if r.Err != "" || r.IsError {
			t.Fatalf("one of eve's 100 calls: %+v", r)
		}
	}
	frankOK := 0
	for _, r := range res[1] {
		switch {
		case r.Err == "" && !r.IsError:
			frankOK++
		case !strings.Contains(r.Text, "too many calls: token frank may make 5 calls a second"):
			t.Errorf("one of frank's calls: %+v, want an answer or the refusal of his rate", r)
		}
	}
	if most := 5 + int(took.Seconds()*5) + 1; frankOK < 5 || frankOK > most {
		t.Errorf("%d of frank's 100 calls ran in %v at 5 a second, want 5 to %d", frankOK, took, most)
	}
	for _, r := range res[2] {
		if r.Err != "" || r.IsError {
			t.Errorf("alice's call during the flood: %+v", r)
		}
	}
	// eve and frank hold at most 2 of the server's 8 turns each, so
	// alice never waits behind them; without their bounds eve's 100
	// calls would take every turn. The counts reach stats soon.
	waitFor(t, func() bool {
		s := operatorSessions(t, data)
		return s["frank"].Refused == uint64(100-frankOK) && s["eve"].Calls >= 100 && s["eve"].InFlight == 0 && s["alice"].InFlight == 0
	}, fmt.Sprintf("stats count eve's 100 calls, and the %d of frank's calls refused", 100-frankOK))
	sessions = operatorSessions(t, data)
	if e := sessions["eve"]; e.Peak > 2 || e.Peak < 1 {
		t.Errorf("eve (at most 2 calls at once) had %d running at once over %d calls", e.Peak, e.Calls)
	}
	t.Logf("eve: %+v, frank: %+v, alice %+v, flood %v", sessions["eve"], sessions["frank"], sessions["alice"], took)
	if f := sessions["frank"]; f.Peak > 2 {
		t.Errorf("frank (at most 2 calls at once) had %d running at once", f.Peak)
	}
	if a := sessions["alice"]; a.Waited != 0 {
		t.Errorf("%d of alice's calls waited for a turn of the server during eve's and frank's floods", a.Waited)
	}
	c.close()
	m.stop(t, syscall.SIGTERM) // exits cleanly (a race found in its calls would not)
}

// activity is one user's line of mcp_sessions in `mnemofs stats --json`.
type activity struct {
	Sessions int    `json:"sessions"`
	Calls    uint64 `json:"calls"`
	Refused  uint64 `json:"refused_calls"`
	Waited   uint64 `json:"calls_waited_for_a_turn"`
	InFlight int    `json:"calls_in_flight"`
	Peak     int    `json:"peak_calls_in_flight"`
}

// operatorSessions is mcp_sessions of `mnemofs stats --json`, by user.
func operatorSessions(t *testing.T, data string) map[string]activity {
	t.Helper()
	var st struct {
		MCP []struct {
			User string `json:"user"`
			activity
		} `json:"mcp_sessions"`
	}
	check(t, json.Unmarshal([]byte(mustRun(t, "stats", "--data", data, "--json").stdout), &st))
	out := map[string]activity{}
	for _, a := range st.MCP {
		out[a.User] = a.activity
	}
	return out
}

// checkHTTP401: requests with no token, another scheme or a wrong token
// get 401 before any MCP, and no session id.
func checkHTTP401(t *testing.T, url string) {
	t.Helper()
	for _, auth := range []string{"", "Basic " + tokenSet["alice"], "Bearer nope-" + tokenSet["alice"]} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		check(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("Authorization %q: %s, session %q; want 401 and none", auth, resp.Status, resp.Header.Get("Mcp-Session-Id"))
		}
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("not after 10 s: %s", what)
}
