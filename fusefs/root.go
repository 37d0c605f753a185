package fusefs

import (
	"context"
	"sort"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/views"
)

// rootNode is the root directory: the real root, the guide
// (views.GuideName) and the generated trees.
//
// The generated trees are reached by name but not listed (unless
// Config.ListGenerated), as ZFS's .zfs with snapdir=hidden and NetApp's
// .snapshot are: each shows memories again (by-*/, recent/, search/) or
// files that are no memories (history/, meta/), so a walk of the root
// (grep -r, find, du, tar, rsync, an editor's project search) would meet
// every memory once per view. The guide is listed: an agent's first ls
// finds it, and it names the trees.
type rootNode struct {
	dirNode
}

// recentN is how many memories recent/ shows.
const recentN = 50

// generated lists the generated trees at the root and builds their nodes.
var generated = map[string]func(f *FS) fs.InodeEmbedder{
	"meta":    func(f *FS) fs.InodeEmbedder { return &metaDir{genDir{fsys: f}} },
	"history": func(f *FS) fs.InodeEmbedder { return &historyDir{genDir: genDir{fsys: f}} },
	"by-user": func(f *FS) fs.InodeEmbedder {
		return &valuesDir{genDir: genDir{fsys: f}, field: "user", key: "/by-user"}
	},
	"by-type": func(f *FS) fs.InodeEmbedder {
		return &valuesDir{genDir: genDir{fsys: f}, field: "type", key: "/by-type"}
	},
	"by-tag":  func(f *FS) fs.InodeEmbedder { return &valuesDir{genDir: genDir{fsys: f}, field: "tag", key: "/by-tag"} },
	"by-date": func(f *FS) fs.InodeEmbedder { return &dateDir{genDir: genDir{fsys: f}} },
	"recent": func(f *FS) fs.InodeEmbedder {
		return newViewRoot(f, func() views.Filter {
			only := map[uint64]bool{}
			for _, ino := range f.eng.Recent(recentN, views.Filter{}) {
				only[ino] = true
			}
			return views.Filter{Only: only}
		}, "/recent")
	},
	"search": func(f *FS) fs.InodeEmbedder {
		return &searchDir{genDir: genDir{fsys: f}, scope: fixed(views.Filter{}), key: "/search"}
	},
	"context": func(f *FS) fs.InodeEmbedder {
		return &contextDir{genDir: genDir{fsys: f}, scope: fixed(views.Filter{}), key: "/context"}
	},
}

// ReservedNames are the root names the store must refuse to create.
func ReservedNames() map[string]bool {
	m := map[string]bool{views.GuideName: true}
	for k := range generated {
		m[k] = true
	}
	return m
}

// guideOptions is what the guide says about this mount.
func (f *FS) guideOptions() views.GuideOptions {
	return views.GuideOptions{User: f.st.User(), ReadOnly: f.readOnly, Listed: f.listGenerated}
}

func (r *rootNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if name == views.GuideName {
		return r.fsys.genFileNode(ctx, r.EmbeddedInode(), "/"+name, func(context.Context, views.May) ([]byte, error) {
			return r.fsys.eng.Guide(r.fsys.guideOptions()), nil
		}, nil, out), 0
	}
	if mk, ok := generated[name]; ok {
		ch := r.NewInode(ctx, mk(r.fsys), fs.StableAttr{Mode: syscall.S_IFDIR, Ino: synthIno("/" + name)})
		genDirAttr(ch.StableAttr().Ino, &out.Attr)
		out.SetEntryTimeout(ttl) // the generated trees themselves never change
		out.SetAttrTimeout(ttl)
		return ch, 0
	}
	return r.dirNode.Lookup(ctx, name, out)
}

func (r *rootNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	ents, err := r.fsys.st.ReadDir(r.ino)
	if err != nil {
		return nil, errno(err)
	}
	list := r.dots(len(ents) + len(generated) + 1)
	for _, e := range ents {
		if _, shadowed := generated[e.Name]; shadowed || e.Name == views.GuideName {
			continue // (made before the name was reserved: a lookup finds the generated one)
		}
		list = append(list, fuse.DirEntry{Name: e.Name, Ino: e.Ino, Mode: e.Mode})
	}
	list = append(list, fuse.DirEntry{Name: views.GuideName, Ino: synthIno("/" + views.GuideName), Mode: syscall.S_IFREG})
	if r.fsys.listGenerated {
		for name := range generated {
			list = append(list, fuse.DirEntry{Name: name, Ino: synthIno("/" + name), Mode: syscall.S_IFDIR})
		}
	}
	sort.Slice(list, func(a, b int) bool { return list[a].Name < list[b].Name })
	return rewindable(fs.NewListDirStream(list), r.Readdir), 0
}

func (r *rootNode) Unlink(ctx context.Context, name string) syscall.Errno {
	if _, ok := generated[name]; ok {
		return syscall.EISDIR
	}
	if name == views.GuideName {
		return syscall.EROFS
	}
	return r.dirNode.Unlink(ctx, name)
}

func (r *rootNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	if _, ok := generated[name]; ok {
		return syscall.EROFS
	}
	return r.dirNode.Rmdir(ctx, name)
}

func (r *rootNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if _, ok := generated[name]; ok || name == views.GuideName {
		return syscall.EROFS
	}
	return r.dirNode.Rename(ctx, name, newParent, newName, flags)
}

// genDirAttr fills the attributes of a generated directory.
func genDirAttr(ino uint64, out *fuse.Attr) {
	out.Ino = ino
	out.Mode = syscall.S_IFDIR | 0o555
	out.Nlink = 2
	out.Uid, out.Gid = uint32(syscall.Getuid()), uint32(syscall.Getgid())
	setGenTimes(out)
}

// started is when this process started: the times of generated nodes.
var started = time.Now()

func setGenTimes(out *fuse.Attr) {
	t := uint64(started.Unix())
	out.Atime, out.Mtime, out.Ctime = t, t, t
}
