package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools as clients see them: names, descriptions and JSON schemas. The
// memory tool's input schema is Anthropic's memory_20250818 (the same
// field names), so an application that implements that tool can forward
// Claude's calls verbatim. Arguments are checked by Tools (the same code in
// a mount process), not by the SDK, so every mistake gets a message that
// names the field.
var toolDefs = []struct {
	name, title, desc string
	input, output     string
	readOnly          bool
}{
	{"memory", "Memory files", "The agent's long-term memory as files under /memories (Anthropic's memory tool). " +
		"Commands: view (a directory two levels deep with sizes, or a file with numbered lines, view_range [first, last] with last -1 for the end), " +
		"create (a new file: path, file_text; never overwrites), str_replace (path, old_str that must occur exactly once, new_str), " +
		"insert (path, insert_line: insert after that line, 0 for the top; insert_text), delete (a file or a directory: memories move to /memories/archive/trash), " +
		"rename (old_path, new_path that must not exist). Markdown front matter (user, tags, importance, ...) is parsed as in the mount; " +
		"semantic/ keeps old versions (see the history tool). At most 1 MiB of text a call.",
		`{"type":"object","properties":{
"command":{"type":"string","enum":["view","create","str_replace","insert","delete","rename"],"description":"what to do"},
"path":{"type":"string","description":"a path under /memories (view, create, str_replace, insert, delete)"},
"view_range":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2,"description":"view of a file: [first, last] line numbers, from 1; last -1 for the end"},
"file_text":{"type":"string","description":"create: the content of the new file"},
"old_str":{"type":"string","description":"str_replace: the exact text to replace; it must occur exactly once"},
"new_str":{"type":"string","description":"str_replace: the text to put in its place"},
"insert_line":{"type":"integer","minimum":0,"description":"insert: the line after which insert_text goes (0: at the top)"},
"insert_text":{"type":"string","description":"insert: the text to insert"},
"old_path":{"type":"string","description":"rename: the file or directory to move"},
"new_path":{"type":"string","description":"rename: where it goes (must not exist)"}},
"required":["command"]}`, "", false},
	{"search", "Search memories", "Ranked search over the memories (BM25, CJK-aware; the ranking of the mount's search/<query>/). " +
		"The query takes words and optional filters: user:NAME type:T tag:T path:/memories/DIR after:YYYY-MM-DD before:YYYY-MM-DD k:N archived:true. " +
		"Results give path (view it with the memory tool), score, line (for a line of a .jsonl or .log file) and a snippet.",
		`{"type":"object","properties":{
"query":{"type":"string","description":"words and filters, as in the mount's search/<query>/"},
"k":{"type":"integer","minimum":1,"maximum":1000,"description":"how many results (default 10)"}},
"required":["query"]}`,
		`{"type":"object","properties":{
"query":{"type":"string"},
"results":{"type":"array","items":{"type":"object","properties":{
"rank":{"type":"integer"},"score":{"type":"number"},"path":{"type":"string"},"line":{"type":"integer"},"snippet":{"type":"string"},
"lexical_rank":{"type":"integer"},"vector_rank":{"type":"integer"}},"required":["rank","score","path","snippet"]}}},
"required":["query","results"]}`, true},
	{"context", "Context for a prompt", "Markdown ready to paste into a prompt: the memories most relevant to the query plus the newest working/ memories, " +
		"trimmed to a token budget (the mount's context/<query> file).",
		`{"type":"object","properties":{
"query":{"type":"string","description":"words and filters, as for search"},
"budget":{"type":"integer","minimum":1,"description":"tokens (about 4 characters each; default 2000)"}},
"required":["query"]}`, "", true},
	{"history", "Versions of a memory", "The kept old versions of a file (oldest first), or the text of one of them with `version`. " +
		"Versioned trees (semantic/ by default) keep a version at every change.",
		`{"type":"object","properties":{
"path":{"type":"string","description":"a file under /memories"},
"version":{"type":"integer","minimum":1,"description":"the version to read; omit to list them"}},
"required":["path"]}`,
		`{"type":"object","properties":{
"path":{"type":"string"},"current_version":{"type":"integer"},
"versions":{"type":"array","items":{"type":"object","properties":{
"version":{"type":"integer"},"size":{"type":"integer"},"sha256":{"type":"string"},"modified":{"type":"string"},"saved":{"type":"string"}}}}},
"required":["path","current_version","versions"]}`, true},
	{"stats", "Memory health", "What meta/stats.json says: memories, bytes per tree, largest directories, duplicates, front matter errors, index backlog, warnings.",
		`{"type":"object","properties":{}}`, `{"type":"object"}`, true},
}

// Instructions tell the client's model what the server is.
const Instructions = "mnemofs: the agent's long-term memory as a directory tree under /memories " +
	"(episodic/ sessions and logs, semantic/ knowledge, working/ scratch, archive/). " +
	"Read and change it with the memory tool; find things with search and context; see old versions with history."

// A Principal is whom a session's calls are made for: a user of the
// store ("" for every user), how the session came (for meta/mcp.log),
// whether it may change anything, and its limits (nil: none).
type Principal struct {
	User        string
	Via         string
	ReadOnly    bool
	ReadOnlyWhy string
	Limit       *Limit
}

// Servers are the MCP servers of one process, one per name its sessions
// are for (a token's name, which is its user; or the one user of a stdio
// server), all running their calls on one Backend. Each call asks who
// what its session's name is now (the tokens file may have changed since
// the session began), and runs within that principal's limits and the
// server's own bound (maxCalls).
type Servers struct {
	b       Backend
	version string
	who     func(name string) (Principal, bool)
	changed func()
	logger  *slog.Logger
	slots   chan struct{}

	// mu guards the maps.
	mu       sync.Mutex
	servers  map[string]*sdk.Server
	sessions map[string]map[*sdk.ServerSession]bool
	// counts are each name's calls (Served, but its sessions).
	counts map[string]*Served
}

