package fusefs

import (
	"context"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// dirNode is a real directory.
type dirNode struct{ node }

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
	list := make([]fuse.DirEntry, len(ents))
	for k, e := range ents {
		list[k] = fuse.DirEntry{Name: e.Name, Ino: e.Ino, Mode: e.Mode}
	}
	return rewindable(fs.NewListDirStream(list), d.Readdir), 0
}

func (d *dirNode) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	return errno(d.fsys.st.Sync())
}
