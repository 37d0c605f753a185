package store

import (
	"errors"
	"math"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/memory"
)

// commit stores the dirty state of f with its metadata in one transaction
// and then tells the change handler; commitUnless, unless skip (called
// with f.mu held) says to leave f as it is.
func (s *Store) commit(f *openFile) error { return s.commitUnless(f, nil) }

func (s *Store) commitUnless(f *openFile, skip func() bool) error {
	f.mu.Lock()
	if skip != nil && skip() {
		f.mu.Unlock()
		return nil
	}
	masked, err := s.maskLocked(f)
	var ev []Change
	if err == nil {
		ev, err = s.commitRebasing(f)
	}
	refused := errors.Is(err, backend.ErrUnavailable) && f.modified && (!f.spilled || f.stage != 0) && f.blob == nil
	if refused {
		// The backend does not answer (a shared store's cluster is down):
		// the writes are refused, now, not at the last close, so that no
		// reader (nor the kernel's pages) sees what was never stored. (A
		// stage holds none of the committed content: stage.go.)
		s.restart(f, f.committedSize)
	}
	if lost := errors.Is(err, errStageLost) || errors.Is(err, errBaseGone); lost {
		// What this rewrite did not change, or what it wrote ahead, is
		// gone (stage.go): it cannot be committed; the file is the
		// store's (another host's) version.
		if i, ierr := s.inode(f.ino); ierr == nil {
			s.icMu.RLock()
			size := i.Size
			s.icMu.RUnlock()
			s.restart(f, size)
			refused = true
		}
	}
	committed := f.committedSize
	f.mu.Unlock()
	s.deliver(ev)
	if refused {
		s.revertUncommitted(f.ino, committed)
	}
	if masked && s.opts.Notify != nil {
		s.opts.Notify.Content(f.ino) // the kernel's pages hold what was written
	}
	return err
}

// A commit in three steps (commitLocked):
//
//  1. plan, outside s.mu: hash and parse what the file holds now (reads see
//     the dirty chunks through f), learn what a log's new lines name, give
//     a passthrough session's unnamed file its place (commitPlan);
//  2. under s.mu: the record and the inode as they will be, the version
//     the policy keeps, the chunks to write and drop (commitWrite), written
//     by one transaction body (commitWrite.apply) in one transaction, or,
//     when that is too big for the engine or the dirty data was spilled, as
//     a staged rewrite (stage.go): the content under a fresh chunk id in a
//     batch, then the same body's later parts;
//  3. install: the caches and the open state take the committed state.

// commitPlan is what a commit computes before it takes s.mu.
type commitPlan struct {
	size      uint64
	name      string
	keepMeta  bool   // an append that cannot change the metadata
	sum       string // sha256; "" when too large to hash or left to the session's end
	state     []byte // the hash state (large files)
	head      []byte // the first bytes, to parse
	lines     *lineScan
	toKV      bool   // a session's small unnamed file goes into the KV
	mark      bool   // the commit sets the live mark (passthrough.go)
	from      uint64 // an append: nothing before this changed
	sess      *ptSession
	unlinked  bool // nothing to keep
	orphan    bool // unlinked, the inode still there
	unchanged bool // nothing to commit
}

// commitWrite is the writes of one commit.
type commitWrite struct {
	ino      uint64
	id       uint64 // the chunk id the content is committed under (Inode.chunkID)
	size     uint64
	dirty    map[uint32][]byte
	drop     [][]byte // chunk keys to delete (not those just written)
	version  []byte   // the replaced content to keep as a version, or nil
	keep     bool
	unsaved  bool // a save wrote back what it replaced: drop the version it kept (saves.go)
	prevRec  Record
	mark     bool
	snapshot *Inode
	rec      *Record
	now      int64
	// base, on a shared store, is the size an append-only commit
	// continues: the commit fails with errRebase if the stored file has
	// another size (rebase.go).
	base *uint64
	// shared: the store is shared (checkStored); staged: written as a
	// staged rewrite, which checks the stored inode itself (stage.go).
	shared, staged bool
}

