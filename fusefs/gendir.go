package fusefs

import (
	"context"
	"path"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/views"
)

// genDir is what every generated directory has: synthetic attributes and
// EROFS for every change of names (go-fuse's defaults would let Unlink and
// Rmdir succeed silently).
type genDir struct {
	fs.Inode
	fsys *FS
	// mirror, when set, is the real node whose owner and read and search
	// bits the directory shows (the kernel then checks them for other
	// users, as on the real path): a real directory, or for mirrorFile a
	// file (whose read bits become read and search).
	mirror     uint64
	mirrorFile bool
	// mirrorPath, when set, names the mirrored node by its store path
	// (history/: the file at a path may be replaced by a save).
	mirrorPath string
}

func (g *genDir) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	genDirAttr(g.StableAttr().Ino, &out.Attr)
	g.mirrorAttr(&out.Attr)
	return 0
}

func (g *genDir) genDir() *genDir { return g }

// mirrorAttr puts the owner and modes of g.mirror on a's.
func (g *genDir) mirrorAttr(a *fuse.Attr) {
	ino := g.mirror
	if g.mirrorPath != "" {
		ino, _ = g.fsys.st.Resolve(g.mirrorPath)
	}
	if ino == 0 {
		return
	}
	i, err := g.fsys.st.Attr(ino)
	if err != nil {
		return
	}
	m := i.Mode & 0o555
	if g.mirrorFile {
		m = i.Mode & 0o444
		m |= m >> 2 // read: read and search
	}
	a.Mode = syscall.S_IFDIR | m
	a.Uid, a.Gid = i.Uid, i.Gid
}

func (g *genDir) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}
func (g *genDir) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (g *genDir) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (g *genDir) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (g *genDir) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (g *genDir) Unlink(ctx context.Context, name string) syscall.Errno { return syscall.EROFS }
func (g *genDir) Rmdir(ctx context.Context, name string) syscall.Errno  { return syscall.EROFS }
func (g *genDir) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	return syscall.EROFS
}

// child returns a generated directory node named name below g, whose
// inode number derives from key (its path in the mount).
func (g *genDir) child(ctx context.Context, key string, ops fs.InodeEmbedder, out *fuse.EntryOut) *fs.Inode {
	// Searches and history gain and lose names as memories change: never
	// cache them.
	return g.childTTL(ctx, key, ops, out, uncached)
}

// childTTL is child with the kernel caching the entry and its attributes
// for d (views: FS.viewTTL).
func (g *genDir) childTTL(ctx context.Context, key string, ops fs.InodeEmbedder, out *fuse.EntryOut, d time.Duration) *fs.Inode {
	ino := synthIno(key)
	genDirAttr(ino, &out.Attr)
	if d, ok := ops.(interface{ genDir() *genDir }); ok {
		d.genDir().mirrorAttr(&out.Attr)
	}
	out.SetEntryTimeout(d)
	out.SetAttrTimeout(d)
	if d > 0 {
		// Any change of a memory may empty it: dropped then (viewLinks).
		g.fsys.viewLinks.add(anyMemory, g.EmbeddedInode(), path.Base(key))
	}
	ch := g.NewInode(ctx, ops, fs.StableAttr{Mode: syscall.S_IFDIR, Ino: ino})
	g.fsys.prune.add(ch)
	return ch
}

// genFileChild returns a generated file below g.
func (g *genDir) genFileChild(ctx context.Context, key string, gen func(context.Context, views.May) ([]byte, error), out *fuse.EntryOut) *fs.Inode {
	return g.genFileAttrChild(ctx, key, gen, nil, out)
}

// genFileAttrChild is genFileChild for a file whose owner, mode and times
// attr sets.
func (g *genDir) genFileAttrChild(ctx context.Context, key string, gen func(context.Context, views.May) ([]byte, error), attr func(*fuse.Attr), out *fuse.EntryOut) *fs.Inode {
	return g.fsys.genFileNode(ctx, g.EmbeddedInode(), key, gen, attr, out)
}

// genFileNode returns a generated file below parent (a generated
// directory, or the root for the guide).
func (f *FS) genFileNode(ctx context.Context, parent *fs.Inode, key string, gen func(context.Context, views.May) ([]byte, error), attr func(*fuse.Attr), out *fuse.EntryOut) *fs.Inode {
	ino := synthIno(key)
	ch := parent.NewInode(ctx, &genFile{fsys: f, gen: gen, attr: attr}, fs.StableAttr{Mode: syscall.S_IFREG, Ino: ino})
	f.prune.add(ch)
	// The live node (go-fuse keeps the one the kernel knows) fills the
	// reply: its content snapshot then answers the open that follows.
	ch.Operations().(*genFile).fill(ctx, ino, &out.Attr)
	out.SetEntryTimeout(uncached)
	out.SetAttrTimeout(uncached)
	return ch
}

func dirEntry(name, key string) fuse.DirEntry {
	return fuse.DirEntry{Name: name, Mode: syscall.S_IFDIR, Ino: synthIno(key)}
}
