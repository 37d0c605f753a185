package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The official TypeScript MCP SDK's client, run by node from npm's
// package, drives the same scenario as the Go SDK's (TestMCPTokens).

// tsSDK is the version of @modelcontextprotocol/sdk the test installs.
const tsSDK = "1.32.2"

// TestMCPTokensTypeScript is TestMCPTokens with the TypeScript SDK's
// client. It needs node and npm, and npm's registry for the first run
// (the package is kept in the temporary directory for the next); without
// them it skips, unless MNEMOFS_REQUIRE_FUSE=1 (CI) makes it required.
func TestMCPTokensTypeScript(t *testing.T) {
	t.Parallel()
	dir := tsClientDir(t)
	runTokenScenario(t, func(url string) tokenClient { return startTSClient(t, dir, url) })
}

// optional skips the test for want of what it names, or fails it when
// MNEMOFS_REQUIRE_FUSE=1 makes the test's tools required.
func optional(t *testing.T, format string, a ...any) {
	t.Helper()
	if os.Getenv("MNEMOFS_REQUIRE_FUSE") == "1" {
		t.Fatalf("required (MNEMOFS_REQUIRE_FUSE=1): "+format, a...)
	}
	t.Skipf(format, a...)
}

// tsInstall serialises the installs of this test process.
var tsInstall sync.Mutex

// tsClientDir returns a directory where node finds the TypeScript SDK
// (node_modules), installing it with npm the first time, and the driver
// script (testdata/mcpclient.mjs) in it.
func tsClientDir(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			optional(t, "the TypeScript SDK test needs %s (Debian: apt-get install nodejs npm)", tool)
		}
	}
	tsInstall.Lock()
	defer tsInstall.Unlock()
	dir := filepath.Join(os.TempDir(), "mnemofs-ts-mcp-sdk-"+tsSDK)
	if !tsInstalled(dir) {
		tmp, err := os.MkdirTemp(os.TempDir(), "mnemofs-ts-mcp-sdk-install-")
		check(t, err)
		defer os.RemoveAll(tmp)
		check(t, os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"private":true,"type":"module"}`+"\n"), 0o644))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "@modelcontextprotocol/sdk@"+tsSDK)
		cmd.Dir = tmp
		if out, err := cmd.CombinedOutput(); err != nil || !tsInstalled(tmp) {
			optional(t, "npm install @modelcontextprotocol/sdk@%s failed (%v): %s", tsSDK, err, strings.TrimSpace(string(out)))
		}
		os.RemoveAll(dir) // a broken earlier install
		if err := os.Rename(tmp, dir); err != nil && !tsInstalled(dir) {
			t.Fatalf("keeping the TypeScript SDK in %s: %v", dir, err)
		}
	}
	script, err := os.ReadFile("testdata/mcpclient.mjs")
	check(t, err)
	check(t, os.WriteFile(filepath.Join(dir, "mcpclient.mjs"), script, 0o644))
	return dir
}

// tsInstalled reports whether dir holds the SDK at tsSDK.
func tsInstalled(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules/@modelcontextprotocol/sdk/package.json"))
	var pkg struct{ Version string }
	return err == nil && json.Unmarshal(b, &pkg) == nil && pkg.Version == tsSDK
}

// tsClient is tokenClient with the TypeScript SDK's client: a node
// process running testdata/mcpclient.mjs, a command a line.
type tsClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	mu     sync.Mutex // one command at a time
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr syncBuffer
}

func startTSClient(t *testing.T, dir, url string) *tsClient {
	t.Helper()
	c := &tsClient{t: t}
	c.cmd = exec.Command("node", "mcpclient.mjs", url)
	c.cmd.Dir = dir
	c.cmd.Stderr = &c.stderr
	var err error
	c.in, err = c.cmd.StdinPipe()
	check(t, err)
	out, err := c.cmd.StdoutPipe()
	check(t, err)
	check(t, c.cmd.Start())
	c.out = bufio.NewScanner(out)
	c.out.Buffer(make([]byte, 1<<20), 256<<20)
	t.Cleanup(func() {
		c.in.Close()
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.cmd.Process.Kill()
			<-done
		}
	})
	return c
}

// do sends one command and decodes its answer into v.
func (c *tsClient) do(cmd map[string]any, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, _ := json.Marshal(cmd)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("the TypeScript client: %v\nstderr: %s", err, c.stderr.String())
	}
	if !c.out.Scan() {
		c.t.Fatalf("the TypeScript client answered nothing to %s (%v)\nstderr: %s", clipText(string(b)), c.out.Err(), c.stderr.String())
	}
	if err := json.Unmarshal(c.out.Bytes(), v); err != nil {
		c.t.Fatalf("the TypeScript client's answer %s: %v", clipText(c.out.Text()), err)
	}
}

func (c *tsClient) connect(name, token string) error {
	var r callResult
	c.do(map[string]any{"op": "connect", "name": name, "token": token}, &r)
	if r.Err != "" {
		return fmt.Errorf("%s", r.Err)
	}
	return nil
}

func (c *tsClient) call(name, tool string, args map[string]any) callResult {
	var r callResult
	c.do(map[string]any{"op": "call", "name": name, "tool": tool, "args": args}, &r)
	if string(r.Structured) == "null" {
		r.Structured = nil
	}
	return r
}

func (c *tsClient) flood(groups []floodGroup) [][]callResult {
	var r struct{ Results [][]callResult }
	c.do(map[string]any{"op": "flood", "groups": groups}, &r)
	return r.Results
}

func (c *tsClient) close() {
	var r callResult
	c.do(map[string]any{"op": "close"}, &r)
}
