package fusefs

import (
	"context"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/store"
)

// Tmpfile makes an unnamed file (open with O_TMPFILE), which linkat may
// name later (store/tmpfile.go). Its data goes through the daemon: no
// passthrough session, whose content file a commit of an unnamed file
// could not place.
func (d *dirNode) Tmpfile(ctx context.Context, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	defer observe(latCreate, time.Now())
	if d.fsys.readOnly {
		return nil, nil, 0, syscall.EROFS
	}
	i, err := d.fsys.st.CreateTemp(d.ino, mode&0o7777, owner(ctx))
	if err != nil {
		return nil, nil, 0, errno(err)
	}
	d.fsys.attr(&i, &out.Attr)
	out.SetEntryTimeout(ttl)
	out.SetAttrTimeout(ttl)
	child := d.NewInode(ctx, &fileNode{node: node{fsys: d.fsys, ino: i.Ino}}, fs.StableAttr{Mode: syscall.S_IFREG, Ino: i.Ino})
	d.fsys.track(i.Ino, child)
	fh, fl, e := child.Operations().(*fileNode).open(ctx, flags&^syscall.O_APPEND, store.PTNone)
	if e != 0 {
		return nil, nil, 0, e
	}
	return child, fh, fl, 0
}

// Tmpfile in a generated directory: no file is made there.
func (g *genDir) Tmpfile(ctx context.Context, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}
