package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/policy"
	"github.com/mnemofs/mnemofs/store/internal/access"
)

// Saves: editors, sed -i, agent SDKs and git replace a file
// rather than write it in place, and a memory is its path. The rule:
//
//	A new file that takes a memory's name — by a rename over it, or by a
//	create within saveWindow of the memory leaving the name (renamed away
//	to a scratch name, or removed) — is the memory's next version, as an
//	in-place write would be; any other file moved onto a memory's name is
//	a different memory, and the one it replaces goes to the trash.
//
// "New" means created less than freshAge ago (a temp file). The memory
// goes on in the new inode: its history (versions are kept per lineage,
// Record.Lineage, not per inode), created time, access counts and user
// xattrs carry on, the replaced bytes become the previous version (in a
// tree that keeps versions), and links to the old inode follow it (the
// successor key, backend/keys.go). The stable identity a caller sees is
// the xattr user.mnemofs.lineage; the inode number changes, as it does
// for the same save on any local disk.

const (
	// saveWindow: how soon a file created at a vacated name continues
	// the memory that left it.
	saveWindow = 10 * time.Second
	// freshAge: a rename source younger than this is a save's new content.
	freshAge = time.Minute
)

// vacancy is a name a memory just left (Store.vacated, under mu).
type vacancy struct {
	ino uint64
	at  int64
}

// lineage is the id versions of the memory r describes are kept under.
func (r *Record) lineage(ino uint64) uint64 {
	if r.Lineage != 0 {
		return r.Lineage
	}
	return ino
}

// replaceable reports whether the regular file old at dir/name, about to
// be replaced by a rename, is a memory that must not be lost: a visible
// memory of one name, not ignored, that the caller may change. A save may
// continue it when it is also quiet (its committed bytes are all it
// holds); otherwise it goes to the trash. Caller holds mu.
func (s *Store) replaceable(dir uint64, name string, old *Inode) bool {
	if !old.IsReg() || len(old.Links) != 1 {
		return false
	}
	dp, err := s.Path(dir)
	return err == nil && !s.Ignored(path.Join(dp, name), false) && s.mayChange(old.Ino) == nil
}

// handOver makes the memory in old (record oldRec) go on in nw (record
// nwRec), at the store path p, within t: the replaced bytes as a version when the tree keeps
// them, the lineage, created time, access counts and user xattrs, and the
// successor key. committed says whether nw's content is already committed
// (a rename), else its first commit comes later (a create). Caller holds
// mu; old is quiet.
func (s *Store) handOver(t backend.Txn, p string, old *Inode, oldRec *Record, nw *Inode, nwRec *Record, committed bool, r *redo) error {
	r.start(nwRec, nw)
	l := oldRec.lineage(old.Ino)
	// A save that wrote back the same bytes (vim's :wq without an edit,
	// sed -i that matched nothing) is no change: no version. A rename
	// knows it now; a create learns it at its first commit (unsave).
	same := committed && oldRec.SHA256 != "" && nwRec.SHA256 == oldRec.SHA256
	if oldRec.Version > 0 && old.Size > 0 && old.Size <= versionMax && !same {
		if m := s.Policy().UpdateMode(p); m == policy.Versioned || m == policy.Append {
			b := make([]byte, old.Size)
			n, err := s.ReadAt(old.Ino, b, 0)
			if err != nil {
				return err
			}
			v := *oldRec
			v.Lineage = l
			if err := putVersion(t, old, &v, b[:n], s.now().UnixNano(), true); err != nil {
				return err
			}
			if !committed {
				nwRec.SavedOver = oldRec.SHA256
			}
		}
	}
	nwRec.Lineage = l
	nwRec.Version = oldRec.Version
	switch {
	case same:
		nwRec.Modified = oldRec.Modified // (its last content change)
	case committed:
		nwRec.Version++
	}
	nwRec.AccessCount += oldRec.AccessCount
	nwRec.LastAccessed = max(nwRec.LastAccessed, oldRec.LastAccessed)
	if a, ok := s.access.Take(old.Ino); ok {
		r.access = a // taken by the first run
	}
	nwRec.AccessCount += r.access.Count
	nwRec.LastAccessed = max(nwRec.LastAccessed, r.access.Last)
	nw.Btime = old.Btime
	// User xattrs the new file does not have itself.
	var names []string
	var vals [][]byte
	err := t.Scan(backend.XattrPrefix(old.Ino), nil, false, func(k, v []byte) bool {
		names = append(names, backend.XattrName(k))
		vals = append(vals, append([]byte(nil), v...))
		return true
	})
	if err != nil {
		return err
	}
	for k, name := range names {
		if _, err := t.Get(backend.XattrKey(nw.Ino, name)); !errors.Is(err, backend.ErrNotFound) {
			continue
		}
		if err := t.Set(backend.XattrKey(nw.Ino, name), vals[k]); err != nil {
			return err
		}
		nw.Xattrs++
	}
	oldRec.Successor = nw.Ino
	if err := putRecord(t, old.Ino, oldRec); err != nil {
		return err
	}
	if err := putRecord(t, nw.Ino, nwRec); err != nil {
		return err
	}
	// The caller forgets both cached records once the transaction is
	// committed: forgotten here, a reader could fill the cache again with
	// the records as they were before it (on etcd a commit takes a while).
	return t.Set(backend.SuccessorKey(old.Ino), binary.BigEndian.AppendUint64(nil, nw.Ino))
}