// commitParts names the parts of a commit's writes.
type commitParts uint8

const (
	partChunks      commitParts = 1 << iota // the dirty chunks, and the drop of stale ones
	partVersion                             // the version the policy keeps
	partMeta                                // the inode, the record, the live mark
	partVersionHead                         // the version's record, its content already written
	partAll         = partChunks | partVersion | partMeta
)

// apply writes the parts of w in t.
func (w *commitWrite) apply(t backend.Txn, parts commitParts) error {
	if parts&partChunks != 0 {
		for idx, c := range w.dirty {
			if err := t.Set(backend.ChunkKey(w.id, idx), c); err != nil {
				return err
			}
		}
		for _, k := range w.drop {
			if _, ok := w.dirty[backend.ChunkIndex(k)]; ok {
				continue // just written
			}
			if err := t.Delete(k); err != nil {
				return err
			}
		}
	}
	if parts&(partVersion|partVersionHead) != 0 && w.keep {
		if err := putVersion(t, w.snapshot, &w.prevRec, w.version, w.now, parts&partVersion != 0); err != nil {
			return err
		}
	}
	if parts&partMeta != 0 {
		stored, err := w.checkStored(t)
		if err != nil {
			return err
		}
		if stored != nil {
			w.snapshot.takeMeta(stored)
		}
		if w.mark {
			if err := t.Set(backend.LiveKey(w.ino), nil); err != nil {
				return err
			}
		}
		if err := putInode(t, w.snapshot); err != nil {
			return err
		}
		if w.unsaved {
			if err := dropVersion(t, w.rec.lineage(w.ino), uint32(w.rec.Version)); err != nil {
				return err
			}
		}
		return putRecord(t, w.ino, w.rec)
	}
	return nil
}

// commitLocked is commit with f.mu held; it returns the events to deliver.
func (s *Store) commitLocked(f *openFile) (ev []Change, err error) {
	p, err := s.planCommit(f)
	if err != nil || p.unchanged {
		return nil, err
	}
	if p.unlinked {
		if p.orphan && s.stillOpen(f) {
			// Unlinked, or never named (O_TMPFILE), and still open: what
			// it holds stays readable through its handles, and is
			// committed if a link names it (tmpfile.go).
			return nil, nil
		}
		f.modified, f.dirty, f.dirtyBytes = false, nil, 0
		s.endStage(f, true)
		return nil, nil
	}
	if f.blob != nil && f.blobGen != 0 {
		// The record about to point at this blob must not become durable
		// before its data (durable.go). Taken before mu: a sync holding
		// the barrier stalls only commits of blobs.
		defer s.blobs.PointAt(f.ino, f.blobGen)()
	}
	s.mu.Lock()
	defer func() { ev = s.unlockKeep() }()
	w, err := s.prepareWrite(f, &p)
	if err != nil {
		return nil, err
	}
	err = s.writeCommit(f, w)
	if errors.Is(err, errGone) {
		f.modified, f.dirty, f.dirtyBytes = false, nil, 0
		s.endStage(f, true)
		return nil, nil
	}
	if err != nil {
		if errors.Is(err, backend.ErrUnavailable) {
			// Nothing was written (a shared store's cluster is down): the
			// record as it was stays readable from the cache.
			s.recs.Set(w.ino, w.prevRec)
		} else {
			s.recs.Forget(w.ino)
		}
		if errors.Is(err, backend.ErrOutcomeUnknown) || errors.Is(err, errStageLost) || errors.Is(err, errBaseGone) {
			s.forget(w.ino) // the store has the commit or not, or another host's version: ask it
		}
		return nil, err
	}
	s.installCommit(f, &p, w)
	return nil, nil
}

