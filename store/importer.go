package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/memory"
)

// ProgressFunc reports done out of total units.
type ProgressFunc func(done, total int64)

// ImportResult summarises an import.
type ImportResult struct {
	Files    int64    `json:"files"`
	Dirs     int64    `json:"dirs"`
	Symlinks int64    `json:"symlinks"`
	Bytes    int64    `json:"bytes"`
	Skipped  []string `json:"skipped,omitempty"`
}

// importBatch is how many new files are written per batch.
const importBatch = 2000

// Import copies the plain directory src into the store under to ("/" or
// "" is the root). Existing files are overwritten; progress counts files.
func (s *Store) Import(src, to string, progress ProgressFunc) (*ImportResult, error) {
	if progress == nil {
		progress = func(int64, int64) {}
	}
	src, err := filepath.Abs(src)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("import: %s is not a directory", src)
	}
	to = path.Clean("/" + to)
	type item struct {
		rel string
		d   fs.DirEntry
	}
	var items []item
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == src {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		items = append(items, item{filepath.ToSlash(rel), d})
		return nil
	})
	if err != nil {
		return nil, err
	}
	res := &ImportResult{}
	total := int64(len(items))
	b := &bulk{s: s, owner: s.opts.User}
	for n, it := range items {
		if n%importBatch == 0 {
			if err := b.flush(); err != nil {
				return res, err
			}
			progress(int64(n), total)
		}
		dst := path.Join(to, it.rel)
		full := filepath.Join(src, filepath.FromSlash(it.rel))
		if err := s.importOne(b, full, dst, it.d, res); err != nil {
			if errors.Is(err, errSkip) {
				res.Skipped = append(res.Skipped, it.rel+": "+err.Error())
				continue
			}
			b.cancel()
			return res, fmt.Errorf("import %s: %w", it.rel, err)
		}
	}
	if err := b.flush(); err != nil {
		return res, err
	}
	progress(total, total)
	return res, nil
}

var errSkip = errors.New("not a regular file, directory or symlink; skipped")