// redo keeps what handOver adds to, so that a transaction body that runs
// again (on etcd, after a conflict) starts from the same values.
type redo struct {
	rec    Record
	xattrs uint32
	access access.Stat
	done   bool
}

func (r *redo) start(rec *Record, i *Inode) {
	if !r.done {
		r.rec, r.xattrs, r.done = *rec, i.Xattrs, true
		return
	}
	*rec, i.Xattrs = r.rec, r.xattrs
}

// successor is the inode a save moved the memory ino on to, 0 if none.
func (s *Store) successor(t backend.Txn, ino uint64) uint64 {
	v, err := t.Get(backend.SuccessorKey(ino))
	if err != nil || len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// current follows ino through saves to the inode holding the memory now.
func (s *Store) current(ino uint64) uint64 {
	if ino == 0 {
		return 0 // no link: not two lookups that miss (one for each memory Info was asked about)
	}
	for n := 0; n < 64; n++ {
		if _, err := s.inode(ino); err == nil {
			return ino
		}
		var next uint64
		s.kv.View(func(t backend.Txn) error { next = s.successor(t, ino); return nil })
		if next == 0 {
			return ino
		}
		ino = next
	}
	return ino
}

// vacate notes that the memory ino left dir/name (renamed to a scratch
// name, or removed to the trash). Caller holds mu.
func (s *Store) vacate(dir uint64, name string, ino uint64) {
	if dp, err := s.Path(dir); err != nil || s.Ignored(path.Join(dp, name), false) {
		return // not a memory's name
	}
	now := s.now().UnixNano()
	// The notes in the order they were made: those older than the window
	// go from the front, each at most once (a removal is O(1), not a scan
	// of every note: a burst of removals would be quadratic).
	q := s.vacatedQ
	for len(q) > 0 && (now-q[0].at > int64(saveWindow) || len(q) >= vacatedMax) {
		if v, ok := s.vacated[q[0].k]; ok && v.at == q[0].at {
			delete(s.vacated, q[0].k)
		}
		q = q[1:]
	}
	k := entryName{dir, name}
	s.vacated[k] = vacancy{ino, now}
	s.vacatedQ = append(q, vacatedNote{k, now})
}

// vacatedNote is a note of Store.vacated in Store.vacatedQ.
type vacatedNote struct {
	k  entryName
	at int64
}

// vacatedMax bounds the notes kept (a clock that went back would keep
// them all): a save is a create at a name left a moment before, so the
// oldest of this many is long past any save.
const vacatedMax = 1 << 16

// reclaim returns the memory that left dir/name less than saveWindow ago
// and can go on in a file created there (nil if none), taking the note.
// Caller holds mu.
func (s *Store) reclaim(dir uint64, name string) (*Inode, *Record) {
	k := entryName{dir, name}
	v, ok := s.vacated[k]
	if !ok {
		return nil, nil
	}
	delete(s.vacated, k)
	dp, err := s.Path(dir)
	if err != nil || s.now().UnixNano()-v.at > int64(saveWindow) || s.Ignored(path.Join(dp, name), false) {
		return nil, nil
	}
	old, err := s.editable(v.ino)
	if err != nil || !old.IsReg() || len(old.Links) != 1 || !s.quiet(v.ino) {
		return nil, nil
	}
	rec, err := s.storedRecord(v.ino)
	if err != nil || rec.Successor != 0 || s.mayChange(v.ino) != nil {
		return nil, nil
	}
	if s.inTrash(old) {
		// From the trash only where the tree keeps versions: elsewhere
		// the trash is the only copy of the removed bytes.
		if m := s.Policy().UpdateMode(path.Join(dp, name)); m != policy.Versioned && m != policy.Append {
			return nil, nil
		}
	}
	return old, rec
}

// inTrash reports whether i sits in the trash.
func (s *Store) inTrash(i *Inode) bool {
	p, err := s.Path(i.Ino)
	return err == nil && strings.HasPrefix(p, TrashDir+"/")
}

// entryName names an entry.
type entryName struct {
	dir  uint64
	name string
}

// quietWait bounds how long a save waits for the memory it replaces to
// have no handle (the kernel releases a reader's handle after close
// returns) and no lingering passthrough session (ptLinger).
const quietWait = 200 * time.Millisecond

// beforeSave lets the handles of a memory that a rename of a fresh file
// is about to replace go first (sed -i has just read it): the save needs
// its committed bytes. Nothing waits for other renames.
func (s *Store) beforeSave(oldDir uint64, oldName string, newDir uint64, newName string) {
	src, smode, err := s.lookup(oldDir, oldName)
	if err != nil || smode&syscall.S_IFMT != syscall.S_IFREG {
		return
	}
	dst, dmode, err := s.lookup(newDir, newName)
	if err != nil || dmode&syscall.S_IFMT != syscall.S_IFREG || src == dst {
		return
	}
	si, err := s.Attr(src)
	if err != nil || s.now().UnixNano()-si.Btime >= int64(freshAge) {
		return
	}
	if di, err := s.Attr(dst); err == nil && di.Size > 0 {
		s.quieten(dst)
	}
}

// quieten waits, without store locks, until nothing holds ino open,
// ending a lingering passthrough session once it has lingered its time
// (hashNow). It gives up after quietWait; the save then checks quiet again
// under mu and, failing, is no save.
func (s *Store) quieten(ino uint64) {
	for end := time.Now().Add(quietWait); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		s.filesMu.Lock()
		w := s.writes[ino]
		s.filesMu.Unlock()
		switch {
		case w == nil:
			return
		case w.phase == phaseEnding:
			<-w.done
		case w.phase == phaseLingering:
			s.hashNow(ino) // ends it once ptLinger has passed
		}
	}
}

