package store

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// A Bulk's load mode (StartLoad): the new files' content, inodes and
// metadata, and the new directories' inodes, go into a backend.Load
// (Badger's StreamWriter: sorted tables written directly, no log,
// memtable or compaction), in inode order, which is the order they are
// numbered in. Their names wait in memory; at the end (Finish) they are
// sorted and written in a second load, after the first is durable, so
// that a crash leaves at worst unreferenced inodes (fsck reclaims them),
// never a name without its inode. Then the directories that got entries
// have their times and subdirectory counts updated, and the caches and
// change events follow, as after a batch's Flush. Nothing of a load is
// visible before Finish.
//
// Every other write fails while a load is open, so a load is only for a
// store that nobody else writes: the import command's own (the KV takes
// loads only when opened with backend.Options.Bulk). What a load cannot
// do, it leaves to the batches: a name that exists already (overwritten
// at once) ends the load, and the rest of the import goes through
// batches; symbolic links and permission changes of existing
// directories are made after it. Inode numbers for the load are leased
// before it starts (loadInos); when they run out, the load ends.

// loadInos is how many inode numbers a load leases before it starts
// (none can be leased during it). Those left unused are skipped.
const loadInos = 1 << 24

type loading struct {
	load backend.Load
	// ents: every name made in the load, in the order made.
	ents []loadEnt
	// dirs: the directories made in the load, by parent and name, and
	// by inode number.
	dirs map[dirName]*Inode
	made map[uint64]*Inode
	// parents: directories given entries, with the subdirectories added.
	parents map[uint64]uint32
	// chmods: directories whose permission bits change after the load.
	chmods map[uint64]uint32
	// links: symbolic links to make after the load.
	links []loadLink
}

type loadEnt struct {
	parent, ino uint64
	name        string
	mode        uint32
}

type dirName struct {
	parent uint64
	name   string
}

type loadLink struct {
	parent       uint64
	name, target string
	own          Owner
}

// StartLoad puts b in load mode, if the store's KV takes a load now
// (backend.Loader), and reports backend.ErrNoLoad (or another error)
// when it does not, b going on with batches. Only for a store no other
// process or goroutine writes while the load is open: every other write
// fails until Finish.
func (b *Bulk) StartLoad() error {
	s := b.s
	ldr, ok := backend.AsLoader(s.kv)
	if b.ld != nil {
		return nil
	}
	if !ok || !ldr.TakesLoads() || s.shared || s.opts.ReadOnly {
		return backend.ErrNoLoad
	}
	if err := b.Flush(); err != nil {
		return err
	}
	s.mu.Lock()
	err := s.leaseInos(loadInos)
	s.unlock()
	if err != nil {
		return err
	}
	s.loading.Store(true)
	l, err := ldr.NewLoad()
	if err != nil {
		s.loading.Store(false)
		// No load: its record goes, and so do the numbers it leased, so
		// that a record left by a failed delete holds no inode the
		// batches make next.
		s.mu.Lock()
		s.idNext = s.idEnd
		s.unlock()
		return errors.Join(err, s.kv.Update(func(t backend.Txn) error { return t.Delete(loadKey()) }))
	}
	s.changes.Taken() // until Finish has delivered (Settled)
	b.ld = &loading{load: l, dirs: map[dirName]*Inode{}, made: map[uint64]*Inode{}, parents: map[uint64]uint32{}, chmods: map[uint64]uint32{}}
	return nil
}

// leaseInos leases n inode numbers at once for a load, and records them
// (bulkundo.go). Caller holds mu.
func (s *Store) leaseInos(n uint64) error {
	return s.update(func(t backend.Txn) error {
		v, err := t.Get(backend.StoreKey("nextino"))
		if err != nil {
			return err
		}
		if len(v) != 8 {
			return fmt.Errorf("store: corrupt inode counter")
		}
		hwm := binary.BigEndian.Uint64(v)
		if err := t.Set(backend.StoreKey("nextino"), binary.BigEndian.AppendUint64(nil, hwm+n)); err != nil {
			return err
		}
		if err := t.Set(loadKey(), encodeLoadRange(hwm, hwm+n)); err != nil {
			return err
		}
		s.idNext, s.idEnd = hwm, hwm+n
		return nil
	})
}

// loadIno numbers a new node of the load, or reports false when the
// lease is spent. Caller holds mu.
func (b *Bulk) loadIno() (uint64, bool) {
	s := b.s
	if s.idNext >= s.idEnd {
		return 0, false
	}
	s.idNext++
	return s.idNext - 1, true
}

// errLoadOver: the load cannot take this; it is ended and the caller
// goes on with batches.
var errLoadOver = errors.New("store: load ended")

