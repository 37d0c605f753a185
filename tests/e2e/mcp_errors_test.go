package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// mcpState is what the memory tool shows of a few paths: the listings of
// the trees and the content of files, to check that a refused call
// changed nothing.
func mcpState(p *mcpProc, paths ...string) map[string]string {
	p.t.Helper()
	st := map[string]string{}
	for _, d := range []string{"/memories", "/memories/archive", "/memories/semantic", "/memories/working", "/memories/episodic"} {
		st[d] = textOf(p.mem("command", "view", "path", d))
	}
	for _, f := range paths {
		st[f] = textOf(p.mem("command", "view", "path", f))
		st[f+" history"] = textOf(p.call("history", fields("path", f)))
	}
	return st
}

func sameState(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed %s:\nbefore: %q\nafter:  %q", what, k, clipText(v), clipText(after[k]))
		}
	}
}

// testMCPMemoryErrors makes every mistake the memory tool answers with a
// tool error (isError), checks each message says what to do, and that
// none of them changed anything.
func testMCPMemoryErrors(t *testing.T, p *mcpProc) {
	f := "/memories/semantic/notes.md"
	p.memOK("command", "create", "path", f, "file_text", "alpha\nbeta\nalpha\n")
	p.memOK("command", "create", "path", "/memories/working/bin.dat", "file_text", "")
	// Escapes that are valid UTF-16 (a pair, and U+FFFD itself) are text.
	p.ok("memory", json.RawMessage(`{"command":"create","path":"/memories/working/esc.md","file_text":"fine \ufffd and \ud83d\ude00\n"}`))
	if got := p.viewFile("/memories/working/esc.md"); got != "fine \ufffd and \U0001F600\n" {
		t.Errorf("escaped text: %q", got)
	}
	before := mcpState(p, f)

	for _, c := range []struct {
		want []string
		args []any
	}{
		// Missing, unknown and mistyped fields.
		{[]string{"missing required parameter `command`"}, []any{"path", f}},
		{[]string{`unknown command "edit"`, "view, create, str_replace, insert, delete and rename"}, []any{"command", "edit", "path", f}},
		{[]string{"missing required parameter `path` for the `view` command"}, []any{"command", "view"}},
		{[]string{"`path` must be a string, got a number (42)"}, []any{"command", "view", "path", 42}},
		{[]string{"`command` must be a string"}, []any{"command", []string{"view"}}},
		{[]string{"unknown parameter `file_txt` for the `create` command", "command, path, file_text"}, []any{"command", "create", "path", f, "file_txt", "x"}},
		{[]string{"missing required parameter `file_text` for the `create` command"}, []any{"command", "create", "path", "/memories/new.md"}},
		{[]string{"`file_text` must be a string, got an object"}, []any{"command", "create", "path", "/memories/new.md", "file_text", map[string]int{"a": 1}}},
		{[]string{"`file_text` is 1048577 bytes; the memory tool takes at most 1048576 bytes (1 MiB)"}, []any{"command", "create", "path", "/memories/big.md", "file_text", strings.Repeat("x", 1<<20+1)}},
		// create never overwrites.
		{[]string{"Error: File " + f + " already exists"}, []any{"command", "create", "path", f, "file_text", "clobbered"}},
		{[]string{"/memories is the root directory"}, []any{"command", "create", "path", "/memories", "file_text", "x"}},
		{[]string{"holds control characters"}, []any{"command", "create", "path", "/memories/a\nb.md", "file_text", "x"}},
		{[]string{"`file_text` holds a NUL byte"}, []any{"command", "create", "path", "/memories/nul.md", "file_text", "a\x00b"}},
		{[]string{"/memories/new.md/ ends with a slash: a file's path does not"}, []any{"command", "create", "path", "/memories/new.md/", "file_text", "x"}},
		{[]string{f + "/ ends with a slash, but " + f + " is not a directory"}, []any{"command", "view", "path", f + "/"}},
		{[]string{"/memories/x.md/ ends with a slash: a file's path does not"}, []any{"command", "rename", "old_path", f, "new_path", "/memories/x.md/"}},
		// view
		{[]string{"The path /memories/nowhere.md does not exist. Please provide a valid path."}, []any{"command", "view", "path", "/memories/nowhere.md"}},
		{[]string{"Invalid `view_range`: [0, 2]. Its first element `0` should be within the range of lines of the file: [1, 3]"}, []any{"command", "view", "path", f, "view_range", []int{0, 2}}},
		{[]string{"Invalid `view_range`: [2, 9]. Its second element `9` should be smaller than the number of lines in the file: `3`"}, []any{"command", "view", "path", f, "view_range", []int{2, 9}}},
		{[]string{"Invalid `view_range`: [3, 2]"}, []any{"command", "view", "path", f, "view_range", []int{3, 2}}},
		{[]string{"It should be a list of two integers"}, []any{"command", "view", "path", f, "view_range", []int{1}}},
		{[]string{"`view_range` must be an array of integers, but holds a string"}, []any{"command", "view", "path", f, "view_range", []any{"1", 2}}},
		{[]string{"`view_range` applies to files; /memories/semantic is a directory"}, []any{"command", "view", "path", "/memories/semantic", "view_range", []int{1, 2}}},
		// str_replace
		{[]string{"No replacement was performed, old_str `gamma` did not appear verbatim in " + f + "."}, []any{"command", "str_replace", "path", f, "old_str", "gamma", "new_str", "x"}},
		{[]string{"No replacement was performed. Multiple occurrences of old_str `alpha` in lines: 1, 3 (2 occurrences). Please ensure it is unique"}, []any{"command", "str_replace", "path", f, "old_str", "alpha", "new_str", "x"}},
		{[]string{"`old_str` is empty"}, []any{"command", "str_replace", "path", f, "old_str", "", "new_str", "x"}},
		{[]string{"missing required parameter `new_str` for the `str_replace` command"}, []any{"command", "str_replace", "path", f, "old_str", "beta"}},
		{[]string{"Error: The path /memories/nowhere.md does not exist. Please provide a valid path."}, []any{"command", "str_replace", "path", "/memories/nowhere.md", "old_str", "a", "new_str", "b"}},
		{[]string{"Error: The path /memories/semantic is not a file (it is a directory)."}, []any{"command", "str_replace", "path", "/memories/semantic", "old_str", "a", "new_str", "b"}},
		{[]string{"the edit would make " + f + " 1048588 bytes, over the 1048576 bytes (1 MiB)"}, []any{"command", "str_replace", "path", f, "old_str", "beta", "new_str", strings.Repeat("y", 1<<20-1)}},
		// insert
		{[]string{"Error: Invalid `insert_line` parameter: 4. It should be within the range of lines of the file: [0, 3]"}, []any{"command", "insert", "path", f, "insert_line", 4, "insert_text", "x"}},
		{[]string{"Error: Invalid `insert_line` parameter: -1."}, []any{"command", "insert", "path", f, "insert_line", -1, "insert_text", "x"}},
		{[]string{"`insert_line` must be an integer, got a string (\"2\")"}, []any{"command", "insert", "path", f, "insert_line", "2", "insert_text", "x"}},
		{[]string{"`insert_line` must be an integer, got a number (1.5)"}, []any{"command", "insert", "path", f, "insert_line", 1.5, "insert_text", "x"}},
		{[]string{"missing required parameter `insert_line`"}, []any{"command", "insert", "path", f, "insert_text", "x"}},
		{[]string{"missing required parameter `insert_text`"}, []any{"command", "insert", "path", f, "insert_line", 1}},
		// delete
		{[]string{"Error: Cannot delete the /memories directory itself"}, []any{"command", "delete", "path", "/memories"}},
		{[]string{"Error: The path /memories/nowhere.md does not exist"}, []any{"command", "delete", "path", "/memories/nowhere.md"}},
		{[]string{"holds the trash (/memories/archive/trash)"}, []any{"command", "delete", "path", "/memories/archive"}},
		// rename
		{[]string{"Error: The path /memories/nowhere.md does not exist"}, []any{"command", "rename", "old_path", "/memories/nowhere.md", "new_path", "/memories/x.md"}},
		{[]string{"Error: The destination /memories/working/bin.dat already exists"}, []any{"command", "rename", "old_path", f, "new_path", "/memories/working/bin.dat"}},
		{[]string{"cannot move /memories/semantic into itself"}, []any{"command", "rename", "old_path", "/memories/semantic", "new_path", "/memories/semantic/sub"}},
		{[]string{"missing required parameter `new_path`"}, []any{"command", "rename", "old_path", f}},
		{[]string{"/memories is the root directory: it cannot be renamed"}, []any{"command", "rename", "old_path", "/memories", "new_path", "/memories/x"}},
	} {
		p.memFails(c.want, c.args...)
	}
	// Arguments that are not UTF-8, or not an object.
	p.fails("memory", json.RawMessage("{\"command\":\"create\",\"path\":\"/memories/s.md\",\"file_text\":\"a\xffb\"}"), "the arguments are not valid UTF-8")
	p.fails("memory", json.RawMessage(`["view"]`), "the arguments must be a JSON object, got an array")
	p.fails("memory", json.RawMessage(`{"command":"create","path":"/memories/s.md","file_text":"\ud800 alone"}`), "`file_text` is not valid UTF-8 text", "unpaired surrogate")
	p.fails("search", fields("query", ""), "`query` is empty")
	p.fails("search", fields("query", "x", "k", 0), "`k` must be at least 1, got 0")
	p.fails("search", fields("query", "x", "k", 1001), "`k` must be at most 1000, got 1001")
	p.fails("search", fields("query", "x after:yesterday"), "bad query")
	p.fails("search", fields("query", "x", "user", "bob"), "unknown parameter `user` for `search`")
	p.fails("context", fields("query", "x", "budget", "lots"), "`budget` must be an integer")
	p.fails("history", fields("path", f, "version", 7), "has no kept version 7")
	p.fails("history", fields("path", "/memories/semantic"), "only files have versions")
	p.fails("stats", fields("verbose", true), "unknown parameter `verbose` for `stats`")
	sameState(t, "a refused call", before, mcpState(p, f))
}
