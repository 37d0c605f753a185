package store

import (
	"errors"
	"math"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

// Staged rewrites. A change of a file's content that cannot be one
// transaction of the engine (etcd: 128 operations and 1.5 MiB a request),
// or whose dirty data outgrew spillBytes before the commit, must not write
// the file's chunks in place: a crash between writing them and committing
// the inode would leave a mix of the two contents. Its chunks go instead
// under a fresh chunk id, a stage, numbered from the inode counter; one
// small transaction then points the inode at it (Inode.Content) and marks
// the old chunk set garbage, and the old chunks are deleted afterwards.
//
//	first spill, or too big:  g<s> = "s"+host, then c<s,0..n> (batch)
//	the commit (one txn):     i<ino>.Content = s, delete g<s>, g<old> = "x"+now
//	then:                     delete c<old,…>, g<old> (a shared store: after
//	                          garbageGrace, by the sweep: another host may
//	                          still be reading them)
//	the commit refused, or rebased onto another host's appends: the stage
//	is dropped (dropChunkSet), or left to the sweep if that fails too
//
// The marker g<s> is written before the stage's first chunk, so that fsck
// and the other hosts leave a stage alone while it is written. What a crash
// leaves (a stage of a host that is gone; every stage, at the start of a
// store of one host) and garbage are collected by sweepStages: at start,
// and on a shared store every sweepEvery. fsck reports and removes chunk
// sets that nothing points at and nothing marks.
//
// An append (nothing before the committed size changed) on a store of one
// host writes its chunks in place instead: the bytes a reader of the
// committed size sees do not change, so no crash can mix them. On a shared
// store other hosts append at the same offsets, so appends stage too.

// garbageGrace is how long a shared store keeps the chunks a staged
// rewrite replaced (Store.grace): a read on another host that began before
// it saw the new inode finishes within it.
const garbageGrace = 30 * time.Second

const (
	stageWriting    = 's'
	stageGarbage    = 'x'
	stageCollecting = 'c'
)

// errBaseGone: another host's staged rewrite replaced the content this
// rewrite began from, and it was collected before this one committed: the
// bytes it did not change are gone (the commit fails; EIO).
var errBaseGone = errors.New("store: the content a rewrite began from was replaced by another host and collected")

// errStageLost: the marker of a stage was removed while it was written
// (fsck --repair on a host that took it for a crashed one).
var errStageLost = errors.New("store: the staged content of a rewrite was removed before its commit")

// stages reports whether f's next spill or oversized commit stages.
// Caller holds f.mu.
func (s *Store) stages(f *openFile) bool {
	return f.stage != 0 || s.shared || !f.appendOnly || f.truncFloor != math.MaxUint64
}

// newStage gives f a stage. Caller holds f.mu and s.mu.
func (s *Store) newStage(f *openFile) error {
	id, err := s.allocIno()
	if err != nil {
		return err
	}
	err = s.kv.Update(func(t backend.Txn) error {
		return t.Set(backend.StageKey(id), append([]byte{stageWriting}, s.hostID...))
	})
	if err != nil {
		return err
	}
	s.stageMu.Lock()
	s.stageLive[id] = true
	s.stageMu.Unlock()
	f.stage, f.staged = id, map[uint32]bool{}
	return nil
}

// endStage forgets f's stage: committed (the inode points at it) or
// dropped. Caller holds f.mu.
func (s *Store) endStage(f *openFile, drop bool) {
	id := f.stage
	if id == 0 {
		return
	}
	f.stage, f.staged = 0, nil
	if drop {
		if err := s.dropChunkSet(id); err != nil && !errors.Is(err, backend.ErrUnavailable) {
			s.log.Printf("dropping the staged content %d of inode %d: %v (left for the next sweep)", id, f.ino, err)
		}
	}
	s.stageMu.Lock()
	delete(s.stageLive, id)
	s.stageMu.Unlock()
}

// writeStaged writes the commit w of f as a staged rewrite. Caller holds
// f.mu and s.mu.
func (s *Store) writeStaged(f *openFile, w *commitWrite) error {
	old := w.snapshot.chunkID()
	if f.stage != 0 && f.stage == old {
		// A commit whose answer was lost did switch to this stage: what it
		// holds is committed, and the next one needs a stage of its own.
		s.endStage(f, false)
	}
	if f.stage == 0 {
		if err := s.newStage(f); err != nil {
			return err
		}
	}
	b := s.kv.NewBatch()
	fail := func(err error) error { b.Cancel(); return err }
	for idx, c := range w.dirty {
		if err := b.Set(backend.ChunkKey(f.stage, idx), c); err != nil {
			return fail(err)
		}
	}
	if err := s.copyCommitted(f, w, old, b); err != nil {
		return fail(err)
	}
	if w.keep {
		if err := putVersionChunks(b, w.snapshot, &w.prevRec, w.version); err != nil {
			return fail(err)
		}
	}
	if err := b.Flush(); err != nil {
		return err
	}
	stage := f.stage
	w.snapshot.Content, w.staged = stage, true
	err := s.kv.Update(func(t backend.Txn) error {
		if m, err := getMark(t, stage); err != nil {
			return err
		} else if m == nil || m.state != stageWriting {
			return errStageLost
		}
		if err := t.Delete(backend.StageKey(stage)); err != nil {
			return err
		}
		gone := []uint64{old}
		if cur, err := storedInode(t, w.ino); err != nil {
			return err
		} else if cur != nil && cur.chunkID() != old {
			// Another host's staged rewrite committed since this host's
			// view: its content is replaced too, and the view's must
			// still be there, to be copied from.
			if m, err := getMark(t, old); err != nil {
				return err
			} else if m == nil || m.state != stageGarbage {
				return errBaseGone
			}
			if cur.chunkID() != stage {
				gone = append(gone, cur.chunkID())
			}
		}
		for _, id := range gone {
			if err := t.Set(backend.StageKey(id), garbageMark(s.now(), w.ino)); err != nil {
				return err
			}
		}
		return w.apply(t, partVersionHead|partMeta)
	})
	if errors.Is(err, errStageLost) || errors.Is(err, errBaseGone) {
		s.endStage(f, true)
	}
	if err != nil {
		return err
	}
	s.icMu.Lock()
	if i := s.inodes[f.ino]; i != nil {
		i.Content = stage
	}
	s.icMu.Unlock()
	s.endStage(f, false)
	s.tails.Forget(f.ino)
	if !s.shared {
		// No reader of the old chunks is left: the commit held f.mu.
		if err := s.dropChunkSet(old); err != nil {
			s.log.Printf("deleting the replaced content of inode %d: %v (left for the next start)", f.ino, err)
		}
	}
	return nil
}

// copyCommitted adds to b, under f's stage, the committed chunks of f
// (chunk id old) that the new content of w.size bytes keeps: those neither
// dirty, nor staged, nor cut off by a truncation.
func (s *Store) copyCommitted(f *openFile, w *commitWrite, old uint64, b backend.Batch) error {
	var idxs []uint32
	for idx := uint32(0); uint64(idx)*ChunkSize < w.size; idx++ {
		if _, ok := w.dirty[idx]; ok || f.staged[idx] || uint64(idx)*ChunkSize >= f.truncFloor {
			continue
		}
		idxs = append(idxs, idx)
	}
	const group = 32 // chunks read a transaction: well within a request
	for len(idxs) > 0 {
		n := min(group, len(idxs))
		err := s.kv.View(func(t backend.Txn) error {
			for _, idx := range idxs[:n] {
				c, err := s.chunk(t, nil, f.ino, old, idx)
				if err != nil {
					return err
				}
				if len(c) > 0 {
					if err := b.Set(backend.ChunkKey(f.stage, idx), c); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		idxs = idxs[n:]
	}
	return nil
}

// dropChunkSet deletes the chunks of id, then its marker.
func (s *Store) dropChunkSet(id uint64) error {
	if err := backend.DeletePrefix(s.kv, backend.ChunkPrefix(id)); err != nil {
		return err
	}
	return s.kvDelete(backend.StageKey(id))
}
