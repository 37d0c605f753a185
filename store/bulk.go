package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/memory"
)

// The bulk path: many new files written through one backend batch rather
// than one transaction each (package transfer's import, and WriteNew for
// maintenance). A new file's keys go into the batch, its inode and
// metadata before its entry, so that a crash mid-batch leaves at worst an
// unreferenced inode (fsck reclaims it), never a dangling name; Flush
// writes the batch and then installs the new files in the caches, bumps
// their directories' times and reports the changes. A name that exists
// already is overwritten at once, as a commit (if the store's user may
// change it). Directories are made as they are needed, outside the batch.

// ErrReserved is AddFile's refusal of a name the store reserves at its
// root (Options.Reserved, such as meta/).
var ErrReserved = errors.New("a name reserved at the root")

// Bulk writes new files through a backend batch. Its files belong to an
// owner (Record.Owner): the store's user for NewBulk. A Bulk is used by
// one goroutine; Flush or Cancel ends every batch.
type Bulk struct {
	s       *Store
	owner   string
	batch   backend.Batch
	created []*Inode
	parents map[uint64]bool
	ld      *loading // load mode (bulkload.go)
}

// NewBulk starts a bulk write whose files belong to the store's user.
func (s *Store) NewBulk() *Bulk { return &Bulk{s: s, owner: s.opts.User} }

// AddFile writes the regular file dst (a store path) holding data, with
// permission bits perm, owner own and modification time mtime (unix ns),
// making its directories (0755, own). A new file is in the batch until
// Flush; an existing one is overwritten now. It is Add of Prepare.
func (b *Bulk) AddFile(dst string, data []byte, perm uint32, own Owner, mtime int64) error {
	f, err := b.Prepare(dst, data, mtime)
	if err != nil {
		return err
	}
	return b.Add(f, perm, own)
}

// NewFile is a file made ready for Bulk.Add: its content redacted,
// parsed (front matter, log lines) and hashed, its record encoded (the
// record does not depend on the inode number Add gives it).
type NewFile struct {
	dst   string
	data  []byte
	mtime int64
	rec   []byte
}

// Prepare does for dst and data what needs no lock: the name check,
// redaction, parsing, the hash and the record's encoding. Unlike the rest
// of a Bulk it may be called from many goroutines at once (an import
// prepares files in parallel and adds them in order).
func (b *Bulk) Prepare(dst string, data []byte, mtime int64) (*NewFile, error) {
	s := b.s
	_, name := path.Split(dst)
	if err := checkName(name); err != nil {
		return nil, err
	}
	if r := s.Redactor().ForStore(); r.Applies(dst) {
		var counts map[string]int
		data, counts = r.Redact(dst, data) // before any of it is written (redact.go)
		s.rules.Masked(counts)
	}
	rec := &Record{Version: 1, Modified: mtime, Owner: b.owner}
	rec.applyParse(memory.Parse(name, data))
	if isLogName(name) {
		rec.applyLines(scanBytes(memory.IsJSONLog(name), 0, data))
	}
	if b.owner == s.opts.User {
		s.claim(rec) // written by the store's user, not by maintenance
	}
	rec.SHA256 = sha(data)
	enc, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	return &NewFile{dst: dst, data: data, mtime: mtime, rec: enc}, nil
}

// Add writes f, with permission bits perm and owner own, as AddFile says.
func (b *Bulk) Add(f *NewFile, perm uint32, own Owner) error {
	if done, err := b.inLoad(func() error { return b.loadAdd(f, perm, own) }); done {
		return err
	}
	s, data, mtime, rec := b.s, f.data, f.mtime, f.rec
	dir, name := path.Split(f.dst)
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
		return ErrReserved
	}
	ino, err = s.allocIno()
	s.unlock()
	if err != nil {
		return err
	}
	if b.batch == nil {
		s.changes.Taken() // until Flush or Cancel has delivered (Settled)
		b.batch = s.kv.NewBatch()
		b.parents = map[uint64]bool{}
	}
	i := &Inode{Ino: ino, Mode: syscall.S_IFREG | perm, Uid: own.Uid, Gid: own.Gid, Size: uint64(len(data)),
		Atime: mtime, Mtime: mtime, Ctime: s.now().UnixNano(), Btime: mtime, Links: []Link{{parent, name}}}
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
	if err := b.batch.Set(backend.MetaKey(ino), rec); err != nil {
		return err
	}
	if err := b.batch.Set(backend.DirentKey(parent, name), encodeDirent(ino, i.Mode)); err != nil {
		return err
	}
	b.created = append(b.created, i)
	b.parents[parent] = true
	return nil
}

