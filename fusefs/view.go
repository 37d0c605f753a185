package fusefs

import (
	"context"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// scopeFn computes the filter of a view when asked (recent/ changes).
type scopeFn func() views.Filter

func fixed(f views.Filter) scopeFn { return func() views.Filter { return f } }

// valuesDir is by-user/, by-type/ or by-tag/: one view per value.
type valuesDir struct {
	genDir
	field string // "user", "type", "tag"
	key   string
}

func (v *valuesDir) filter(val string) views.Filter {
	switch v.field {
	case "user":
		return views.Filter{Users: []string{val}}
	case "type":
		return views.Filter{Types: []string{val}}
	}
	return views.Filter{Tags: []string{val}}
}

func (v *valuesDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if !v.fsys.hasValue(ctx, v.field, name) {
		return nil, syscall.ENOENT
	}
	key := v.key + "/" + name
	return v.childTTL(ctx, key, newViewRoot(v.fsys, fixed(v.filter(name)), key), out, v.fsys.viewTTL()), 0
}

func (v *valuesDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	vals := v.fsys.values(ctx, v.field)
	list := make([]fuse.DirEntry, 0, len(vals))
	for i, val := range vals {
		if i%4096 == 0 && ctx.Err() != nil {
			return nil, syscall.EINTR
		}
		list = append(list, dirEntry(val, v.key+"/"+val))
	}
	return rewindable(fs.NewListDirStream(list), v.Readdir), 0
}

// dateDir is a level of by-date/: years, months, days, then a view.
type dateDir struct {
	genDir
	prefix string // "", "2024", "2024/05"
}

func (d *dateDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if name == "search" && d.prefix != "" {
		// A year's or a month's memories, searched (a day is a view,
		// which holds its own search/).
		key := "/by-date/" + d.prefix + "/search"
		return d.child(ctx, key, &searchDir{genDir: genDir{fsys: d.fsys}, scope: fixed(views.Filter{Date: d.prefix}), key: key}, out), 0
	}
	p := strings.TrimPrefix(d.prefix+"/"+name, "/")
	if !d.fsys.hasDate(ctx, d.prefix, name) { // names never hold a "/": p is one level down
		return nil, syscall.ENOENT
	}
	key := "/by-date/" + p
	if strings.Count(p, "/") == 2 {
		return d.childTTL(ctx, key, newViewRoot(d.fsys, fixed(views.Filter{Date: p}), key), out, d.fsys.viewTTL()), 0
	}
	return d.childTTL(ctx, key, &dateDir{genDir: genDir{fsys: d.fsys}, prefix: p}, out, d.fsys.viewTTL()), 0
}

func (d *dateDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	names := d.fsys.dateNames(ctx, d.prefix)
	list := make([]fuse.DirEntry, 0, len(names))
	for _, n := range names {
		list = append(list, dirEntry(n, "/by-date/"+strings.TrimPrefix(d.prefix+"/"+n, "/")))
	}
	if d.prefix != "" && len(names) > 0 && d.fsys.listGenerated {
		list = append(list, dirEntry("search", "/by-date/"+d.prefix+"/search"))
	}
	return rewindable(fs.NewListDirStream(list), d.Readdir), 0
}

// viewDir mirrors the real directory real, showing only the memories the
// scope matches and the directories that lead to them. Files are the real
// nodes (same inode, same bytes); directories are generated.
type viewDir struct {
	genDir
	scope scopeFn
	real  uint64
	key   string
	view  string // the key of the view's top
	root  bool   // the top of a view also holds search/
}

func newViewRoot(f *FS, scope scopeFn, key string) *viewDir {
	return &viewDir{genDir: genDir{fsys: f}, scope: scope, real: store.RootIno, key: key, view: key, root: true}
}

func (v *viewDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if v.root && name == "search" {
		return v.child(ctx, v.key+"/search", &searchDir{genDir: genDir{fsys: v.fsys}, scope: v.scope, key: v.key + "/search"}, out), 0
	}
	i, err := v.fsys.st.Lookup(v.real, name)
	if err != nil {
		return nil, errno(err)
	}
	v.fsys.eng.Ready()
	f := v.scope().And(views.Filter{May: v.fsys.reader(ctx)})
	switch {
	case i.IsDir():
		dirs, err := v.fsys.dirsWith(ctx, v.view, v.scope())
		if err != nil {
			return nil, errno(err)
		}
		if dirs[i.Ino] {
			key := v.key + "/" + name
			return v.childTTL(ctx, key, &viewDir{genDir: genDir{fsys: v.fsys, mirror: i.Ino}, scope: v.scope, real: i.Ino, key: key, view: v.view}, out, v.ttl()), 0
		}
	case i.IsReg() && v.fsys.eng.MatchIno(i.Ino, f):
		ch := v.fsys.newNode(ctx, v.EmbeddedInode(), &i, out)
		if d := v.ttl(); d > 0 {
			out.SetEntryTimeout(d)
			v.fsys.viewLinks.add(i.Ino, v.EmbeddedInode(), name) // invalidated when it changes
		} else {
			out.SetEntryTimeout(uncached) // the memory may leave the view
		}
		return ch, 0
	}
	return nil, syscall.ENOENT
}

func (v *viewDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	ents, err := v.fsys.st.ReadDir(v.real)
	if err != nil {
		return nil, errno(err)
	}
	v.fsys.eng.Ready()
	f := v.scope().And(views.Filter{May: v.fsys.reader(ctx)})
	dirs, err := v.fsys.dirsWith(ctx, v.view, v.scope())
	if err != nil {
		return nil, errno(err)
	}
	list := make([]fuse.DirEntry, 0, len(ents)+1)
	for n, e := range ents {
		if n%1024 == 0 && ctx.Err() != nil {
			return nil, syscall.EINTR
		}
		switch e.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			if dirs[e.Ino] {
				list = append(list, dirEntry(e.Name, v.key+"/"+e.Name))
			}
		case syscall.S_IFREG:
			if v.fsys.eng.MatchIno(e.Ino, f) {
				list = append(list, fuse.DirEntry{Name: e.Name, Ino: e.Ino, Mode: e.Mode})
			}
		}
	}
	if v.root && v.fsys.listGenerated {
		// (Else reached by name only, as at the root: a walk of a view
		// meets each of its memories once.)
		list = append(list, dirEntry("search", v.key+"/search"))
		sort.Slice(list, func(a, b int) bool { return list[a].Name < list[b].Name })
	}
	return rewindable(fs.NewListDirStream(list), v.Readdir), 0
}

// ttl is how long the kernel may cache this view's entries: as long as the
// tree's, but for recent/ (whose members change when others are written)
// and under --allow-other (whose listings differ per reader).
func (v *viewDir) ttl() time.Duration {
	if v.view == "/recent" {
		return uncached
	}
	return v.fsys.viewTTL()
}
