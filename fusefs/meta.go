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
	return rewindable(fs.NewListDirStream(list), m.Readdir), 0
}
