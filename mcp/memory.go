package mcp

import (
	"context"
	"strings"
)

// Limits of the memory tool (docs/mcp.md): a call carries at most MaxText
// bytes of file content and returns at most MaxText bytes; files up to
// MaxText are edited (str_replace, insert), files up to MaxView are viewed
// a part at a time (view_range).
const (
	MaxText  = 1 << 20
	MaxView  = 16 << 20
	MaxLines = 999_999
)

// memory runs one command of the memory tool (Anthropic's client-side
// memory tool, memory_20250818: the same commands, fields and messages).
func (t *Tools) memory(ctx context.Context, a args) (Result, error) {
	cmd, err := a.need("command")
	if err != nil {
		return Result{}, err
	}
	a.cmd = "the `" + cmd + "` command"
	fields := map[string][]string{
		"view":        {"path", "view_range"},
		"create":      {"path", "file_text"},
		"str_replace": {"path", "old_str", "new_str"},
		"insert":      {"path", "insert_line", "insert_text"},
		"delete":      {"path"},
		"rename":      {"old_path", "new_path"},
	}
	allowed, ok := fields[cmd]
	if !ok {
		return Result{}, errorf("unknown command %q: the memory tool's commands are view, create, str_replace, insert, delete and rename", clip(cmd, 40))
	}
	if err := a.only(append([]string{"command"}, allowed...)...); err != nil {
		return Result{}, err
	}
	if cmd == "view" {
		return t.view(ctx, a)
	}
	if t.call.ReadOnly && t.call.ReadOnlyWhy != "" {
		return Result{}, errorf("%s: %s changes nothing (no memory was written); view and the other tools still work", t.call.ReadOnlyWhy, cmd)
	}
	if t.opts.ReadOnly || t.call.ReadOnly || t.st.ReadOnly() {
		return Result{}, errorf("the memory is read-only here (mnemofs mcp --read-only, or a --read-only mount): %s changes nothing; view and the other tools still work", cmd)
	}
	// Whatever the command changed is announced to the kernel as it goes;
	// the answer waits until a reader through a mount would see it.
	defer t.st.NotifyDrain()
	gone := t.target(cmd, a) // what a deletion removes, found before
	var res Result
	switch cmd {
	case "create":
		res, err = t.create(a)
	case "str_replace":
		res, err = t.strReplace(a)
	case "insert":
		res, err = t.insert(a)
	case "delete":
		res, err = t.delete(ctx, a)
	default:
		res, err = t.rename(a)
	}
	if err == nil {
		t.record(cmd, a, gone)
	}
	return res, err
}

// pathArg reads and checks the path field k.
func pathArg(a args, k string) (memPath, error) {
	p, err := a.need(k)
	if err != nil {
		return memPath{}, err
	}
	return parsePath(k, p)
}

// splitLines returns the lines of s, the last newline ending the last line
// rather than starting an empty one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// lineOffset returns the byte offset where line k+1 starts (k lines in);
// len(s) at the end.
func lineOffset(s string, k int) int {
	off := 0
	for ; k > 0; k-- {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return len(s)
		}
		off += i + 1
	}
	return off
}
