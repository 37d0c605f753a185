package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"github.com/mnemofs/mnemofs/store"
)

// delete removes a file or a directory with everything in it, as rm (-r)
// in the mount does: memories go to /memories/archive/trash/ (recoverable),
// scratch files and anything already in the trash are really deleted.
func (t *Tools) delete(ctx context.Context, a args) (Result, error) {
	p, err := pathArg(a, "path")
	if err != nil {
		return Result{}, err
	}
	if len(p.parts) == 0 {
		return Result{}, plain("Error: Cannot delete the /memories directory itself")
	}
	n, err := t.resolve(p)
	if err != nil {
		return Result{}, err
	}
	if !n.exists {
		return Result{}, plain(fmt.Sprintf("Error: The path %s does not exist", p.shown))
	}
	if !n.in.IsDir() {
		trashed, err := t.st.Remove(n.dir, n.name)
		if err != nil {
			return Result{}, t.fsErr("delete", p.shown, err)
		}
		t.st.NotifyEntry(n.dir, n.name)
		if trashed != "" {
			return text("Successfully deleted %s (moved to %s%s: rename it back to restore it)", p.shown, Root, trashed), nil
		}
		return text("Successfully deleted %s", p.shown), nil
	}
	if rel := "/" + strings.Join(p.parts, "/"); rel != store.TrashDir && strings.HasPrefix(store.TrashDir, rel+"/") {
		return Result{}, errorf("%s holds the trash (%s%s): delete the directories in it one by one", p.shown, Root, store.TrashDir)
	}
	// Checked first, so that a refusal changes nothing.
	if err := t.st.MayRemoveTree(n.in.Ino); err != nil {
		return Result{}, t.fsErr("delete", p.shown, err)
	}
	var d deletion
	if err := t.removeTree(ctx, n.in.Ino, p.shown, &d); err != nil {
		return Result{}, d.stopped(err)
	}
	if err := t.st.Rmdir(n.dir, n.name); err != nil {
		return Result{}, d.stopped(t.fsErr("delete", p.shown, err))
	}
	t.st.NotifyEntry(n.dir, n.name)
	switch {
	case d.trashed > 0:
		return text("Successfully deleted %s (%d memories moved to %s%s, where rename restores them)", p.shown, d.trashed, Root, store.TrashDir), nil
	case d.removed > 0:
		return text("Successfully deleted %s (%d entries)", p.shown, d.removed), nil
	}
	return text("Successfully deleted %s", p.shown), nil
}

// deletion counts what a directory's deletion did so far.
type deletion struct{ trashed, removed int }

// stopped reports a deletion that failed part way.
func (d *deletion) stopped(err error) error {
	if d.trashed+d.removed == 0 {
		return err
	}
	var te *toolError
	errors.As(err, &te)
	return &toolError{fmt.Sprintf("%s (the deletion stopped there: %d memories had been moved to the trash and %d other entries removed)", te.msg, d.trashed, d.removed)}
}

// removeTree empties the directory dir (shown as at), deepest first.
func (t *Tools) removeTree(ctx context.Context, dir uint64, at string, d *deletion) error {
	if err := ctx.Err(); err != nil {
		return errorf("deleting %s: %v", at, err)
	}
	ents, err := t.st.ReadDir(dir)
	if err != nil {
		return t.fsErr("list", at, err)
	}
	slices.SortFunc(ents, func(a, b store.Dirent) int { return strings.Compare(a.Name, b.Name) })
	for _, e := range ents {
		p := at + "/" + escape(e.Name)
		if e.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			if err := t.removeTree(ctx, e.Ino, p, d); err != nil {
				return err
			}
			if err := t.st.Rmdir(dir, e.Name); err != nil {
				return t.fsErr("delete", p, err)
			}
			d.removed++
		} else {
			trashed, err := t.st.Remove(dir, e.Name)
			if err != nil {
				return t.fsErr("delete", p, err)
			}
			if trashed != "" {
				d.trashed++
			} else {
				d.removed++
			}
		}
		t.st.NotifyEntry(dir, e.Name)
	}
	return nil
}

// rename moves a file or directory; the destination must not exist. As in
// the mount, a memory's history, metadata and links follow it.
func (t *Tools) rename(a args) (Result, error) {
	from, err := pathArg(a, "old_path")
	if err != nil {
		return Result{}, err
	}
	to, err := pathArg(a, "new_path")
	if err != nil {
		return Result{}, err
	}
	if len(from.parts) == 0 {
		return Result{}, errorf("%s is the root directory: it cannot be renamed", Root)
	}
	src, err := t.resolve(from)
	if err != nil {
		return Result{}, err
	}
	if !src.exists {
		return Result{}, plain(fmt.Sprintf("Error: The path %s does not exist", from.shown))
	}
	if src.in.IsDir() {
		to.dir = false // a directory's new name may end with a slash
	}
	if err := creatable(to); err != nil {
		return Result{}, err
	}
	dst, err := t.resolve(to)
	if err != nil {
		return Result{}, err
	}
	if dst.exists {
		return Result{}, plain(fmt.Sprintf("Error: The destination %s already exists", to.shown))
	}
	if src.in.IsDir() && strings.HasPrefix(to.shown+"/", from.shown+"/") {
		return Result{}, errorf("cannot move %s into itself (%s)", from.shown, to.shown)
	}
	// Checked before the destination's directories are made, so that a
	// refusal changes nothing.
	check := t.st.MayChange
	if src.in.IsDir() {
		check = t.st.MayRemoveTree
	}
	if err := check(src.in.Ino); err != nil {
		return Result{}, t.fsErr("rename", from.shown, err)
	}
	dir, err := t.mkdirs(to, dst)
	if err != nil {
		return Result{}, err
	}
	err = t.st.Rename(src.dir, src.name, dir, dst.name, store.RenameNoReplace)
	switch {
	case errors.Is(err, syscall.EACCES) && t.st.User() != "":
		return Result{}, taken(to) // the source was checked: the name is held
	case errors.Is(err, syscall.EEXIST):
		return Result{}, plain(fmt.Sprintf("Error: The destination %s already exists", to.shown))
	case err != nil:
		return Result{}, t.fsErr("rename", from.shown, err)
	}
	t.st.NotifyEntry(src.dir, src.name)
	t.st.NotifyEntry(dir, dst.name)
	return text("Successfully renamed %s to %s", from.shown, to.shown), nil
}
