package fusefs

import (
	"context"
	"errors"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/store"
)

// File handles (name_to_handle_at, open_by_handle_at, NFS re-export).
// The kernel encodes a FUSE file handle as the node id (and generation)
// of the inode. The mount makes the node id of a real node its store
// inode number (Options.ExternalNodeID): permanent and never reused, so
// a handle stays valid across remounts for as long as the node exists.
// When the kernel no longer knows the inode, it asks for it with a
// LOOKUP of "." in that node id (FUSE_EXPORT_SUPPORT: LookupNode), and
// for a directory's parent with a LOOKUP of ".." (LookupParent), then
// finds the directory's name in the parent's listing. Generated nodes
// have no handle that outlives the kernel's inode: their numbers are
// hashes of paths, which no lookup by number can reverse.

// LookupNode finds a real node by its inode number alone: one that is
// still linked somewhere and that the mount's user may see.
func (r *rootNode) LookupNode(ctx context.Context, id uint64, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if id&(1<<63) != 0 {
		return nil, syscall.ESTALE // generated
	}
	i, err := r.fsys.st.Attr(id)
	if errors.Is(err, syscall.ENOENT) || err == nil && (len(i.Links) == 0 || !r.fsys.st.Visible(id)) {
		// Gone (an unlinked file's handle is stale once the kernel
		// forgets it, as on a disk), or hidden from this mount's user.
		return nil, syscall.ESTALE
	}
	if err != nil {
		return nil, errno(err)
	}
	return r.fsys.newNode(ctx, r.EmbeddedInode(), &i, out), 0
}

// LookupParent finds the directory holding d, by d's link.
func (d *dirNode) LookupParent(ctx context.Context, out *fuse.EntryOut) (*fs.Inode, string, syscall.Errno) {
	i, err := d.fsys.st.Attr(d.ino)
	if err != nil {
		return nil, "", errno(err)
	}
	if len(i.Links) == 0 {
		return nil, "", syscall.ESTALE // removed
	}
	l := i.Links[0]
	p, err := d.fsys.st.Attr(l.Parent)
	if err != nil {
		return nil, "", errno(err)
	}
	if l.Parent == store.RootIno {
		d.fsys.attr(&p, &out.Attr)
		out.SetEntryTimeout(ttl)
		out.SetAttrTimeout(ttl)
		return d.Root(), l.Name, 0
	}
	return d.fsys.newNode(ctx, d.EmbeddedInode(), &p, out), l.Name, 0
}
