package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"
)

// create makes a new file with file_text, and the directories leading to
// it. An existing file is never overwritten (the memory tool's create is
// exclusive): change it with str_replace or insert.
func (t *Tools) create(a args) (Result, error) {
	p, err := pathArg(a, "path")
	if err != nil {
		return Result{}, err
	}
	body, err := a.need("file_text")
	if err != nil {
		return Result{}, err
	}
	if len(body) > MaxText {
		return Result{}, errorf("`file_text` is %d bytes; the memory tool takes at most %d bytes (1 MiB) a call: write a larger file through the mount, or create it smaller and add to it with insert", len(body), MaxText)
	}
	if err := creatable(p); err != nil {
		return Result{}, err
	}
	n, err := t.resolve(p)
	if err != nil {
		return Result{}, err
	}
	if n.exists {
		return Result{}, plain(fmt.Sprintf("Error: File %s already exists", p.shown))
	}
	dir, err := t.mkdirs(p, n)
	if err != nil {
		return Result{}, err
	}
	in, err := t.st.Create(dir, n.name, 0o644, t.opts.Owner)
	if errors.Is(err, syscall.EACCES) && t.st.User() != "" {
		return Result{}, taken(p)
	}
	if err != nil {
		return Result{}, t.fsErr("create", p.shown, err)
	}
	t.st.NotifyEntry(dir, n.name)
	if err := t.write(in.Ino, "", body); err != nil {
		t.st.Remove(dir, n.name) // a file just made: really deleted
		t.st.NotifyEntry(dir, n.name)
		return Result{}, t.fsErr("write", p.shown, err)
	}
	return text("File created successfully at: %s", p.shown), nil
}

// creatable refuses names the memory tool does not make.
func creatable(p memPath) error {
	switch {
	case len(p.parts) == 0:
		return errorf("%s is the root directory: give a path under it, such as /memories/notes.md", Root)
	case p.control:
		return errorf("%s holds control characters (a newline, a tab…): the memory tool makes no such names", escape(p.shown))
	case p.dir:
		return errorf("%s/ ends with a slash: a file's path does not", p.shown)
	}
	return nil
}

// taken is the answer for a name held by a memory the server's user cannot
// see: the one thing a user learns of the others' memories (SECURITY.md).
func taken(p memPath) error {
	return errorf("the name %s is taken by a memory you cannot see: choose another name", p.shown)
}

// mkdirs makes the missing directories of p's parent (n says from where),
// returning the parent.
func (t *Tools) mkdirs(p memPath, n node) (uint64, error) {
	dir := n.dir
	if n.missing < 0 {
		return dir, nil
	}
	for i := n.missing; i < len(p.parts)-1; i++ {
		in, err := t.st.Mkdir(dir, p.parts[i], 0o755, t.opts.Owner)
		if errors.Is(err, syscall.EEXIST) { // made meanwhile
			in, err = t.st.Lookup(dir, p.parts[i])
		}
		if err != nil {
			shown := Root + "/" + strings.Join(p.parts[:i+1], "/")
			if _, lerr := t.st.Lookup(dir, p.parts[i]); errors.Is(err, syscall.EACCES) && errors.Is(lerr, syscall.ENOENT) {
				return 0, taken(memPath{shown: shown}) // a name a hidden memory holds, as create says
			}
			return 0, t.fsErr("create the directory", shown, err)
		}
		t.st.NotifyEntry(dir, p.parts[i])
		dir = in.Ino
	}
	return dir, nil
}

// strReplace replaces the one occurrence of old_str with new_str.
func (t *Tools) strReplace(a args) (Result, error) {
	p, err := pathArg(a, "path")
	if err != nil {
		return Result{}, err
	}
	old, err := a.need("old_str")
	if err != nil {
		return Result{}, err
	}
	repl, err := a.need("new_str")
	if err != nil {
		return Result{}, err
	}
	if old == "" {
		return Result{}, errorf("`old_str` is empty: give the exact text to replace, as view shows it")
	}
	var at int
	var after string
	err = t.edit(p, func(content string) (string, error) {
		switch c := strings.Count(content, old); {
		case c == 0:
			return "", plain(fmt.Sprintf("No replacement was performed, old_str `%s` did not appear verbatim in %s.", clip(old, 200), p.shown))
		case c > 1:
			var lines []string
			for off := 0; ; {
				i := strings.Index(content[off:], old)
				if i < 0 {
					break
				}
				lines = append(lines, fmt.Sprint(strings.Count(content[:off+i], "\n")+1))
				off += i + len(old)
			}
			return "", plain(fmt.Sprintf("No replacement was performed. Multiple occurrences of old_str `%s` in lines: %s (%d occurrences). Please ensure it is unique", clip(old, 200), strings.Join(lines, ", "), c))
		}
		at = strings.Index(content, old)
		after = content[:at] + repl + content[at+len(old):]
		return after, nil
	})
	if err != nil {
		return Result{}, err
	}
	// The lines around the change, as the memory tool shows them: as
	// stored (a store-mode redaction rule masked them, redact.go).
	if r := t.st.Redactor().ForStore(); !r.Empty() {
		after = r.RedactString("/"+strings.Join(p.parts, "/"), after)
		at = min(at, len(after))
	}
	lines := splitLines(after)
	first := strings.Count(after[:at], "\n")
	last := first + strings.Count(repl, "\n")
	var sb strings.Builder
	sb.WriteString("The memory file has been edited. Here is the snippet showing the change (with line numbers):")
	for i := max(0, first-2); i < min(len(lines), last+3); i++ {
		fmt.Fprintf(&sb, "\n%6d\t%s", i+1, lines[i])
	}
	return Result{Text: sb.String()}, nil
}

