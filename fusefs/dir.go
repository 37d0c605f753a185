package fusefs

import (
	"context"
	"errors"
	"path"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/store"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// dirNode is a real directory.
type dirNode struct {
	node
	// gone holds its attributes once it is removed while the kernel
	// still knows it (an open handle, a process's working directory):
	// fstat gives them with nlink 0, as on ext4 (a listing of it the
	// kernel answers itself: ENOENT).
	gone atomic.Pointer[store.Inode]
}

// Getattr of a removed directory answers with its last attributes.
func (d *dirNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if g := d.gone.Load(); g != nil {
		fillAttr(g, &out.Attr)
		out.Nlink = 0
		out.SetTimeout(0)
		return 0
	}
	return d.node.Getattr(ctx, fh, out)
}

// removed keeps last, d's attributes before an rmdir, once d is gone
// from the store (the rmdir succeeded).
func (d *dirNode) removed(last *store.Inode) {
	if _, err := d.fsys.st.Attr(d.ino); errors.Is(err, syscall.ENOENT) {
		last.Ctime = time.Now().UnixNano()
		d.gone.Store(last)
	}
}

func (d *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	defer observe(latLookup, time.Now())
	d.seen()
	i, err := d.fsys.st.Lookup(d.ino, name)
	if err != nil {
		return nil, errno(err)
	}
	return d.fsys.newNode(ctx, d.EmbeddedInode(), &i, out), 0
}

func (d *dirNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	defer observe(latReaddir, time.Now())
	d.seen()
	ents, err := d.fsys.st.ReadDir(d.ino)
	if err != nil {
		return nil, errno(err)
	}
	list := d.dots(len(ents))
	for _, e := range ents {
		if e.Name == trashName && d.fsys.hidesTrash(d.ino) {
			continue
		}
		list = append(list, fuse.DirEntry{Name: e.Name, Ino: e.Ino, Mode: e.Mode})
	}
	return rewindable(fs.NewListDirStream(list), d.Readdir), 0
}

// trashName is the trash's name in its directory (archive/).
var trashName = path.Base(store.TrashDir)

// hidesTrash reports whether the listing of directory dir leaves out the
// trash: it holds what was forgotten, which a walk (grep -r) must not take
// for memories, yet stays reachable by name (root.go says why).
func (f *FS) hidesTrash(dir uint64) bool {
	if f.listGenerated {
		return false
	}
	ino, err := f.st.Resolve(path.Dir(store.TrashDir))
	return err == nil && ino == dir
}

// dots starts a listing of d with "." and "..", as ext4's starts (go-fuse
// answers a READDIRPLUS of them without a lookup); room for n more. The
// parent is the kernel's (a real directory's inode number is the store's).
func (d *dirNode) dots(n int) []fuse.DirEntry {
	parent := d.ino
	if _, p := d.Parent(); p != nil {
		parent = p.StableAttr().Ino
	}
	list := make([]fuse.DirEntry, 0, n+2)
	return append(list, fuse.DirEntry{Name: ".", Ino: d.ino, Mode: syscall.S_IFDIR},
		fuse.DirEntry{Name: "..", Ino: parent, Mode: syscall.S_IFDIR})
}

func (d *dirNode) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	return errno(d.fsys.st.Sync())
}
