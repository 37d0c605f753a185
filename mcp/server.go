package mcp

import (
	"context"
	"encoding/json"
	"log/slog"

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

// NewServer returns an MCP server whose tools run on b. version is the
// server's version string; logger may be nil.
func NewServer(b Backend, version string, logger *slog.Logger) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "mnemofs", Title: "mnemofs memory", Version: version},
		&sdk.ServerOptions{Instructions: Instructions, Logger: logger})
	slots := make(chan struct{}, maxCalls)
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
		s.AddTool(t, handler(b, d.name, slots))
	}
	return s
}

// maxCalls bounds the tool calls a server runs at once (over all its
// sessions): each may hold a memory's text and its answer, up to a few
// MiB, so a client sending hundreds at once must not hold hundreds of
// them. The others wait their turn, and one cancelled while it waits
// does not run at all.
const maxCalls = 8

// handler forwards a call of tool name to b, when one of slots is free.
func handler(b Backend, name string, slots chan struct{}) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		res, err := b.Do(ctx, Call{Tool: name, Args: req.Params.Arguments})
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