// peekVacancy is the memory that left dir/name a moment ago, if any.
func (s *Store) peekVacancy(dir uint64, name string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.vacated[entryName{dir, name}]; ok && s.now().UnixNano()-v.at <= int64(saveWindow) {
		return v.ino
	}
	return 0
}

// unsave is the first commit, with content sum, of a file a save by
// create continued a memory in (rec.SavedOver: handOver kept the bytes it
// replaced as version rec.Version): when it wrote back those very bytes
// the save changed nothing, and that version goes again (the commit
// deletes it, unsaved). It reports whether so.
func unsave(rec *Record, sum string) bool {
	same := rec.SavedOver != "" && sum != "" && sum == rec.SavedOver
	rec.SavedOver = ""
	return same
}

// dropVersion deletes version n of the memory of lineage l, in t.
func dropVersion(t backend.Txn, l uint64, n uint32) error {
	h, err := t.Get(backend.VersionKey(l, n))
	if errors.Is(err, backend.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var v Version
	if err := json.Unmarshal(h, &v); err != nil {
		return err
	}
	for off := uint64(0); off < v.Size; off += ChunkSize {
		if err := t.Delete(backend.VersionChunkKey(l, n, uint32(off/ChunkSize))); err != nil {
			return err
		}
	}
	return t.Delete(backend.VersionKey(l, n))
}