// loadAdd is Add in load mode.
func (b *Bulk) loadAdd(f *NewFile, perm uint32, own Owner) error {
	s, ld := b.s, b.ld
	dir, name := path.Split(f.dst)
	if err := s.space.need(len(f.data) + 256); err != nil {
		return err
	}
	s.mu.Lock()
	parent, made, err := b.loadDir(dir, own)
	if err == nil && !made {
		if _, _, lerr := s.lookup(parent, name); lerr == nil {
			err = errLoadOver // an existing name: overwritten, after the load
		} else if parent == RootIno && s.opts.Reserved[name] {
			err = ErrReserved
		}
	}
	var ino uint64
	if err == nil {
		var ok bool
		if ino, ok = b.loadIno(); !ok {
			err = errLoadOver
		}
	}
	s.unlock()
	if err != nil {
		return err
	}
	i := &Inode{Ino: ino, Mode: syscall.S_IFREG | perm, Uid: own.Uid, Gid: own.Gid, Size: uint64(len(f.data)),
		Atime: f.mtime, Mtime: f.mtime, Ctime: s.now().UnixNano(), Btime: f.mtime, Links: []Link{{parent, name}}}
	if err := setChunks(ld.load, ino, f.data); err != nil {
		return err
	}
	if err := ld.load.Set(backend.InodeKey(ino), i.encode()); err != nil {
		return err
	}
	if err := ld.load.Set(backend.MetaKey(ino), f.rec); err != nil {
		return err
	}
	ld.ents = append(ld.ents, loadEnt{parent, ino, name, i.Mode})
	ld.parents[parent] += 0
	return nil
}

// setChunks writes data as ino's content chunks through w.
func setChunks(w interface{ Set(k, v []byte) error }, ino uint64, data []byte) error {
	for off, idx := 0, uint32(0); off < len(data); off, idx = off+ChunkSize, idx+1 {
		if err := w.Set(backend.ChunkKey(ino, idx), data[off:min(len(data), off+ChunkSize)]); err != nil {
			return err
		}
	}
	return nil
}

// loadDir is mkdirAll in load mode: the directory p, made in the load
// where missing (0755, own). made reports that it was made in the load
// (so that nothing is in it but what the load put there). Caller holds mu.
func (b *Bulk) loadDir(p string, own Owner) (ino uint64, made bool, err error) {
	s, ld := b.s, b.ld
	ino = RootIno
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." {
			continue
		}
		if d := ld.dirs[dirName{ino, part}]; d != nil {
			ino, made = d.Ino, true
			continue
		}
		if !made {
			next, mode, err := s.lookup(ino, part)
			switch {
			case err == nil && mode&syscall.S_IFMT != syscall.S_IFDIR:
				return 0, false, syscall.ENOTDIR
			case err == nil:
				ino = next
				continue
			case !errors.Is(err, syscall.ENOENT):
				return 0, false, err
			}
		}
		d, err := b.loadMkdir(ino, part, 0o755, own)
		if err != nil {
			return 0, false, err
		}
		ino, made = d.Ino, true
	}
	return ino, made, nil
}

// loadMkdir makes the directory name in dir in the load. Caller holds mu.
func (b *Bulk) loadMkdir(dir uint64, name string, perm uint32, own Owner) (*Inode, error) {
	s, ld := b.s, b.ld
	if err := checkName(name); err != nil {
		return nil, err
	}
	if dir == RootIno && s.opts.Reserved[name] {
		return nil, syscall.EEXIST
	}
	if err := s.space.need(len(name) + 256); err != nil {
		return nil, err
	}
	var pmode, pgid uint32
	if p := ld.made[dir]; p != nil {
		pmode, pgid = p.Mode, p.Gid
	} else {
		p, err := s.inode(dir)
		if err != nil {
			return nil, err
		}
		s.icMu.RLock()
		pmode, pgid = p.Mode, p.Gid
		s.icMu.RUnlock()
	}
	ino, ok := b.loadIno()
	if !ok {
		return nil, errLoadOver
	}
	now := s.now().UnixNano()
	i := &Inode{Ino: ino, Mode: syscall.S_IFDIR | perm, Uid: own.Uid, Gid: own.Gid,
		Atime: now, Mtime: now, Ctime: now, Btime: now, Links: []Link{{dir, name}}}
	if pmode&syscall.S_ISGID != 0 { // as newNode
		i.Gid = pgid
		i.Mode |= syscall.S_ISGID
	}
	if err := ld.load.Set(backend.InodeKey(ino), i.encode()); err != nil {
		return nil, err
	}
	ld.dirs[dirName{dir, name}] = i
	ld.made[ino] = i
	ld.ents = append(ld.ents, loadEnt{dir, ino, name, i.Mode})
	ld.parents[dir]++
	return i, nil
}

