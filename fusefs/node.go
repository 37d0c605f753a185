package fusefs

import (
	"context"
	"math"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/store"
)

// node is what every real node has: its store inode number. The attribute,
// xattr and statfs operations are the same for all kinds.
type node struct {
	fs.Inode
	fsys *FS
	ino  uint64
}

// leafNode is a symlink, FIFO, socket or device.
type leafNode struct{ node }

func (n *node) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	defer observe(latGetattr, time.Now())
	i, err := n.fsys.st.Attr(n.ino)
	if err != nil {
		return errno(err)
	}
	n.fsys.attr(&i, &out.Attr)
	out.SetTimeout(ttl)
	return 0
}

// minTime and maxTime bound the times a node can hold (int64 nanoseconds
// since 1970: years 1678 to 2262).
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	defer observe(latSetattr, time.Now())
	if n.fsys.readOnly {
		return syscall.EROFS
	}
	var c store.AttrChange
	if m, ok := in.GetMode(); ok {
		c.Mode = &m
	}
	if u, ok := in.GetUID(); ok {
		c.Uid = &u
	}
	if g, ok := in.GetGID(); ok {
		c.Gid = &g
	}
	if sz, ok := in.GetSize(); ok {
		c.Size = &sz
	}
	// utimes with no times: allowed on an append-only file.
	c.Now = in.Valid&(fuse.FATTR_ATIME|fuse.FATTR_MTIME) != 0 &&
		in.Valid&(fuse.FATTR_ATIME|fuse.FATTR_ATIME_NOW) != fuse.FATTR_ATIME &&
		in.Valid&(fuse.FATTR_MTIME|fuse.FATTR_MTIME_NOW) != fuse.FATTR_MTIME
	for _, x := range []struct {
		get func() (time.Time, bool)
		to  **int64
	}{{in.GetATime, &c.Atime}, {in.GetMTime, &c.Mtime}} {
		if t, ok := x.get(); ok {
			if t.Before(minTime) || t.After(maxTime) {
				// Times are kept as int64 nanoseconds: refuse what
				// they cannot hold rather than wrap around.
				return syscall.EOVERFLOW
			}
			ns := t.UnixNano()
			*x.to = &ns
		}
	}
	i, err := n.fsys.st.SetAttr(n.ino, c)
	if err != nil {
		return errno(err)
	}
	n.fsys.attr(&i, &out.Attr)
	out.SetTimeout(ttl)
	return 0
}

func (n *node) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	v, err := n.fsys.st.GetXattr(n.ino, attr)
	if err != nil {
		return 0, errno(err)
	}
	if len(dest) < len(v) {
		return uint32(len(v)), syscall.ERANGE
	}
	return uint32(copy(dest, v)), 0
}

func (n *node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	if n.fsys.readOnly {
		return syscall.EROFS
	}
	return errno(n.fsys.st.SetXattr(n.ino, attr, data, flags))
}

func (n *node) Removexattr(ctx context.Context, attr string) syscall.Errno {
	if n.fsys.readOnly {
		return syscall.EROFS
	}
	return errno(n.fsys.st.RemoveXattr(n.ino, attr))
}

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	var st syscall.Statfs_t
	if n.fsys.dataDir == "" || syscall.Statfs(n.fsys.dataDir, &st) != nil {
		out.Bsize, out.Frsize, out.NameLen = 4096, 4096, store.NameMax
		return 0
	}
	out.FromStatfsT(&st)
	out.NameLen = store.NameMax
	// What the store keeps free for its own logs is not available to
	// files (store.Reserve): a write, or a reservation, past it is ENOSPC.
	keep := uint64(store.Reserve(int64(st.Blocks)*st.Bsize)) / uint64(max(st.Bsize, 1))
	out.Bavail -= min(out.Bavail, keep)
	out.Bfree -= min(out.Bfree, keep)
	return 0
}

// seen records n's Inode as the kernel's for its inode number: the kernel
// calls only the nodes go-fuse registered (FS.track).
func (n *node) seen() {
	self := n.EmbeddedInode()
	if v, ok := n.fsys.live.Load(n.ino); !ok || v.(*fs.Inode) != self {
		n.fsys.live.Store(n.ino, self)
	}
}

func (n *node) OnForget() {
	n.fsys.live.CompareAndDelete(n.ino, n.EmbeddedInode())
}

func (n *leafNode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	t, err := n.fsys.st.Readlink(n.ino)
	if err != nil {
		return nil, errno(err)
	}
	return []byte(t), 0
}