// planCommit is step 1: what the file holds now. Caller holds f.mu.
func (s *Store) planCommit(f *openFile) (commitPlan, error) {
	s.ptSync(f)
	if !f.modified {
		return commitPlan{unchanged: true}, nil
	}
	i, err := s.inode(f.ino)
	if errors.Is(err, syscall.ENOENT) || (err == nil && len(i.Links) == 0) {
		// Removed (a deferred commit of a file unlinked after its last
		// close finds it gone): nothing to keep.
		return commitPlan{unlinked: true, orphan: err == nil}, nil
	}
	if err != nil {
		return commitPlan{}, err
	}
	var p commitPlan
	s.icMu.RLock()
	p.size, p.name = i.Size, i.Links[0].Name
	s.icMu.RUnlock()
	// An append after closed front matter cannot change the metadata:
	// keep it, and do not read the file back to parse it.
	p.keepMeta = f.appendOnly && f.committedSize > 0 && (f.settled || !memory.HasMetadata(p.name))
	p.sess = f.sess.Load()
	sequential := f.hash != nil && f.hashPos == p.size
	switch {
	case p.sess != nil && p.size > ptHashInline && !f.appendOnly:
		// Hashed when the passthrough session is settled.
	case f.inPlace && p.size > ptHashInline && !sequential:
		// Hashed when the inode is settled (inplace.go).
	default:
		if p.sum, p.state, p.head, err = s.digest(f, p.size, p.name, p.keepMeta); err != nil {
			return p, err
		}
	}
	if isLogName(p.name) {
		// What its lines name (loglines.go): from where the last scan
		// ended when this is an append, else from the start.
		from := uint64(0)
		// (The scan ended at the last newline: an unfinished line is
		// read again from its start, and its users, once finished, are
		// added to those it named unfinished.)
		if r, err := s.storedRecord(f.ino); err == nil && f.appendOnly && r.LinesAt <= f.committedSize && !r.LinesUnknown {
			from = r.LinesAt
		}
		sc := s.scanLines(f, p.name, from, p.size)
		p.lines = &sc
	}
	if p.toKV, err = s.ptCommitTemp(f, i, p.size); err != nil {
		return p, err
	}
	// The kernel may change the committed blob after this commit, or its
	// hash is left for later: the live mark says so (passthrough.go).
	// (Appends in place are marked too: a close may defer its commit.)
	p.mark = p.sess != nil && !p.sess.marked && !p.toKV
	if f.appendOnly {
		p.from = f.committedSize
	}
	return p, nil
}

// prepareWrite is step 2: the record, inode, version and chunks the
// commit writes. Caller holds f.mu and s.mu.
func (s *Store) prepareWrite(f *openFile, p *commitPlan) (*commitWrite, error) {
	// A rename or chmod while we hashed installed a new inode in the
	// cache: commit on top of that one, not the one read before.
	i, err := s.inode(f.ino)
	if err != nil {
		return nil, err
	}
	rec, err := s.storedRecord(f.ino)
	if err != nil {
		return nil, err
	}
	w := &commitWrite{ino: f.ino, size: p.size, dirty: f.dirty, mark: p.mark, rec: rec, prevRec: *rec, now: s.now().UnixNano(), shared: s.shared}
	if s.shared && f.appendOnly {
		w.base = &f.committedSize
	}
	changed := rec.SHA256 != p.sum || p.sum == "" // "": too large to hash, so assume so
	if rec.SavedOver != "" && unsave(rec, p.sum) {
		// A save wrote back what it replaced: the version it kept goes.
		w.unsaved, changed = true, false
		rec.SHA256 = p.sum
	} else if f.rehash && rec.SHA256 == "" && p.sum != "" {
		// The hash a commit left for later (settle): the content is the
		// one that commit made its version of.
		changed = false
		rec.SHA256 = p.sum
	}
	if changed {
		// The content it replaces, when the policy keeps versions.
		if w.version, w.keep, err = s.keepVersion(f, i, &w.prevRec); err != nil {
			return nil, err
		}
	}
	if !p.keepMeta {
		pr := memory.Parse(p.name, p.head)
		if p.head == nil && p.size > headMax && memory.HasMetadata(p.name) {
			pre := make([]byte, 64)
			n, _ := s.readLocked(f.ino, f, pre, 0)
			pr = memory.ParseLarge(p.name, pre[:n])
		}
		rec.applyParse(pr)
		if !s.isInternal(f.ino) {
			s.claim(rec) // the store's user wrote it, not maintenance
		}
		rec.RelatedInos = s.resolveRelated(f.ino, rec.Meta.Related)
	}
	if p.lines != nil {
		rec.applyLines(*p.lines)
	}
	rec.HashState, rec.HashSize = p.state, p.size
	if changed {
		rec.SHA256 = p.sum
		rec.Version++
		rec.Cold, rec.DuplicateOf = false, 0 // what maintenance marked was the old content
		s.icMu.RLock()
		rec.Modified = i.Mtime
		s.icMu.RUnlock()
	}
	s.icMu.RLock()
	w.snapshot = i.clone()
	s.icMu.RUnlock()
	w.id = w.snapshot.chunkID()
	if f.blob != nil {
		w.snapshot.Blob = f.blobGen
	}
	if w.drop, err = s.blobCommitKeys(f); err != nil {
		return nil, err
	}
	if f.stage == 0 {
		stale, err := s.staleKeys(f, w.id)
		if err != nil {
			return nil, err
		}
		w.drop = append(w.drop, stale...)
	}
	return w, nil
}

