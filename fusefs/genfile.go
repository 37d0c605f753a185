package fusefs

import (
	"bytes"
	"context"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/views"
)

// genFile is a generated read-only file (meta/*, .results, context/<q>,
// a history version). Its content is computed for the caller (reader.go)
// and kept per caller for snapTTL while the catalog does not change, so
// that the size a lookup or stat
// reports is the size the open that follows reads (tar, cp and rsync read
// exactly what stat said), and its mtime is when that content last
// changed as far as this mount saw. Reads are DIRECT_IO from the snapshot
// taken at open.
type genFile struct {
	fs.Inode
	fsys *FS
	gen  func(ctx context.Context, may views.May) ([]byte, error) // given the request's context
	// attr, when set, gives the file its own owner, mode, size and times
	// (a history version: its content need not be computed for a stat).
	attr func(*fuse.Attr)

	mu    sync.Mutex
	snaps map[string]*genSnap // by reader key ("" unrestricted)
}

// genSnap is the content of a generated file for one reader.
type genSnap struct {
	data    []byte
	gen     uint64    // the catalog's generation it was computed at
	at      time.Time // when computed
	changed time.Time // when it last differed from the one before
}

// snapTTL is how long a computed content answers stats and opens.
const snapTTL = time.Second

// content returns the file's current content for the caller.
func (g *genFile) content(ctx context.Context) (*genSnap, error) {
	key, may := g.fsys.readerOf(ctx)
	gen := g.fsys.eng.Gen() // waits for the changes queued before: a file closed is in it
	g.mu.Lock()
	old := g.snaps[key]
	g.mu.Unlock()
	if old != nil && old.gen == gen && time.Since(old.at) < snapTTL {
		return old, nil
	}
	g.fsys.generated.Add(1)
	b, err := g.gen(ctx, may)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	s := &genSnap{data: b, gen: gen, at: now, changed: now}
	if old != nil && bytes.Equal(old.data, b) {
		s.changed = old.changed
	}
	g.mu.Lock()
	if g.snaps == nil || len(g.snaps) > 64 {
		g.snaps = map[string]*genSnap{}
	}
	g.snaps[key] = s
	g.mu.Unlock()
	return s, nil
}

// fill sets the attributes for the caller; a file without its own attr
// has its content computed for the size.
func (g *genFile) fill(ctx context.Context, ino uint64, out *fuse.Attr) syscall.Errno {
	out.Ino = ino
	out.Mode = syscall.S_IFREG | 0o444
	out.Nlink = 1
	out.Uid, out.Gid = uint32(syscall.Getuid()), uint32(syscall.Getgid())
	setGenTimes(out)
	if g.attr != nil {
		g.attr(out)
		return 0
	}
	s, err := g.content(ctx)
	if err != nil {
		return errno(err)
	}
	out.Size, out.Blocks, out.Blksize = uint64(len(s.data)), (uint64(len(s.data))+511)/512, 4096 // (go-fuse rounds Blocks up to pages without Blksize)
	t := uint64(s.changed.Unix())
	out.Mtime, out.Mtimensec = t, uint32(s.changed.Nanosecond())
	out.Ctime, out.Ctimensec = out.Mtime, out.Mtimensec
	return 0
}

func (g *genFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.SetTimeout(uncached)
	if h, ok := fh.(*snapshot); ok {
		g.fill(ctx, g.StableAttr().Ino, &out.Attr)
		out.Size = uint64(len(h.data)) // what this handle reads
		return 0
	}
	return g.fill(ctx, g.StableAttr().Ino, &out.Attr)
}

func (g *genFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return nil, 0, syscall.EROFS // generated, as every name in the views
	}
	if g.attr != nil {
		// A history version: immutable, computed at open.
		b, err := g.gen(ctx, g.fsys.reader(ctx))
		if err != nil {
			return nil, 0, errno(err)
		}
		return &snapshot{data: b}, fuse.FOPEN_DIRECT_IO, 0
	}
	s, err := g.content(ctx)
	if err != nil {
		return nil, 0, errno(err)
	}
	return &snapshot{data: s.data}, fuse.FOPEN_DIRECT_IO, 0
}

func (g *genFile) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

// snapshot is an open generated file: its bytes as of open.
type snapshot struct{ data []byte }

func (s *snapshot) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return fuse.ReadResultData(bytesAt(s.data, dest, off)), 0
}

// bytesAt is what a read of len(dest) bytes at off gets from data.
func bytesAt(data, dest []byte, off int64) []byte {
	if off >= int64(len(data)) {
		return nil
	}
	return data[off:min(int64(len(data)), off+int64(len(dest)))]
}