func (s *Store) importOne(b *bulk, full, dst string, d fs.DirEntry, res *ImportResult) error {
	fi, err := d.Info()
	if err != nil {
		return err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	own := Owner{uint32(os.Getuid()), uint32(os.Getgid())}
	if st != nil {
		own = Owner{st.Uid, st.Gid}
	}
	dir, name := path.Split(dst)
	switch {
	case fi.IsDir():
		s.mu.Lock()
		ino, err := s.mkdirAll(dst, own)
		if err == nil {
			s.chmodLocked(ino, uint32(fi.Mode().Perm()))
		}
		s.unlock()
		res.Dirs++
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(full)
		if err != nil {
			return err
		}
		if err := b.flush(); err != nil {
			return err
		}
		s.mu.Lock()
		parent, err := s.mkdirAll(dir, own)
		s.unlock()
		if err != nil {
			return err
		}
		if _, err := s.Symlink(parent, name, target, own); err != nil && !errors.Is(err, syscall.EEXIST) {
			return err
		}
		res.Symlinks++
		return nil
	case fi.Mode().IsRegular():
		data, err := os.ReadFile(full)
		if err != nil {
			return err
		}
		res.Files++
		res.Bytes += int64(len(data))
		return b.addFile(dst, data, uint32(fi.Mode().Perm()), own, fi.ModTime().UnixNano())
	}
	return errSkip
}

func (s *Store) chmodLocked(ino uint64, perm uint32) {
	i, err := s.editable(ino)
	if err == nil && i.Mode&0o7777 != perm {
		i.Mode = i.Mode&syscall.S_IFMT | perm
		s.update(nil, i)
	}
}

// bulk writes new files through a backend batch, belonging to owner
// (Record.Owner).
type bulk struct {
	s       *Store
	owner   string
	batch   backend.Batch
	created []*Inode
	parents map[uint64]bool
}

func (b *bulk) addFile(dst string, data []byte, perm uint32, own Owner, mtime int64) error {
	s := b.s
	dir, name := path.Split(dst)
	if err := checkName(name); err != nil {
		return err
	}
	if err := s.space.need(len(data) + 256); err != nil {
		return err
	}
	s.mu.Lock()
	parent, err := s.mkdirAll(dir, own)
	if err != nil {
		s.unlock()
		return err
	}
	ino, _, lerr := s.lookup(parent, name)
	if lerr == nil {
		s.unlock()
		if err := s.mayChange(ino); err != nil {
			if errors.Is(err, syscall.ENOENT) {
				err = syscall.EACCES // a hidden memory's name: taken
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		return s.overwrite(ino, data)
	}
	if parent == RootIno && s.opts.Reserved[name] {
		s.unlock()
		return errSkip
	}
	ino, err = s.allocIno()
	s.unlock()
	if err != nil {
		return err
	}
	if b.batch == nil {
		b.batch = s.kv.NewBatch()
		b.parents = map[uint64]bool{}
	}
	i := &Inode{Ino: ino, Mode: syscall.S_IFREG | perm, Uid: own.Uid, Gid: own.Gid, Size: uint64(len(data)),
		Atime: mtime, Mtime: mtime, Ctime: s.now().UnixNano(), Btime: mtime, Links: []Link{{parent, name}}}
	rec := &Record{Version: 1, Modified: mtime, Owner: b.owner}
	rec.applyParse(memory.Parse(name, data))
	if isLogName(name) {
		rec.applyLines(scanBytes(0, data))
	}
	if b.owner == s.opts.User {
		s.claim(rec) // written by the store's user, not by maintenance
	}
	rec.SHA256 = sha(data)
	for off, idx := 0, uint32(0); off < len(data); off, idx = off+ChunkSize, idx+1 {
		if err := b.batch.Set(backend.ChunkKey(ino, idx), data[off:min(len(data), off+ChunkSize)]); err != nil {
			return err
		}
	}
	// Inode and metadata before the entry: a crash mid-import leaves at
	// worst an unreferenced inode (fsck reclaims it), never a dangling name.
	if err := b.batch.Set(backend.InodeKey(ino), i.encode()); err != nil {
		return err
	}
	if err := batchRecord(b.batch, ino, rec); err != nil {
		return err
	}
	if err := b.batch.Set(backend.DirentKey(parent, name), encodeDirent(ino, i.Mode)); err != nil {
		return err
	}
	b.created = append(b.created, i)
	b.parents[parent] = true
	return nil
}

// overwrite replaces the content of an existing file.
func (s *Store) overwrite(ino uint64, data []byte) error {
	i, err := s.inode(ino)
	if err != nil {
		return err
	}
	if !i.IsReg() {
		return syscall.EISDIR
	}
	if err := s.Open(ino, false); err != nil {
		return err
	}
	f := s.openState(ino)
	if err := s.unpack(ino); err != nil {
		return errors.Join(err, s.Release(ino))
	}
	f.mu.Lock()
	i, err = s.inode(ino) // the cached inode now, not the one before Open
	if err == nil {
		err = s.truncateLocked(f, i, 0)
	}
	f.mu.Unlock()
	if err == nil {
		_, err = s.WriteAt(ino, data, 0)
	}
	err = errors.Join(err, s.Release(ino))
	s.notifyContent(ino)
	return err
}

func (b *bulk) flush() error {
	if b.batch == nil {
		return nil
	}
	err := b.batch.Flush()
	b.batch = nil
	if err != nil {
		return err
	}
	s := b.s
	s.icMu.Lock()
	for _, i := range b.created {
		s.inodes[i.Ino] = i
	}
	s.icMu.Unlock()
	for _, i := range b.created {
		s.dcSet(i.Links[0].Parent, i.Links[0].Name, i.Ino, i.Mode)
	}
	now := s.now().UnixNano()
	s.mu.Lock()
	for _, i := range b.created {
		s.event(Changed, i.Ino)
	}
	for p := range b.parents {
		if pi, err := s.editable(p); err == nil {
			pi.Mtime, pi.Ctime = now, now
			s.update(nil, pi)
		}
	}
	s.unlock()
	for _, i := range b.created {
		s.notifyEntry(i.Links[0].Parent, i.Links[0].Name)
	}
	b.created, b.parents = nil, nil
	return nil
}

func (b *bulk) cancel() {
	if b.batch != nil {
		b.batch.Cancel()
	}
}

// Export writes the tree under from ("/" or "" for everything) to dest as
// plain files.
func (s *Store) Export(dest, from string, progress ProgressFunc) (*ImportResult, error) {
	if progress == nil {
		progress = func(int64, int64) {}
	}
	start, err := s.Resolve(from)
	if err != nil {
		return nil, fmt.Errorf("export: %s: %w", from, err)
	}
	if i, err := s.Attr(start); err != nil || !i.IsDir() {
		return nil, fmt.Errorf("export: %s is not a directory", from)
	}
	if ents, err := os.ReadDir(dest); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("export: %s is not empty; give a new or empty directory", dest)
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, err
	}
	res := &ImportResult{}
	total := s.countFiles(start, 0) // for the progress bar: names only, no content
	type dirTime struct {
		path         string
		atime, mtime int64
	}
	var dirs []dirTime
	var walk func(ino uint64, out string) error
	walk = func(ino uint64, out string) error {
		ents, err := s.ReadDir(ino)
		if err != nil {
			return err
		}
		for _, e := range ents {
			i, err := s.Attr(e.Ino)
			if err != nil {
				return err
			}
			p := filepath.Join(out, e.Name)
			switch i.Mode & syscall.S_IFMT {
			case syscall.S_IFDIR:
				if err := os.Mkdir(p, os.FileMode(i.Mode&0o777)|0o700); err != nil {
					return err
				}
				if err := walk(e.Ino, p); err != nil {
					return err
				}
				os.Chmod(p, os.FileMode(i.Mode&0o777))
				dirs = append(dirs, dirTime{p, i.Atime, i.Mtime})
				res.Dirs++
			case syscall.S_IFREG:
				if err := s.exportFile(&i, p); err != nil {
					return err
				}
				res.Files++
				res.Bytes += int64(i.Size)
				progress(res.Files, max(total, res.Files))
			case syscall.S_IFLNK:
				if err := os.Symlink(i.Target, p); err != nil {
					return err
				}
				res.Symlinks++
			default:
				res.Skipped = append(res.Skipped, strings.TrimPrefix(p, dest))
			}
		}
		return nil
	}
	if err := walk(start, dest); err != nil {
		return res, err
	}
	for _, d := range dirs {
		os.Chtimes(d.path, unixTime(d.atime), unixTime(d.mtime))
	}
	progress(res.Files, res.Files)
	return res, nil
}

func (s *Store) exportFile(i *Inode, p string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, os.FileMode(i.Mode&0o777))
	if err != nil {
		return err
	}
	buf := make([]byte, ChunkSize)
	for off := int64(0); off < int64(i.Size); {
		n, err := s.ReadAt(i.Ino, buf, off)
		if err != nil {
			f.Close()
			return err
		}
		if n == 0 {
			break
		}
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return err
		}
		off += int64(n)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Chtimes(p, unixTime(i.Atime), unixTime(i.Mtime))
}

// countFiles counts the regular files below dir (as the store's user sees
// them).
func (s *Store) countFiles(dir uint64, depth int) int64 {
	ents, err := s.ReadDir(dir)
	if err != nil || depth > 4096 {
		return 0
	}
	var n int64
	for _, e := range ents {
		switch e.Mode & syscall.S_IFMT {
		case syscall.S_IFDIR:
			n += s.countFiles(e.Ino, depth+1)
		case syscall.S_IFREG:
			n++
		}
	}
	return n
}