// insert puts insert_text after line insert_line (0: at the top).
func (t *Tools) insert(a args) (Result, error) {
	p, err := pathArg(a, "path")
	if err != nil {
		return Result{}, err
	}
	line, ok, err := a.integer("insert_line")
	if err == nil && !ok {
		err = errorf("missing required parameter `insert_line` for %s (0 inserts at the top)", a.cmd)
	}
	if err != nil {
		return Result{}, err
	}
	ins, err := a.need("insert_text")
	if err != nil {
		return Result{}, err
	}
	if len(ins) > MaxText {
		return Result{}, errorf("`insert_text` is %d bytes; the memory tool takes at most %d bytes (1 MiB) a call", len(ins), MaxText)
	}
	err = t.edit(p, func(content string) (string, error) {
		n := len(splitLines(content))
		if line < 0 || line > int64(n) {
			return "", plain(fmt.Sprintf("Error: Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", line, n))
		}
		off := lineOffset(content, int(line))
		if !strings.HasSuffix(ins, "\n") {
			ins += "\n"
		}
		if off == len(content) && off > 0 && content[off-1] != '\n' {
			ins = "\n" + ins // after a last line with no newline
		}
		return content[:off] + ins + content[off:], nil
	})
	if err != nil {
		return Result{}, err
	}
	return text("The file %s has been edited.", p.shown), nil
}

// edit changes the file at p: change gets its content and returns the new
// one (or a tool error, and then nothing is written). The file is opened
// for writing before it is read, as an editor's write would be, and
// committed once when closed: one commit, so at most one version.
func (t *Tools) edit(p memPath, change func(string) (string, error)) error {
	n, err := t.resolve(p)
	if err != nil {
		return err
	}
	if !n.exists {
		return plain(fmt.Sprintf("Error: The path %s does not exist. Please provide a valid path.", p.shown))
	}
	if !n.in.IsReg() {
		return plain(fmt.Sprintf("Error: The path %s is not a file (it is a %s).", p.shown, kindOf(n.in)))
	}
	if n.in.Size > MaxText {
		return errorf("%s is %d bytes; the memory tool edits files up to %d bytes (1 MiB): change it through the mount", p.shown, n.in.Size, MaxText)
	}
	ino := n.in.Ino
	// Edits of one file take turns, from the read to the commit: two
	// calls at once (an agent's parallel tool calls) each change what the
	// other left, instead of writing over each other's bytes.
	mu := &editLocks[ino%uint64(len(editLocks))]
	mu.Lock()
	defer mu.Unlock()
	if err := t.st.Open(ino, false); err != nil {
		return t.fsErr("change", p.shown, err)
	}
	var b []byte
	var after string
	b, err = t.readOpen(ino)
	switch {
	case err != nil:
		err = t.fsErr("read", p.shown, err)
	case !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0:
		err = errorf("%s is not UTF-8 text (%d bytes of binary data): the memory tool edits text files only", p.shown, len(b))
	default:
		after, err = change(string(b))
	}
	if err == nil && len(after) > MaxText {
		err = errorf("the edit would make %s %d bytes, over the %d bytes (1 MiB) the memory tool edits: nothing was changed", p.shown, len(after), MaxText)
	}
	wrote := false
	if err == nil {
		wrote = true
		if werr := t.commit(ino, string(b), after); werr != nil {
			err = t.fsErr("write", p.shown, werr)
		}
	}
	if rerr := t.st.Release(ino); rerr != nil && err == nil {
		err = t.fsErr("write", p.shown, rerr)
	}
	if wrote {
		t.st.NotifyContent(ino)
	}
	return err
}

// editLocks are taken by edits of the files whose inode numbers they
// share (by remainder): a lock a file, for a fixed cost.
var editLocks [64]sync.Mutex

// write gives ino (opened here) the content after in place of before.
func (t *Tools) write(ino uint64, before, after string) error {
	if err := t.st.Open(ino, false); err != nil {
		return err
	}
	err := t.commit(ino, before, after)
	return errors.Join(err, t.st.Release(ino))
}

// commit rewrites ino (open here) and commits it, as the close of an
// editor's write does in the mount: a handle the kernel still holds (a
// reader's, whose release the kernel sends later) would otherwise leave
// the commit to its release, and two edits in a row would make one
// version.
func (t *Tools) commit(ino uint64, before, after string) error {
	if err := t.rewrite(ino, before, after); err != nil {
		return err
	}
	return t.st.Flush(ino)
}

// rewrite changes the content of ino (open for writing) from before to
// after, writing from the first byte that differs, so that an addition at
// the end is an append (no new version in an append-friendly tree). What
// fails half-way is put back before the commit.
func (t *Tools) rewrite(ino uint64, before, after string) error {
	p := 0
	for p < len(before) && p < len(after) && before[p] == after[p] {
		p++
	}
	err := t.change(ino, after, p, len(before))
	if err != nil && t.change(ino, before, p, len(after)) != nil {
		t.opts.Logger.Printf("mcp: inode %d: a failed write could not be undone: %v", ino, err)
	}
	return err
}

// change writes s[from:] at from and cuts the file to len(s) when it was
// size bytes long.
func (t *Tools) change(ino uint64, s string, from, size int) error {
	if from < len(s) {
		if _, err := t.st.WriteAt(ino, []byte(s[from:]), int64(from)); err != nil {
			return err
		}
	}
	if len(s) < size {
		return t.st.Truncate(ino, uint64(len(s)))
	}
	return nil
}
