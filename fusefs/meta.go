package fusefs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/views"
)

// metaDir is meta/: generated files describing the store.
type metaDir struct {
	fs.Inode
	fsys *FS
}

func (m *metaDir) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	genDirAttr(m.StableAttr().Ino, &out.Attr)
	return 0
}

func (m *metaDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	gen, ok := views.MetaFiles[name]
	if !ok {
		return nil, syscall.ENOENT
	}
	g := &genFile{fsys: m.fsys, gen: func() ([]byte, error) { return gen(m.fsys.st) }}
	ch := m.NewInode(ctx, g, fs.StableAttr{Mode: syscall.S_IFREG, Ino: synthIno("/meta/" + name)})
	g.fillAttr(ch.StableAttr().Ino, &out.Attr)
	out.SetEntryTimeout(0)
	out.SetAttrTimeout(0)
	return ch, 0
}

func (m *metaDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	var list []fuse.DirEntry
	for _, name := range views.MetaNames() {
		list = append(list, fuse.DirEntry{Name: name, Mode: syscall.S_IFREG, Ino: synthIno("/meta/" + name)})
	}
	return fs.NewListDirStream(list), 0
}

// Names inside generated directories cannot be made or removed.
func (m *metaDir) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}
func (m *metaDir) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (m *metaDir) Unlink(ctx context.Context, name string) syscall.Errno { return syscall.EROFS }
func (m *metaDir) Rmdir(ctx context.Context, name string) syscall.Errno  { return syscall.EROFS }
func (m *metaDir) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	return syscall.EROFS
}

// genFile is a generated read-only file. Each open takes a snapshot of the
// content; reads are DIRECT_IO so the reported size (0) does not matter.
type genFile struct {
	fs.Inode
	fsys *FS
	gen  func() ([]byte, error)
}

func (g *genFile) fillAttr(ino uint64, out *fuse.Attr) {
	out.Ino = ino
	out.Mode = syscall.S_IFREG | 0o444
	out.Nlink = 1
	out.Uid, out.Gid = uint32(syscall.Getuid()), uint32(syscall.Getgid())
	setGenTimes(out)
}

func (g *genFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	g.fillAttr(g.StableAttr().Ino, &out.Attr)
	if h, ok := fh.(*snapshot); ok {
		out.Size = uint64(len(h.data))
	}
	out.SetTimeout(0)
	return 0
}

func (g *genFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		return nil, 0, syscall.EACCES
	}
	b, err := g.gen()
	if err != nil {
		return nil, 0, errno(err)
	}
	return &snapshot{data: b}, fuse.FOPEN_DIRECT_IO, 0
}

func (g *genFile) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EACCES
}

// snapshot is an open generated file: its bytes as of open.
type snapshot struct{ data []byte }

func (s *snapshot) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= int64(len(s.data)) {
		return fuse.ReadResultData(nil), 0
	}
	end := min(int64(len(s.data)), off+int64(len(dest)))
	return fuse.ReadResultData(s.data[off:end]), 0
}
