package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// The stdio transport reads one message a line (the MCP stdio transport:
// newline-delimited JSON-RPC). The SDK's reader decodes a stream, not
// lines: a line that is not JSON-RPC ended the session (the server exited
// without an answer), and a line cut short took the next line as its
// rest. lineGuard stands before it: each line is checked alone, a bad
// one answered with a JSON-RPC error (-32700 not JSON, -32600 not a
// request) on stdout, and reading goes on with the next line.

// maxLine bounds a message on stdin (the memory tool takes 1 MiB of text
// a call, which JSON escaping can make several times larger).
const maxLine = 16 << 20

// lineGuard is an io.ReadCloser of the valid lines of r, each ending in
// a newline; the bad ones are answered on w.
type lineGuard struct {
	r       *bufio.Reader
	c       io.Closer
	w       *syncWriter
	pending []byte
	// version is the protocol version the client's initialize asked
	// for: from 2025-06-18 on, MCP has no batches, and the SDK ends the
	// session at one; the guard answers it instead.
	version string
}

func newLineGuard(r io.ReadCloser, w *syncWriter) *lineGuard {
	return &lineGuard{r: bufio.NewReaderSize(r, 64<<10), c: r, w: w}
}

func (g *lineGuard) Close() error { return g.c.Close() }

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		line, tooLong, err := g.line()
		switch {
		case tooLong:
			g.w.Write(errorResponse(nil, -32600, fmt.Sprintf("Invalid Request: a message over %d bytes", maxLine)))
		case len(bytes.TrimSpace(line)) > 0:
			if bad := checkMessage(line); bad != nil {
				g.w.Write(bad)
			} else if bad := g.noBatch(line); bad != nil {
				g.w.Write(bad)
			} else {
				g.pending = append(append(g.pending[:0], line...), '\n')
			}
		}
		if err != nil {
			if len(g.pending) == 0 {
				return 0, err
			}
			break // the last line now, err at the next Read
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// noBatch notes the protocol version an initialize asks for, and answers
// a batch under a version that has none (2025-06-18 on) with an error for
// each request in it; nil for a line to pass on.
func (g *lineGuard) noBatch(line []byte) []byte {
	line = bytes.TrimSpace(line)
	if line[0] != '[' {
		var m struct {
			Method string `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) == nil && m.Method == "initialize" {
			g.version = m.Params.ProtocolVersion
		}
		return nil
	}
	if g.version < "2025-06-18" { // dates compare as strings
		return nil
	}
	var batch []struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(line, &batch) // checked by checkMessage
	var out [][]byte
	for _, m := range batch {
		if m.ID != nil {
			out = append(out, bytes.TrimSuffix(errorResponse(m.ID, -32600,
				"Invalid Request: protocol version "+g.version+" has no batches: send one message a line"), []byte("\n")))
		}
	}
	if len(out) == 0 {
		return []byte{} // notifications only: nothing to answer, nothing passed on
	}
	return append(append([]byte("["), bytes.Join(out, []byte(","))...), "]\n"...)
}

// line reads the next line without its newline; one over maxLine is read
// to its end and dropped (tooLong).
func (g *lineGuard) line() (line []byte, tooLong bool, err error) {
	for {
		part, err := g.r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(part) > maxLine {
				line, tooLong = nil, true
			} else {
				line = append(line, part...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

// checkMessage returns the error response to a line that is not a
// JSON-RPC 2.0 message (or a batch of them), nil for one that is.
func checkMessage(line []byte) []byte {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return errorResponse(nil, -32600, "Invalid Request: message too large or empty")
	}
	if !json.Valid(line) {
		return errorResponse(nil, -32700, "Parse error: a line of stdin is not JSON (one JSON-RPC message a line)")
	}
	if line[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return errorResponse(nil, -32600, "Invalid Request: an empty or malformed batch")
		}
		for _, m := range batch {
			if bad := checkObject(m); bad != nil {
				return bad
			}
		}
		return nil
	}
	return checkObject(line)
}

// checkObject checks one message: an object with "jsonrpc": "2.0", an
// id (if any) that is a string or a number, and a method (a request or a
// notification) or a result or an error (a response).
func checkObject(b []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return errorResponse(nil, -32600, "Invalid Request: not a JSON object")
	}
	id, hasID := m["id"]
	if hasID && !validID(id) {
		return errorResponse(nil, -32600, "Invalid Request: an id must be a string or a number")
	}
	if !hasID {
		id = nil
	}
	if v, ok := m["jsonrpc"]; !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		return errorResponse(id, -32600, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	if meth, ok := m["method"]; ok {
		var s string
		if json.Unmarshal(meth, &s) != nil || s == "" {
			return errorResponse(id, -32600, "Invalid Request: the method must be a string")
		}
		return nil
	}
	_, res := m["result"]
	_, errf := m["error"]
	if hasID && (res || errf) {
		return nil // a response to a request of the server's
	}
	return errorResponse(id, -32600, "Invalid Request: no method, and no result or error")
}

func validID(id json.RawMessage) bool {
	switch t := bytes.TrimSpace(id); {
	case len(t) == 0:
		return false
	case t[0] == '"':
		var s string
		return json.Unmarshal(t, &s) == nil
	default:
		var f float64
		return json.Unmarshal(t, &f) == nil
	}
}

// errorResponse is a JSON-RPC error response line (id null when the
// request's own cannot be told).
func errorResponse(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}

// syncWriter makes each Write whole against the others (the SDK writes a
// message, newline included, in one Write; lineGuard its answers).
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

func (s *syncWriter) Close() error { return nil } // stdout outlives the connection