// NewServers returns the servers of a process whose calls run on b.
// changed, if set, is called whenever what Served says changes (a
// session begins or ends, a call is refused or waits): it must not
// block; logger may be nil.
func NewServers(b Backend, version string, who func(name string) (Principal, bool), changed func(), logger *slog.Logger) *Servers {
	if changed == nil {
		changed = func() {}
	}
	return &Servers{b: b, version: version, who: who, changed: changed, logger: logger,
		slots: make(chan struct{}, maxCalls), servers: map[string]*sdk.Server{}, sessions: map[string]map[*sdk.ServerSession]bool{},
		counts: map[string]*Served{}}
}

// For returns the server of the sessions of name, made at its first use.
func (s *Servers) For(name string) *sdk.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	if srv := s.servers[name]; srv != nil {
		return srv
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "mnemofs", Title: "mnemofs memory", Version: s.version},
		&sdk.ServerOptions{Instructions: Instructions, Logger: s.logger,
			InitializedHandler: func(_ context.Context, req *sdk.InitializedRequest) { s.track(name, req.Session) }})
	for _, d := range toolDefs {
		no := false
		t := &sdk.Tool{Name: d.name, Title: d.title, Description: d.desc, InputSchema: json.RawMessage(d.input),
			Annotations: &sdk.ToolAnnotations{Title: d.title, ReadOnlyHint: d.readOnly, OpenWorldHint: &no}}
		if d.output != "" {
			t.OutputSchema = json.RawMessage(d.output)
		}
		if !d.readOnly {
			yes := true
			t.Annotations.DestructiveHint = &yes
		}
		srv.AddTool(t, s.handler(name, d.name))
	}
	s.servers[name] = srv
	return srv
}

// track counts the session ss of name until it ends.
func (s *Servers) track(name string, ss *sdk.ServerSession) {
	s.mu.Lock()
	if s.sessions[name] == nil {
		s.sessions[name] = map[*sdk.ServerSession]bool{}
	}
	s.sessions[name][ss] = true
	s.mu.Unlock()
	s.changed()
	go func() {
		ss.Wait()
		s.mu.Lock()
		delete(s.sessions[name], ss)
		if len(s.sessions[name]) == 0 {
			delete(s.sessions, name)
		}
		s.mu.Unlock()
		s.changed()
	}()
}

// Served says, by name, how many sessions are open and what became of
// their calls.
func (s *Servers) Served() map[string]Served {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]Served{}
	for name, c := range s.counts {
		out[name] = *c
	}
	for name, ss := range s.sessions {
		sv := out[name]
		sv.Sessions = len(ss)
		out[name] = sv
	}
	return out
}

// count changes the counts of name and says so.
func (s *Servers) count(name string, add func(*Served)) {
	s.mu.Lock()
	c := s.counts[name]
	if c == nil {
		c = &Served{}
		s.counts[name] = c
	}
	add(c)
	s.mu.Unlock()
	s.changed()
}

// Close ends the sessions of name (its token was withdrawn).
func (s *Servers) Close(name string) {
	s.mu.Lock()
	var open []*sdk.ServerSession
	for ss := range s.sessions[name] {
		open = append(open, ss)
	}
	s.mu.Unlock()
	for _, ss := range open {
		ss.Close()
	}
}

// maxCalls bounds the tool calls a process's servers run at once (over
// all their sessions): each may hold a memory's text and its answer, up
// to a few MiB, so a client sending hundreds at once must not hold
// hundreds of them. The others wait their turn, and one cancelled while
// it waits does not run at all. A token's own bound (Limits.Concurrent)
// is met first, so one token never holds every turn.
const maxCalls = 8

// handler runs a call of tool for the sessions of name: within the
// principal's limits, when one of the slots is free.
func (s *Servers) handler(name, tool string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		p, ok := s.who(name)
		if !ok {
			return errorResult("Error: this session's token was withdrawn (it is no longer in the tokens file): nothing was done"), nil
		}
		if p.Limit != nil {
			release, err := p.Limit.Admit(ctx)
			var over *errOverRate
			if errors.As(err, &over) {
				s.count(name, func(c *Served) { c.Refused++ })
				return errorResult(over.msg), nil
			}
			if err != nil {
				return nil, err
			}
			defer release()
		}
		s.count(name, func(c *Served) {
			c.Calls++
			c.InFlight++
			c.Peak = max(c.Peak, c.InFlight)
		})
		defer s.count(name, func(c *Served) { c.InFlight-- })
		select {
		case s.slots <- struct{}{}:
		default:
			// Every turn is taken: this call waits behind others.
			s.count(name, func(c *Served) { c.Waited++ })
			select {
			case s.slots <- struct{}{}:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		defer func() { <-s.slots }()
		res, err := s.b.Do(ctx, Call{Tool: tool, Args: req.Params.Arguments, User: p.User, Via: p.Via, ReadOnly: p.ReadOnly, ReadOnlyWhy: p.ReadOnlyWhy})
		if err != nil {
			res = Result{Text: "Error: " + err.Error(), IsError: true}
		}
		out := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Text}}, IsError: res.IsError}
		if len(res.Structured) > 0 && !res.IsError {
			out.StructuredContent = res.Structured
		}
		return out, nil
	}
}

func errorResult(msg string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: msg}}, IsError: true}
}
