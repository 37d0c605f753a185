package fusefs

import (
	"context"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/store"
)

// statx: what stat gives, plus the birth time (STATX_BTIME): a memory's
// created time, user.mnemofs.created.

func (n *node) Statx(ctx context.Context, fh fs.FileHandle, flags uint32, mask uint32, out *fuse.StatxOut) syscall.Errno {
	defer observe(latGetattr, time.Now())
	i, err := n.fsys.st.Attr(n.ino)
	if err != nil {
		return errno(err)
	}
	var a fuse.Attr
	n.fsys.attr(&i, &a)
	fillStatx(&a, n.fsys.st.Birth(&i), &out.Statx)
	out.SetTimeout(ttl)
	return 0
}

// Statx of a removed directory answers with its last attributes.
func (d *dirNode) Statx(ctx context.Context, fh fs.FileHandle, flags uint32, mask uint32, out *fuse.StatxOut) syscall.Errno {
	if g := d.gone.Load(); g != nil {
		var a fuse.Attr
		fillAttr(g, &a)
		a.Nlink = 0
		fillStatx(&a, g.Btime, &out.Statx)
		out.SetTimeout(0)
		return 0
	}
	return d.node.Statx(ctx, fh, flags, mask, out)
}

// fillStatx copies a, and btime (unix ns), into out.
func fillStatx(a *fuse.Attr, btime int64, out *fuse.Statx) {
	out.Mask = unix.STATX_BASIC_STATS | unix.STATX_BTIME
	out.Blksize, out.Nlink = a.Blksize, a.Nlink
	out.Uid, out.Gid, out.Mode = a.Uid, a.Gid, uint16(a.Mode)
	out.Ino, out.Size, out.Blocks = a.Ino, a.Size, a.Blocks
	out.Atime = fuse.SxTime{Sec: a.Atime, Nsec: a.Atimensec}
	out.Mtime = fuse.SxTime{Sec: a.Mtime, Nsec: a.Mtimensec}
	out.Ctime = fuse.SxTime{Sec: a.Ctime, Nsec: a.Ctimensec}
	var b fuse.Attr
	fillAttr(&store.Inode{Mtime: btime}, &b) // the same rounding of times before 1970
	out.Btime = fuse.SxTime{Sec: b.Mtime, Nsec: b.Mtimensec}
	out.RdevMajor, out.RdevMinor = unix.Major(uint64(a.Rdev)), unix.Minor(uint64(a.Rdev))
}
