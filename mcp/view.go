package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/mnemofs/mnemofs/store"
)

// maxListing bounds the entries a directory view lists.
const maxListing = 1000

// view shows a directory (two levels deep, with sizes) or a file (numbered
// lines, view_range honoured).
func (t *Tools) view(ctx context.Context, a args) (Result, error) {
	p, err := pathArg(a, "path")
	if err != nil {
		return Result{}, err
	}
	rng, hasRange, err := a.ints("view_range")
	if err != nil {
		return Result{}, err
	}
	n, err := t.resolve(p)
	if err != nil {
		return Result{}, err
	}
	if !n.exists {
		return Result{}, plain(fmt.Sprintf("The path %s does not exist. Please provide a valid path.", p.shown))
	}
	switch n.in.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		if hasRange {
			return Result{}, errorf("`view_range` applies to files; %s is a directory", p.shown)
		}
		return t.viewDir(ctx, p, n.in.Ino)
	case syscall.S_IFREG:
		return t.viewFile(p, n.in, rng, hasRange)
	case syscall.S_IFLNK:
		return Result{}, errorf("%s is a symlink (to %s): the memory tool does not follow symlinks", p.shown, escape(n.in.Target))
	}
	return Result{}, errorf("Unsupported file type for %s (a %s)", p.shown, kindOf(n.in))
}

// viewFile shows the lines of a file, numbered from 1.
func (t *Tools) viewFile(p memPath, in store.Inode, rng []int64, hasRange bool) (Result, error) {
	if in.Size > MaxView {
		return Result{}, errorf("%s is %d bytes; the memory tool views files up to %d bytes (16 MiB): read it through the mount or with 'mnemofs export'", p.shown, in.Size, MaxView)
	}
	b, err := t.read(in.Ino)
	if err != nil {
		return Result{}, t.fsErr("read", p.shown, err)
	}
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return Result{}, errorf("%s is not UTF-8 text (%d bytes of binary data): the memory tool shows text files only", p.shown, len(b))
	}
	lines := splitLines(string(b))
	if len(lines) > MaxLines {
		return Result{}, errorf("File %s exceeds maximum line limit of 999,999 lines.", p.shown)
	}
	first, last := 1, len(lines)
	if hasRange {
		if first, last, err = checkRange(rng, len(lines)); err != nil {
			return Result{}, err
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Here's the content of %s with line numbers:", escape(p.shown))
	for i := first; i <= last; i++ {
		fmt.Fprintf(&sb, "\n%6d\t%s", i, lines[i-1])
		if sb.Len() > MaxText {
			return Result{}, errorf("the view of %s is over %d bytes (1 MiB), more than the memory tool returns at once: give view_range, such as [1, 200] (the file has %d lines)", p.shown, MaxText, len(lines))
		}
	}
	return Result{Text: sb.String()}, nil
}

// checkRange checks view_range [first, last] (last -1: to the end) against
// a file of n lines.
func checkRange(r []int64, n int) (int, int, error) {
	if len(r) != 2 {
		return 0, 0, errorf("Invalid `view_range`. It should be a list of two integers, [first, last] (last -1: to the end), got %d", len(r))
	}
	first, last := r[0], r[1]
	show := fmt.Sprintf("[%d, %d]", first, last)
	switch {
	case n == 0:
		return 1, 0, nil // an empty file: nothing to show, whatever the range
	case first < 1 || first > int64(n):
		return 0, 0, errorf("Invalid `view_range`: %s. Its first element `%d` should be within the range of lines of the file: [1, %d]", show, first, n)
	case last == -1:
		return int(first), n, nil
	case last > int64(n):
		return 0, 0, errorf("Invalid `view_range`: %s. Its second element `%d` should be smaller than the number of lines in the file: `%d`", show, last, n)
	case last < first:
		return 0, 0, errorf("Invalid `view_range`: %s. Its second element `%d` should be larger or equal than its first `%d`", show, last, first)
	}
	return int(first), int(last), nil
}

// read returns the whole content of ino, opened for reading as a reader
// through the mount would (it counts as an access).
func (t *Tools) read(ino uint64) ([]byte, error) {
	if err := t.st.Open(ino, true); err != nil {
		return nil, err
	}
	b, err := t.readOpen(ino)
	return b, errors.Join(err, t.st.Release(ino))
}

// readOpen reads all of ino, which the caller has open.
func (t *Tools) readOpen(ino uint64) ([]byte, error) {
	in, err := t.st.Attr(ino)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, in.Size)
	n := 0
	for n < len(buf) {
		k, err := t.st.ReadAt(ino, buf[n:], int64(n))
		if err != nil {
			return nil, err
		}
		if k == 0 {
			break
		}
		n += k
	}
	return buf[:n], nil
}

