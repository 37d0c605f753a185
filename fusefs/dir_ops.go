package fusefs

import (
	"context"
	"errors"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/store"
)

func (d *dirNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	defer observe(latCreate, time.Now())
	if d.fsys.readOnly {
		return nil, nil, 0, syscall.EROFS
	}
	kind := store.PTCreate
	i, err := d.fsys.st.Create(d.ino, name, mode&0o7777, owner(ctx))
	if errors.Is(err, syscall.EEXIST) && flags&syscall.O_EXCL == 0 {
		// Made by another host since the kernel looked (a shared
		// store): open it, as open(2) without O_EXCL would have.
		if i, err = d.fsys.st.Lookup(d.ino, name); err == nil && !i.IsReg() {
			err = syscall.EISDIR
		}
		if err == nil && flags&syscall.O_TRUNC != 0 {
			err = d.fsys.st.Truncate(i.Ino, 0)
		}
		kind = store.PTNone
	}
	if err != nil {
		return nil, nil, 0, errno(err)
	}
	child := d.fsys.newNode(ctx, d.EmbeddedInode(), &i, out)
	fh, fl, e := child.Operations().(*fileNode).open(ctx, flags, kind)
	if e != 0 {
		return nil, nil, 0, e
	}
	return child, fh, fl, 0
}

func (d *dirNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	defer observe(latMkdir, time.Now())
	if d.fsys.readOnly {
		return nil, syscall.EROFS
	}
	i, err := d.fsys.st.Mkdir(d.ino, name, mode&0o7777, owner(ctx))
	if err != nil {
		return nil, errno(err)
	}
	return d.fsys.newNode(ctx, d.EmbeddedInode(), &i, out), 0
}

func (d *dirNode) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if d.fsys.readOnly {
		return nil, syscall.EROFS
	}
	var i store.Inode
	var err error
	if mode&syscall.S_IFMT == syscall.S_IFREG || mode&syscall.S_IFMT == 0 {
		i, err = d.fsys.st.Create(d.ino, name, mode&0o7777, owner(ctx))
	} else {
		i, err = d.fsys.st.Mknod(d.ino, name, mode, dev, owner(ctx))
	}
	if err != nil {
		return nil, errno(err)
	}
	return d.fsys.newNode(ctx, d.EmbeddedInode(), &i, out), 0
}

func (d *dirNode) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if d.fsys.readOnly {
		return nil, syscall.EROFS
	}
	i, err := d.fsys.st.Symlink(d.ino, name, target, owner(ctx))
	if err != nil {
		return nil, errno(err)
	}
	return d.fsys.newNode(ctx, d.EmbeddedInode(), &i, out), 0
}

func (d *dirNode) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if d.fsys.readOnly {
		return nil, syscall.EROFS
	}
	src, ok := realIno(target)
	if !ok {
		return nil, syscall.EXDEV
	}
	unnamed := false
	if a, err := d.fsys.st.Attr(src); err == nil {
		unnamed = len(a.Links) == 0 // an O_TMPFILE file (tmpfile.go)
	}
	i, err := d.fsys.st.Link(src, d.ino, name)
	if err != nil {
		return nil, errno(err)
	}
	if unnamed {
		// Named at last: what was written to it is committed now, as
		// under its name (a commit of an unnamed file keeps it pending).
		if err := d.fsys.st.Flush(src); err != nil {
			return nil, errno(err)
		}
	}
	return d.fsys.newNode(ctx, d.EmbeddedInode(), &i, out), 0
}

func (d *dirNode) Unlink(ctx context.Context, name string) syscall.Errno {
	defer observe(latUnlink, time.Now())
	if d.fsys.readOnly {
		return syscall.EROFS
	}
	_, err := d.fsys.st.Remove(d.ino, name)
	return errno(err)
}

func (d *dirNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	if d.fsys.readOnly {
		return syscall.EROFS
	}
	if ch := d.GetChild(name); ch != nil {
		if sub, ok := ch.Operations().(*dirNode); ok {
			if last, err := d.fsys.st.Attr(sub.ino); err == nil {
				defer sub.removed(&last)
			}
		}
	}
	return errno(d.fsys.st.Rmdir(d.ino, name))
}

func (d *dirNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	defer observe(latRename, time.Now())
	if d.fsys.readOnly {
		return syscall.EROFS
	}
	dst, ok := newParent.(*dirNode)
	if !ok {
		if r, isRoot := newParent.(*rootNode); isRoot {
			dst = &r.dirNode
		} else {
			return syscall.EROFS // into a generated tree
		}
	}
	if flags&unix.RENAME_EXCHANGE == 0 {
		// A directory renamed over goes as an rmdir would: a descriptor
		// still open on it gets its last attributes.
		defer dst.replaced(newName)()
	}
	if flags&unix.RENAME_WHITEOUT != 0 {
		return errno(d.fsys.st.RenameWhiteout(d.ino, name, dst.ino, newName, flags&^unix.RENAME_WHITEOUT, owner(ctx)))
	}
	return errno(d.fsys.st.Rename(d.ino, name, dst.ino, newName, flags))
}

// replaced returns what to do once name in d has been renamed over:
// keep the attributes of the directory it named (dirNode.removed).
func (d *dirNode) replaced(name string) func() {
	if ch := d.GetChild(name); ch != nil {
		if sub, ok := ch.Operations().(*dirNode); ok {
			if last, err := d.fsys.st.Attr(sub.ino); err == nil {
				return func() { sub.removed(&last) }
			}
		}
	}
	return func() {}
}

// realIno returns the store inode number of a real node.
func realIno(n fs.InodeEmbedder) (uint64, bool) {
	switch x := n.(type) {
	case *fileNode:
		return x.ino, true
	case *leafNode:
		return x.ino, true
	case *dirNode:
		return x.ino, true
	case *rootNode:
		return x.ino, true
	}
	return 0, false
}