// MkdirAll makes the directory p (a store path) and any missing parents
// (0755, own), as AddFile does for a file's directory, and returns it.
// It ends a load (Finish).
func (b *Bulk) MkdirAll(p string, own Owner) (uint64, error) {
	s := b.s
	if err := b.endLoad(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.unlock()
	return s.mkdirAll(p, own)
}

// AddDir makes the directory p as MkdirAll does and gives it the
// permission bits perm (its ctime unchanged): a directory of a copied
// tree, new or already there.
func (b *Bulk) AddDir(p string, perm uint32, own Owner) error {
	if done, err := b.inLoad(func() error { return b.loadAddDir(p, perm, own) }); done {
		return err
	}
	s := b.s
	s.mu.Lock()
	ino, err := s.mkdirAll(p, own)
	if err == nil {
		s.chmodLocked(ino, perm)
	}
	s.unlock()
	return err
}

func (s *Store) chmodLocked(ino uint64, perm uint32) {
	i, err := s.editable(ino)
	if err == nil && i.Mode&0o7777 != perm {
		i.Mode = i.Mode&syscall.S_IFMT | perm
		s.update(nil, i)
	}
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

// inLoad runs add in load mode, if b is in it, and reports done unless
// the load could not take it (errLoadOver): the load is then ended, and
// the caller goes on with batches.
func (b *Bulk) inLoad(add func() error) (done bool, err error) {
	if b.ld == nil {
		return false, nil
	}
	if err := add(); !errors.Is(err, errLoadOver) {
		return true, err
	}
	if err := b.endLoad(); err != nil {
		return true, err
	}
	return false, nil
}

// AddSymlink makes the symbolic link p to target, owned by own, making
// its directories as AddFile does; a name already there is left as it
// is. In load mode the link is made when the load ends.
func (b *Bulk) AddSymlink(p, target string, own Owner) error {
	if done, err := b.inLoad(func() error { return b.loadSymlink(p, target, own) }); done {
		return err
	}
	if err := b.Flush(); err != nil {
		return err
	}
	dir, name := path.Split(p)
	parent, err := b.MkdirAll(dir, own)
	if err != nil {
		return err
	}
	if _, err := b.s.Symlink(parent, name, target, own); err != nil && !errors.Is(err, syscall.EEXIST) {
		return err
	}
	return nil
}

// Finish ends a load, if one is open, and flushes: everything added is
// written and visible.
func (b *Bulk) Finish() error {
	if err := b.endLoad(); err != nil {
		b.Cancel()
		return err
	}
	return b.Flush()
}

// Flush writes the files added since the last Flush and makes them
// visible; in load mode it does nothing (Finish).
func (b *Bulk) Flush() error {
	if b.batch == nil {
		return nil
	}
	s := b.s
	defer s.changes.Handed()
	err := b.batch.Flush()
	b.batch = nil
	if err != nil {
		return err
	}
	// The new inodes are not put in the inode cache: an import of a
	// million files would hold every one; a later use reads it.
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

// Cancel drops the files added since the last Flush, or since a load
// began (what the load wrote stays until the next start undoes it,
// bulkundo.go); the Bulk is done.
func (b *Bulk) Cancel() {
	if b.ld != nil {
		b.ld.load.Cancel()
		b.ld = nil
		b.s.loading.Store(false)
		b.s.changes.Handed()
	}
	if b.batch != nil {
		b.batch.Cancel()
		b.batch = nil
		b.s.changes.Handed()
	}
}