// writeCommit writes w: in one transaction, or as a staged rewrite
// (stage.go) when f's dirty data was spilled to a stage or the one
// transaction is too big for the engine. An append too big on a store of
// one host writes its chunks in place instead, in a batch first (past the
// committed bytes: harmless if the rest fails), then the version's record,
// the inode and the record in one transaction; the chunks the inode no
// longer points at go last. Caller holds f.mu and s.mu.
func (s *Store) writeCommit(f *openFile, w *commitWrite) error {
	if f.stage != 0 {
		return s.writeStaged(f, w)
	}
	err := s.kv.Update(func(t backend.Txn) error { return w.apply(t, partAll) })
	if errors.Is(err, errRestage) {
		return s.writeStaged(f, w)
	}
	if !errors.Is(err, backend.ErrTxnTooBig) {
		return err
	}
	if s.stages(f) && f.blob == nil {
		return s.writeStaged(f, w)
	}
	b := s.kv.NewBatch()
	for idx, c := range w.dirty {
		if err := b.Set(backend.ChunkKey(w.id, idx), c); err != nil {
			b.Cancel()
			return err
		}
	}
	if w.keep {
		if err := putVersionChunks(b, w.snapshot, &w.prevRec, w.version); err != nil {
			b.Cancel()
			return err
		}
	}
	if err := b.Flush(); err != nil {
		return err
	}
	if err := s.kv.Update(func(t backend.Txn) error { return w.apply(t, partVersionHead|partMeta) }); err != nil {
		return err
	}
	// The inode points at its blob now: the chunks can go.
	return s.deleteKeys(w.drop)
}

// installCommit is step 3: the caches and f take the committed state.
// Caller holds f.mu and s.mu.
func (s *Store) installCommit(f *openFile, p *commitPlan, w *commitWrite) {
	s.recs.Set(w.ino, *w.rec)
	if w.shared {
		s.icMu.Lock()
		if i := s.inodes[w.ino]; i != nil && !sameMeta(i, w.snapshot) {
			i.takeMeta(w.snapshot) // another host's rename or chmod
		}
		s.icMu.Unlock()
	}
	if sess := p.sess; sess != nil {
		sess.marked = sess.marked || p.mark
		sess.appends = sess.writers == 0
		sess.lastCommit, sess.deferred = time.Now(), false
	}
	s.blobCommitted(f)
	s.keepTail(f, p.size, w.rec, p.state)
	f.dirty, f.dirtyBytes, f.modified, f.appendOnly, f.spilled = nil, 0, false, true, false
	f.committedSize, f.storedEnd, f.truncFloor = p.size, p.size, math.MaxUint64
	s.eventFrom(w.ino, p.from)
}
