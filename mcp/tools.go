package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"runtime/debug"
	"unicode/utf8"

	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// Call is one tools/call: the tool's name and its arguments exactly as the
// client sent them (so that what is checked is what was sent, also when the
// call travels to a mount process first), and whom it is made for.
type Call struct {
	Tool string `json:"tool"`
	Args []byte `json:"args,omitempty"`
	// User is the session's user ("" for every user): the call sees the
	// store as a store opened for that user would (isolation).
	User string `json:"user,omitempty"`
	// Via is how the session reached its server ("http", "stdio"), for
	// meta/mcp.log.
	Via string `json:"via,omitempty"`
	// ReadOnly refuses every change; ReadOnlyWhy says why, in the
	// refusal ("token alice is read-only").
	ReadOnly    bool   `json:"read_only,omitempty"`
	ReadOnlyWhy string `json:"read_only_why,omitempty"`
}

// Result is a tool's answer: text for the model, structured content for
// tools that declare an output schema, and whether it is an error
// (isError: true, with a message the agent can act on).
type Result struct {
	Text       string          `json:"text"`
	Structured json.RawMessage `json:"structured,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
}

// Backend runs tool calls: a Host on an open store, or a proxy to the
// process that holds the store. An error is a failure to run the call at
// all (the process holding the store went away), never a tool error.
type Backend interface {
	Do(ctx context.Context, c Call) (Result, error)
}

// Options configure Tools and Hosts.
type Options struct {
	// ReadOnly refuses every change, whatever the store allows.
	ReadOnly bool
	// Owner owns the files and directories the tools create.
	Owner store.Owner
	// Logger receives internal errors (a panic in a tool); nil: log.Default.
	Logger *log.Logger
}

// Tools runs the tools on an open store (or a user's view of one) and its
// views engine, through the same store calls the filesystem makes
// (Lookup, Create, Open, WriteAt, Release, Remove, Rename), so the two
// never disagree. Isolation is the store's: a store opened for a user, or
// a view for a user (store.ForUser), hides the others' memories here too.
type Tools struct {
	st *store.Store
	// base is the store st is a view of (nil: st is no view).
	base *store.Store
	eng  *views.Engine
	opts Options
	// scope restricts the engine to what st shows (views.ForReader) when
	// st is a view of the engine's store for one user.
	scope views.Filter
	// call is the call being run (who, how: meta/mcp.log); host, when
	// set, reports the MCP sessions (stats).
	call Call
	host *Host
}

// New returns the tools over st and eng (eng may be nil: search, context
// and stats then answer that they need the index).
func New(st *store.Store, eng *views.Engine, opts Options) *Tools {
	if opts.Logger == nil {
		opts.Logger = log.Default()
	}
	return &Tools{st: st, eng: eng, opts: opts}
}

// toolError is a tool error: its message goes to the agent as it is.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

// errorf makes a tool error whose message starts "Error: ".
func errorf(format string, a ...any) error {
	return &toolError{"Error: " + fmt.Sprintf(format, a...)}
}

// plain makes a tool error with exactly msg (the memory tool's documented
// messages that have no "Error: " prefix).
func plain(msg string) error { return &toolError{msg} }

// Do runs c. Every problem is an error result; a panic in a tool is one
// too (logged), so the server keeps running.
func (t *Tools) Do(ctx context.Context, c Call) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			t.opts.Logger.Printf("mcp: tool %s panicked: %v\n%s", c.Tool, p, debug.Stack())
			res = Result{Text: "Error: internal error in mnemofs (logged by the server); nothing more was changed", IsError: true}
		}
	}()
	a, err := parseArgs(c.Args)
	if err == nil {
		a.cmd = "`" + c.Tool + "`"
		switch c.Tool {
		case "memory":
			res, err = t.memory(ctx, a)
		case "search":
			res, err = t.search(ctx, a)
		case "context":
			res, err = t.context(ctx, a)
		case "history":
			res, err = t.history(a)
		case "stats":
			res, err = t.stats(a)
		default:
			err = errorf("unknown tool %q: the tools are memory, search, context, history and stats", c.Tool)
		}
	}
	if err != nil {
		var te *toolError
		if !errors.As(err, &te) {
			err = errorf("%v", err)
			errors.As(err, &te)
		}
		return Result{Text: te.msg, IsError: true}, nil
	}
	return res, nil
}

// text is a plain text result.
func text(format string, a ...any) Result { return Result{Text: fmt.Sprintf(format, a...)} }

// structured is a result with v as structured content and txt for the model.
func structured(txt string, v any) (Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Result{}, err
	}
	return Result{Text: txt, Structured: b}, nil
}

// clip cuts s to at most n bytes at a character boundary, marking a cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
