package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"testing"
	"time"
)

// TestMCPStdioBadLines: over stdio, a line that is not JSON-RPC (not
// JSON, a bad id, another version, a message cut short by a newline) is
// answered with a JSON-RPC error and the server reads on: the ping after
// each is answered. (The SDK's stream decoder ended the session at the
// first, and took the line after a cut-off one as its rest.)
func TestMCPStdioBadLines(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cmd := exec.Command(mnemofsBin, "mcp", "--data", data)
	withBackend(t, cmd, data)
	in, err := cmd.StdinPipe()
	check(t, err)
	outp, err := cmd.StdoutPipe()
	check(t, err)
	check(t, cmd.Start())
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewReader(outp)
	type resp struct {
		ID    any `json:"id"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	next := func() resp {
		t.Helper()
		done := make(chan string, 1)
		go func() { l, _ := out.ReadString('\n'); done <- l }()
		select {
		case l := <-done:
			var r resp
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("not a JSON-RPC line: %q", l)
			}
			return r
		case <-time.After(20 * time.Second):
			t.Fatal("no answer in 20 s")
		}
		return resp{}
	}
	send := func(s string) { t.Helper(); _, err := io.WriteString(in, s+"\n"); check(t, err) }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := next(); r.Error != nil || len(r.Result) == 0 {
		t.Fatalf("initialize: %+v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, c := range []struct {
		line string
		code int
	}{
		{"hello world", -32700},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600},
		{`{"jsonrpc":"1.0","id":5,"method":"ping"}`, -32600},
		{`{"jsonrpc":"2.0","id":11,"method":`, -32700},
		{"{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"ping\"}\x00", -32700},
	} {
		send(c.line)
		if r := next(); r.Error == nil || r.Error.Code != c.code {
			t.Errorf("%q: answered %+v, want error %d", c.line, r, c.code)
		}
		id := 100 + i
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
		if r := next(); r.Error != nil || r.ID != float64(id) {
			t.Errorf("the ping after %q: %+v", c.line, r)
		}
	}
	// A batch, which protocol 2025-06-18 has not: each request in it is
	// answered with an error, and the session goes on (the SDK ended it).
	send(`[{"jsonrpc":"2.0","id":6,"method":"tools/list"},{"jsonrpc":"2.0","id":7,"method":"ping"}]`)
	l, err := out.ReadString('\n')
	check(t, err)
	var batch []resp
	if err := json.Unmarshal([]byte(l), &batch); err != nil || len(batch) != 2 || batch[0].ID != float64(6) || batch[0].Error == nil || batch[0].Error.Code != -32600 {
		t.Errorf("a batch: answered %q", l)
	}
	send(`{"jsonrpc":"2.0","id":200,"method":"ping"}`)
	if r := next(); r.Error != nil || r.ID != float64(200) {
		t.Errorf("the ping after a batch: %+v", r)
	}
}