// loadAddDir is AddDir in load mode.
func (b *Bulk) loadAddDir(p string, perm uint32, own Owner) error {
	s, ld := b.s, b.ld
	parentPath, name := path.Split(p)
	s.mu.Lock()
	defer s.unlock()
	parent, made, err := b.loadDir(parentPath, own)
	if err != nil {
		return err
	}
	if name == "" { // the root
		ld.chmods[parent] = perm
		return nil
	}
	if d := ld.dirs[dirName{parent, name}]; d != nil {
		if d.Mode&0o7777 != perm {
			ld.chmods[d.Ino] = perm
		}
		return nil
	}
	if !made {
		next, mode, err := s.lookup(parent, name)
		switch {
		case err == nil && mode&syscall.S_IFMT != syscall.S_IFDIR:
			return syscall.ENOTDIR
		case err == nil:
			ld.chmods[next] = perm
			return nil
		case !errors.Is(err, syscall.ENOENT):
			return err
		}
	}
	_, err = b.loadMkdir(parent, name, perm, own)
	return err
}

// loadSymlink is AddSymlink in load mode: the link is made after the load.
func (b *Bulk) loadSymlink(p, target string, own Owner) error {
	s, ld := b.s, b.ld
	dir, name := path.Split(p)
	s.mu.Lock()
	parent, _, err := b.loadDir(dir, own)
	s.unlock()
	if err != nil {
		return err
	}
	ld.links = append(ld.links, loadLink{parent, name, target, own})
	return nil
}

// endLoad writes the load's names, after its inodes are durable, and
// brings the directories, caches and links up to date (see the top).
func (b *Bulk) endLoad() error {
	s, ld := b.s, b.ld
	if ld == nil {
		return nil
	}
	b.ld = nil
	defer s.changes.Handed()
	err := ld.load.Flush()
	if err == nil {
		err = s.writeNames(ld.ents)
	}
	s.loading.Store(false)
	if err != nil {
		return err
	}
	for _, e := range ld.ents {
		s.dcSet(e.parent, e.name, e.ino, e.mode)
	}
	now := s.now().UnixNano()
	s.mu.Lock()
	for _, e := range ld.ents {
		if e.mode&syscall.S_IFMT == syscall.S_IFREG {
			s.event(Changed, e.ino)
		}
	}
	for p, subdirs := range ld.parents {
		if pi, perr := s.editable(p); perr == nil {
			pi.Mtime, pi.Ctime = now, now
			pi.Subdirs += subdirs
			if uerr := s.update(nil, pi); uerr != nil && err == nil {
				err = uerr // reported; the record stays, and a start undoes the load
			}
		}
	}
	for ino, perm := range ld.chmods {
		s.chmodLocked(ino, perm)
	}
	s.unlock()
	for _, e := range ld.ents {
		s.notifyEntry(e.parent, e.name)
	}
	if err == nil {
		// The load is whole: no start will undo it now.
		err = s.kv.Update(func(t backend.Txn) error { return t.Delete(loadKey()) })
	}
	if err != nil {
		return err
	}
	for _, l := range ld.links { // a link that fails fails the import, not the load
		if _, lerr := s.Symlink(l.parent, l.name, l.target, l.own); lerr != nil && !errors.Is(lerr, syscall.EEXIST) && err == nil {
			err = fmt.Errorf("%s: %w", l.name, lerr)
		}
	}
	return err
}

// writeNames writes the directory entries of ents, sorted, in a load of
// their own, or through a batch when the KV takes no second load.
func (s *Store) writeNames(ents []loadEnt) error {
	slices.SortFunc(ents, func(a, b loadEnt) int {
		return cmp.Or(cmp.Compare(a.parent, b.parent), strings.Compare(a.name, b.name))
	})
	for k := 1; k < len(ents); k++ {
		if ents[k].parent == ents[k-1].parent && ents[k].name == ents[k-1].name {
			return fmt.Errorf("store: load: %q made twice", ents[k].name)
		}
	}
	var w interface {
		Set(k, v []byte) error
		Flush() error
		Cancel()
	}
	ldr, _ := backend.AsLoader(s.kv)
	l, err := ldr.NewLoad()
	switch {
	case err == nil:
		w = l
	case errors.Is(err, backend.ErrNoLoad):
		w = s.kv.NewBatch()
	default:
		return err
	}
	for _, e := range ents {
		if err := w.Set(backend.DirentKey(e.parent, e.name), encodeDirent(e.ino, e.mode)); err != nil {
			w.Cancel()
			return err
		}
	}
	return w.Flush()
}
