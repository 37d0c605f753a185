package fusefs

import (
	"context"
	"sort"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/views"
)

// metaDir is meta/: generated files describing the store.
type metaDir struct{ genDir }

func (m *metaDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if name == "policy.yaml" {
		return m.policyChild(ctx, out), 0
	}
	gen, ok := views.MetaFiles[name]
	if !ok {
		return nil, syscall.ENOENT
	}
	return m.genFileChild(ctx, "/meta/"+name, func(ctx context.Context, may views.May) ([]byte, error) { return gen(m.fsys.eng, may) }, out), 0
}

func (m *metaDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	var list []fuse.DirEntry
	names := append(views.MetaNames(), "policy.yaml")
	sort.Strings(names)
	for _, name := range names {
		list = append(list, fuse.DirEntry{Name: name, Mode: syscall.S_IFREG, Ino: synthIno("/meta/" + name)})
	}
	return fs.NewListDirStream(list), 0
}

// genFile is a generated read-only file. Each open takes a snapshot of the
// content, computed for the caller (reader.go); reads are DIRECT_IO so the
// reported size (0) does not matter.
type genFile struct {
	fs.Inode
	fsys *FS
	gen  func(ctx context.Context, may views.May) ([]byte, error) // given the open's context
	// attr, when set, gives the file its own owner, mode and times.
	attr func(*fuse.Attr)
}

func (g *genFile) fillAttr(ino uint64, out *fuse.Attr) {
	out.Ino = ino
	out.Mode = syscall.S_IFREG | 0o444
	out.Nlink = 1
	out.Uid, out.Gid = uint32(syscall.Getuid()), uint32(syscall.Getgid())
	setGenTimes(out)
	if g.attr != nil {
		g.attr(out)
	}
}

func (g *genFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	g.fillAttr(g.StableAttr().Ino, &out.Attr)
	if h, ok := fh.(*snapshot); ok {
		out.Size = uint64(len(h.data))
	}
	out.SetTimeout(uncached)
	return 0
}

func (g *genFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return nil, 0, syscall.EROFS // generated, as every name in the views
	}
	b, err := g.gen(ctx, g.fsys.reader(ctx))
	if err != nil {
		return nil, 0, errno(err)
	}
	return &snapshot{data: b}, fuse.FOPEN_DIRECT_IO, 0
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
