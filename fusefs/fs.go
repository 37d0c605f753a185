package fusefs

import (
	"context"
	"errors"
	"hash/fnv"
	"log"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// FS is the state shared by every node of one mount.
type FS struct {
	st       *store.Store
	dataDir  string
	readOnly bool
	// listGenerated: the generated trees are listed (Config.ListGenerated).
	listGenerated bool
	eng           *views.Engine
	// allowOther: other local users reach the mount; ownerUid is the
	// mount's owner (reader.go).
	allowOther bool
	ownerUid   uint32
	// rcache holds restricted readers' listings (reader.go).
	rcache readerCache
	// viewLinks: the view entries the kernel caches, per memory
	// (viewreader.go).
	viewLinks viewLinks

	// live maps a store inode number to the kernel-visible inode, for
	// notifications. Entries are added when a node is handed to the kernel
	// and removed when the kernel forgets it.
	live sync.Map // uint64 -> *fs.Inode

	notify *Notifier
	log    *log.Logger
	// prune bounds the nodes the kernel keeps (prune.go).
	prune *pruner
	// generated counts the contents of generated files computed
	// (genfile.go): tests check that a listing computes none.
	generated atomic.Uint64
}

// logf reports something the kernel's errno cannot say (why a write was
// refused).
func (f *FS) logf(format string, a ...any) {
	if f.log != nil {
		f.log.Printf(format, a...)
	} else {
		log.Printf("mnemofs: "+format, a...)
	}
}

// synthIno returns a stable inode number for a generated node, keyed by
// its path; the top bit keeps it apart from store inode numbers.
func synthIno(key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64() | 1<<63
}

// fillAttr copies store attributes into a kernel attribute.
func fillAttr(i *store.Inode, out *fuse.Attr) {
	out.Ino = i.Ino
	out.Mode = i.Mode
	out.Size = i.Size
	out.Blocks = (i.Size + 511) / 512
	out.Blksize = 4096
	out.Nlink = i.Nlink()
	out.Owner = fuse.Owner{Uid: i.Uid, Gid: i.Gid}
	out.Rdev = i.Rdev
	setTime := func(ns int64, sec *uint64, nsec *uint32) {
		s, n := ns/1e9, ns%1e9
		if n < 0 { // before 1970: floor, so that nsec stays in [0, 1e9)
			s, n = s-1, n+1e9
		}
		*sec, *nsec = uint64(s), uint32(n)
	}
	setTime(i.Atime, &out.Atime, &out.Atimensec)
	setTime(i.Mtime, &out.Mtime, &out.Mtimensec)
	setTime(i.Ctime, &out.Ctime, &out.Ctimensec)
}

// attr fills out with i's attributes as this mount shows them: in a
// --user mount a memory the user may read but not change (a public one, a
// log shared with others) shows no write bits, so that editors open it
// read-only instead of failing at the save.
func (f *FS) attr(i *store.Inode, out *fuse.Attr) {
	fillAttr(i, out)
	if f.st.User() != "" && i.IsReg() && errors.Is(f.st.MayChange(i.Ino), syscall.EACCES) {
		out.Mode &^= 0o222
	}
}

// newNode returns the kernel inode for a store inode, creating the node of
// the matching kind. Lookup, Readdir and every create use it, so they agree
// on identity.
func (f *FS) newNode(ctx context.Context, parent *fs.Inode, i *store.Inode, out *fuse.EntryOut) *fs.Inode {
	f.attr(i, &out.Attr)
	out.SetEntryTimeout(ttl)
	out.SetAttrTimeout(ttl)
	var ops fs.InodeEmbedder
	switch i.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		ops = &dirNode{node: node{fsys: f, ino: i.Ino}}
	case syscall.S_IFREG:
		ops = &fileNode{node: node{fsys: f, ino: i.Ino}}
	default:
		ops = &leafNode{node: node{fsys: f, ino: i.Ino}}
	}
	child := parent.NewInode(ctx, ops, fs.StableAttr{Mode: i.Mode & syscall.S_IFMT, Ino: i.Ino})
	f.track(i.Ino, child)
	f.prune.add(child)
	return child
}

// track records n as the kernel's inode for ino, unless one is recorded.
// A lookup of a node the kernel already knows (READDIRPLUS after a create,
// a second path to it) builds a new Inode that go-fuse then drops for the
// one it registered; recording that one would send every later
// notification for ino nowhere, and the kernel would keep stale pages and
// names. The recorded node leaves when the kernel forgets it (OnForget),
// and a handler the kernel calls records its own node (node.seen), which
// also mends the one race left: two first lookups at once.
func (f *FS) track(ino uint64, n *fs.Inode) {
	f.live.LoadOrStore(ino, n)
}

// owner is the caller of a request.
func owner(ctx context.Context) store.Owner {
	if c, ok := fuse.FromContext(ctx); ok {
		return store.Owner{Uid: c.Uid, Gid: c.Gid}
	}
	return store.Owner{Uid: uint32(syscall.Getuid()), Gid: uint32(syscall.Getgid())}
}

// Kernel cache timeouts. The mount sets no default (go-fuse would put its
// default over every zero), so each reply states its own: real nodes are
// cached for ttl (every change to them passes through this mount or is
// announced), generated ones are not cached at all.
const (
	ttl      = time.Second
	uncached = time.Duration(0)
)