// listed is one line of a directory view.
type listed struct {
	rel  string // below the viewed directory
	size uint64
	dir  bool
	link string // a symlink's target
}

// viewDir lists dir two levels deep, leaving out hidden names (a leading
// dot) and node_modules, as the memory tool's documentation says; the
// generated trees are not in the store. A directory's size is the total of
// the memories below it that the server's user sees.
func (t *Tools) viewDir(ctx context.Context, p memPath, dir uint64) (Result, error) {
	total, out, err := t.walk(ctx, dir, "", 1)
	if err != nil {
		return Result{}, t.fsErr("list", p.shown, err)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Here're the files and directories up to 2 levels deep in %s, excluding hidden items and node_modules:\n%s\t%s", p.shown, humanSize(total), p.shown)
	for i, l := range out {
		if i == maxListing {
			fmt.Fprintf(&sb, "\n(%d more entries not shown: view a subdirectory)", len(out)-i)
			break
		}
		name := p.shown + "/" + l.rel
		switch {
		case l.dir:
			name += "/"
		case l.link != "":
			name += " -> " + escape(l.link)
		}
		fmt.Fprintf(&sb, "\n%s\t%s", humanSize(l.size), name)
	}
	return Result{Text: sb.String()}, nil
}

// walk returns the total size below dir and, when dir is at depth 1 or 2
// below the viewed directory, its entries in listing order: each
// directory before what it holds, names sorted.
func (t *Tools) walk(ctx context.Context, dir uint64, rel string, depth int) (uint64, []listed, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	ents, err := t.st.ReadDir(dir)
	if err != nil {
		return 0, nil, err
	}
	slices.SortFunc(ents, func(a, b store.Dirent) int { return strings.Compare(a.Name, b.Name) })
	var total uint64
	var out []listed
	for _, e := range ents {
		if strings.HasPrefix(e.Name, ".") || e.Name == "node_modules" || dir == store.RootIno && t.st.IsReserved(e.Name) {
			continue
		}
		l := listed{rel: escape(e.Name)}
		if rel != "" {
			l.rel = rel + "/" + l.rel
		}
		var below []listed
		if e.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			l.dir = true
			if l.size, below, err = t.walk(ctx, e.Ino, l.rel, depth+1); err != nil {
				return 0, nil, err
			}
		} else if in, err := t.st.Attr(e.Ino); err == nil {
			l.size, l.link = in.Size, in.Target
		} else {
			continue // removed meanwhile
		}
		total += l.size
		if depth <= 2 {
			out = append(append(out, l), below...)
		}
	}
	return total, out, nil
}

// escape shows a name that holds control characters or is not UTF-8 as a
// quoted Go string, so that no name can forge lines of a listing.
func escape(name string) string {
	if utf8.ValidString(name) && !strings.ContainsFunc(name, unicode.IsControl) {
		return name
	}
	return strconv.Quote(name)
}

// humanSize writes n bytes as du -h does: 512B, 1.5K, 17K, 3.2M.
func humanSize(n uint64) string {
	if n < 1024 {
		return strconv.FormatUint(n, 10) + "B"
	}
	v, units := float64(n), "KMGTPE"
	i := -1
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if v < 9.95 {
		return fmt.Sprintf("%.1f%c", v, units[i])
	}
	return fmt.Sprintf("%.0f%c", v, units[i])
}
