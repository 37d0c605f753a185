package fusefs

import (
	"context"
	"sort"
	"strings"
	"syscall"

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
	return v.child(ctx, key, newViewRoot(v.fsys, fixed(v.filter(name)), key), out), 0
}

func (v *valuesDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	var list []fuse.DirEntry
	for _, val := range v.fsys.values(ctx, v.field) {
		list = append(list, dirEntry(val, v.key+"/"+val))
	}
	return fs.NewListDirStream(list), 0
}

// values lists the distinct values of field among the memories the caller
// may see, sorted.
func (f *FS) values(ctx context.Context, field string) []string {
	return f.eng.Values(field, views.Filter{May: f.reader(ctx)})
}

// hasValue reports whether some memory the caller may see has value v of
// field (a restricted reader's set is kept for a moment: readerCache).
func (f *FS) hasValue(ctx context.Context, field, v string) bool {
	if k, may := f.readerOf(ctx); may != nil {
		set := f.rcache.get(k+"\x00"+field, f.eng.Gen(), func() any {
			return valueSet(f.eng.Values(field, views.Filter{May: may}))
		}).(map[string]bool)
		return set[v]
	}
	return contains(f.eng.Values(field, views.Filter{}), v)
}

// dirsWith is eng.DirsWith(f) for the caller: a restricted reader's set is
// kept for a moment under the view's key.
func (fs *FS) dirsWith(ctx context.Context, viewKey string, f views.Filter) map[uint64]bool {
	k, may := fs.readerOf(ctx)
	if may == nil {
		return fs.eng.DirsWith(f)
	}
	f = f.And(views.Filter{May: may})
	return fs.rcache.get(k+"\x00dirs\x00"+viewKey, fs.eng.Gen(), func() any { return fs.eng.DirsWith(f) }).(map[uint64]bool)
}

// dateDir is a level of by-date/: years, months, days, then a view.
type dateDir struct {
	genDir
	prefix string // "", "2024", "2024/05"
}

func (d *dateDir) names(ctx context.Context) []string {
	seen := map[string]bool{}
	var out []string
	for _, day := range d.fsys.values(ctx, "date") {
		if d.prefix != "" && !strings.HasPrefix(day, d.prefix+"/") {
			continue
		}
		rest := strings.TrimPrefix(strings.TrimPrefix(day, d.prefix), "/")
		part, _, _ := strings.Cut(rest, "/")
		if !seen[part] {
			seen[part] = true
			out = append(out, part)
		}
	}
	return out
}

func (d *dateDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if !contains(d.names(ctx), name) {
		return nil, syscall.ENOENT
	}
	p := strings.TrimPrefix(d.prefix+"/"+name, "/")
	key := "/by-date/" + p
	if strings.Count(p, "/") == 2 {
		return d.child(ctx, key, newViewRoot(d.fsys, fixed(views.Filter{Date: p}), key), out), 0
	}
	return d.child(ctx, key, &dateDir{genDir: genDir{fsys: d.fsys}, prefix: p}, out), 0
}

func (d *dateDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	var list []fuse.DirEntry
	for _, n := range d.names(ctx) {
		list = append(list, dirEntry(n, "/by-date/"+strings.TrimPrefix(d.prefix+"/"+n, "/")))
	}
	return fs.NewListDirStream(list), 0
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
	case i.IsDir() && v.fsys.dirsWith(ctx, v.view, v.scope())[i.Ino]:
		key := v.key + "/" + name
		return v.child(ctx, key, &viewDir{genDir: genDir{fsys: v.fsys, mirror: i.Ino}, scope: v.scope, real: i.Ino, key: key, view: v.view}, out), 0
	case i.IsReg() && v.fsys.eng.MatchIno(i.Ino, f):
		ch := v.fsys.newNode(ctx, v.EmbeddedInode(), &i, out)
		out.SetEntryTimeout(uncached) // the memory may leave the view
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
	dirs := v.fsys.dirsWith(ctx, v.view, v.scope())
	list := make([]fuse.DirEntry, 0, len(ents)+1)
	for _, e := range ents {
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
	if v.root {
		list = append(list, dirEntry("search", v.key+"/search"))
		sort.Slice(list, func(a, b int) bool { return list[a].Name < list[b].Name })
	}
	return fs.NewListDirStream(list), 0
}

func contains(list []string, s string) bool {
	i := sort.SearchStrings(list, s)
	return i < len(list) && list[i] == s
}
