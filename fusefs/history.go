package fusefs

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// historyDir is history/<dir>/: the real tree's directories, with each
// file shown as a directory of its kept old versions (historyFile).
// Everything here is read-only; to restore a version, copy it back.
type historyDir struct {
	genDir
	path string // the store path of the directory ("" for the root)
}

func (h *historyDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	p := h.path + "/" + name
	ino, err := h.fsys.st.Resolve(p)
	if err != nil || !h.fsys.st.Visible(ino) {
		return nil, syscall.ENOENT
	}
	a, err := h.fsys.st.Attr(ino)
	if err != nil {
		return nil, errno(err)
	}
	switch {
	case a.IsDir():
		return h.child(ctx, "/history"+p, &historyDir{genDir: genDir{fsys: h.fsys, mirror: ino}, path: p}, out), 0
	case a.IsReg():
		// Found by its path each time: a save puts another inode there.
		return h.child(ctx, "/history"+p, &historyFile{genDir: genDir{fsys: h.fsys, mirrorPath: p, mirrorFile: true}, path: p}, out), 0
	}
	return nil, syscall.ENOENT
}

func (h *historyDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	dir := uint64(store.RootIno)
	if h.path != "" {
		ino, err := h.fsys.st.Resolve(h.path)
		if err != nil {
			return nil, errno(err)
		}
		dir = ino
	}
	ents, err := h.fsys.st.ReadDir(dir)
	if err != nil {
		return nil, errno(err)
	}
	var list []fuse.DirEntry
	for _, e := range ents {
		switch e.Mode & syscall.S_IFMT {
		case syscall.S_IFREG:
			if vs, err := h.fsys.st.Versions(e.Ino); err != nil || len(vs) == 0 {
				continue // only memories with old versions are listed
			}
			fallthrough
		case syscall.S_IFDIR:
			list = append(list, dirEntry(e.Name, "/history"+h.path+"/"+e.Name))
		}
	}
	return rewindable(fs.NewListDirStream(list), h.Readdir), 0
}

// historyFile is history/<path>/: v1<ext>, v2<ext>, ... oldest first, the
// kept old versions of the memory at path (its current content is the file
// itself). The memory is found by its path at every request: a save puts
// another inode there, which goes on with the same versions.
type historyFile struct {
	genDir
	path string
}

// versionName is the name of the k-th kept version (1-based).
func (h *historyFile) versionName(k int) string { return "v" + strconv.Itoa(k) + path.Ext(h.path) }

// versions returns the memory at the path now, its lineage (the stable id
// version files are named by) and the versions the store's user may see.
func (h *historyFile) versions() (uint64, uint64, []store.Version, error) {
	ino, err := h.fsys.st.Resolve(h.path)
	if err != nil || !h.fsys.st.Visible(ino) {
		return 0, 0, nil, syscall.ENOENT
	}
	in, err := h.fsys.st.Info(ino)
	if err != nil {
		return 0, 0, nil, err
	}
	vs, err := h.fsys.st.Versions(ino)
	return ino, in.Lineage, vs, err
}

func versionKey(lin uint64, n uint32) string { return fmt.Sprintf("/history/%d/%d", lin, n) }

func (h *historyFile) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	num, ok := strings.CutPrefix(strings.TrimSuffix(name, path.Ext(h.path)), "v")
	k, err := strconv.Atoi(num)
	if !ok || err != nil || k < 1 || name != h.versionName(k) {
		return nil, syscall.ENOENT
	}
	ino, lin, vs, err := h.versions()
	if err != nil {
		return nil, errno(err)
	}
	if k > len(vs) {
		return nil, syscall.ENOENT
	}
	v := vs[k-1]
	gen := func(context.Context, views.May) ([]byte, error) {
		if cur, err := h.fsys.st.Resolve(h.path); err == nil {
			ino = cur // saved again since the lookup: same lineage
		}
		return h.fsys.st.VersionContent(ino, v.N)
	}
	return h.genFileAttrChild(ctx, versionKey(lin, v.N), gen, h.versionAttr(ino, v), out), 0
}

// versionAttr gives a version file its size, the owner and read bits the
// memory had when that version was replaced (for a version kept before
// they were recorded, the memory's own now), and its own times.
func (h *historyFile) versionAttr(ino uint64, v store.Version) func(*fuse.Attr) {
	uid, gid, mode := v.Uid, v.Gid, v.Mode
	if !v.Known {
		if i, err := h.fsys.st.Attr(ino); err == nil {
			uid, gid, mode = i.Uid, i.Gid, i.Mode
		}
	}
	return func(a *fuse.Attr) {
		a.Uid, a.Gid = uid, gid
		a.Mode = syscall.S_IFREG | mode&0o444
		a.Size, a.Blocks = v.Size, (v.Size+511)/512
		if v.Modified > 0 {
			a.Mtime, a.Mtimensec = uint64(v.Modified/1e9), uint32(v.Modified%1e9)
			a.Ctime, a.Ctimensec = uint64(v.Saved/1e9), uint32(v.Saved%1e9)
		}
	}
}

func (h *historyFile) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	_, lin, vs, err := h.versions()
	if err != nil {
		return nil, errno(err)
	}
	var list []fuse.DirEntry
	for k, v := range vs {
		list = append(list, fuse.DirEntry{Name: h.versionName(k + 1), Mode: syscall.S_IFREG, Ino: synthIno(versionKey(lin, v.N))})
	}
	return rewindable(fs.NewListDirStream(list), h.Readdir), 0
}
