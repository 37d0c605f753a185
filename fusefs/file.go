package fusefs

import (
	"context"
	"os"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/store"
)

// fileNode is a real regular file (a memory).
type fileNode struct{ node }

// fileHandle is one open of a fileNode. Content state is shared per inode
// in the store, so handles hold no data of their own.
type fileHandle struct {
	n      *fileNode
	append bool // O_APPEND: every write goes to the current end
	// pt is the content file the kernel may read and write itself (FUSE
	// passthrough, store/passthrough.go), or nil; ptWriter: this handle
	// may write anywhere in it.
	pt       *os.File
	ptWriter bool
	writers  writers // the processes that opened it to write or wrote (flush.go)
}

var _ fs.FilePassthroughFder = (*fileHandle)(nil)

// PassthroughFd hands the kernel the content file of a passthrough
// session. go-fuse asks only when the inode has no backing file yet;
// later opens share the one it has, as the store's session is shared.
func (h *fileHandle) PassthroughFd() (int, bool) {
	if h.pt == nil {
		return 0, false
	}
	return int(h.pt.Fd()), true
}

func (f *fileNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	defer observe(latOpen, time.Now())
	if f.fsys.readOnly && flags&(syscall.O_WRONLY|syscall.O_RDWR|syscall.O_TRUNC) != 0 {
		return nil, 0, syscall.EROFS
	}
	kind := store.PTNone
	switch {
	case flags&syscall.O_APPEND != 0:
		kind = store.PTAppend
	case flags&syscall.O_ACCMODE == syscall.O_RDONLY:
		kind = store.PTRead
	}
	return f.open(ctx, flags, kind)
}

func (f *fileNode) open(ctx context.Context, flags uint32, kind store.PTKind) (fs.FileHandle, uint32, syscall.Errno) {
	f.seen()
	acc := flags & syscall.O_ACCMODE
	if acc != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0 {
		// chattr +i, or +a and not O_APPEND: refused as on a disk.
		if err := f.fsys.st.MayOpen(f.ino, flags&syscall.O_APPEND != 0 && flags&syscall.O_TRUNC == 0); err != nil {
			return nil, 0, errno(err)
		}
	}
	if err := f.fsys.st.Open(f.ino, acc != syscall.O_WRONLY); err != nil {
		return nil, 0, errno(err)
	}
	h := &fileHandle{n: f, append: flags&syscall.O_APPEND != 0}
	writes := acc != syscall.O_RDONLY
	h.pt = f.fsys.st.Passthrough(f.ino, kind, writes, h.append)
	h.ptWriter = h.pt != nil && writes && !h.append
	if writes {
		h.wrote(ctx) // the opener may flush what it opened for (flush.go)
	}
	// Every change goes through this mount or is announced with
	// NotifyContent, so the page cache stays valid across opens; while
	// such an announcement is still queued (the end of a passthrough
	// session, whose writes bypassed the cache), the kernel drops the
	// cache at open instead. (go-fuse drops KEEP_CACHE when the kernel
	// uses a backing file.)
	if f.fsys.notify.ContentPending(f.ino) {
		return h, 0, 0
	}
	return h, fuse.FOPEN_KEEP_CACHE, 0
}

func (h *fileHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	defer observe(latRead, time.Now())
	n, err := h.n.fsys.st.ReadAt(h.n.ino, dest, off)
	if err != nil {
		return nil, errno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (h *fileHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	defer observe(latWrite, time.Now())
	var n int
	var err error
	if h.append {
		n, err = h.n.fsys.st.Append(h.n.ino, data)
	} else {
		n, err = h.n.fsys.st.WriteAt(h.n.ino, data, off)
	}
	if err != nil {
		return 0, errno(err)
	}
	h.wrote(ctx)
	return uint32(n), 0
}

func (h *fileHandle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	defer observe(latFsync, time.Now())
	return errno(h.n.fsys.st.Fsync(h.n.ino))
}

func (h *fileHandle) Release(ctx context.Context) syscall.Errno {
	defer observe(latRelease, time.Now())
	if h.ptWriter {
		h.n.fsys.st.PassthroughClosed(h.n.ino)
	}
	return errno(h.n.fsys.st.Release(h.n.ino))
}

func (h *fileHandle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return h.n.Getattr(ctx, h, out)
}

func (h *fileHandle) Allocate(ctx context.Context, off uint64, size uint64, mode uint32) syscall.Errno {
	if h.n.fsys.readOnly {
		return syscall.EROFS
	}
	return errno(h.n.fsys.st.Allocate(h.n.ino, off, size, mode))
}

func (h *fileHandle) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	const seekData, seekHole = 3, 4
	if whence != seekData && whence != seekHole {
		return 0, syscall.EINVAL // the kernel answers the others itself
	}
	r, err := h.n.fsys.st.SeekData(h.n.ino, off, whence == seekHole)
	return r, errno(err)
}
