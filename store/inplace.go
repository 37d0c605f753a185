package store

import (
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/policy"
)

// Rewrites in place. A change to committed bytes of a blob is normally
// made to a copy (copy on write, internal/blobfs), so that a crash never
// leaves a half-changed file and the old content can be kept as a version.
// For a large blob that keeps no version (a tree whose policy updates in
// place, or a file too large for versions) that copy, and the full rehash
// at each close, made every close cost the whole file: a program that
// changes a little of a large file through mmap and closes it, again and
// again, wrote and hashed gigabytes for megabytes. Such a blob is changed
// in place instead, as a disk changes a file:
//
//   - before the first change, the live mark (backend.LiveKey) is set, as
//     for a passthrough session: a crash leaves the blob as the writes left
//     it (part old, part new, as ext4 may without fsync), and the next
//     start takes its size and hash from what it holds (settle);
//   - a commit that cannot continue the running hash (the change was not
//     sequential) leaves the sha256 for later: the record says "" (reading
//     user.mnemofs.sha256 computes it at once);
//   - once the inode has had no open state for settleDelay, it is settled:
//     hashed when its hash was left, and the mark dropped. Store.Close
//     settles what is left.

const (
	// inPlaceMin: a committed blob this large or larger is rewritten in
	// place when no version of it is kept.
	inPlaceMin = 8 << 20
	// settleDelay: how long an inode rewritten in place stays unopened
	// before it is settled.
	settleDelay = time.Second
)

// overwriteInPlace reports whether a change to the committed bytes of f's
// blob goes to that blob itself (marked live first) rather than to a copy.
// Caller holds f.mu.
func (s *Store) overwriteInPlace(f *openFile) bool {
	if f.inPlace {
		return true
	}
	if f.committedSize < inPlaceMin || s.shared || s.versionKept(f) || s.blobs == nil || s.blobs.Keeping() {
		return false // (Keeping: a backup reads the committed generations)
	}
	s.filesMu.Lock()
	_, marked := s.unsettled[f.ino]
	s.filesMu.Unlock()
	if !marked {
		if err := s.kv.Update(func(t backend.Txn) error { return t.Set(backend.LiveKey(f.ino), nil) }); err != nil {
			return false // copied, as before
		}
		s.filesMu.Lock()
		if s.unsettled == nil {
			s.unsettled = map[uint64]time.Time{}
		}
		s.unsettled[f.ino] = time.Time{}
		s.filesMu.Unlock()
	}
	f.inPlace = true
	return true
}

// versionKept reports whether a commit of f that rewrites it would keep
// the committed content as a version (keepVersion decides the same).
// Caller holds f.mu.
func (s *Store) versionKept(f *openFile) bool {
	if f.committedSize == 0 || f.committedSize > versionMax {
		return false
	}
	rec, err := s.record(f.ino)
	if err != nil {
		return true // cannot tell: copy, as before
	}
	if rec.Version < 1 {
		return false
	}
	p, err := s.Path(f.ino)
	if err != nil || s.Ignored(p, false) {
		return false
	}
	m := s.Policy().UpdateMode(p)
	return m == policy.Versioned || m == policy.Append
}

// leftInPlace notes that the last handle of f, rewritten in place, is
// gone: its settling falls due settleDelay from now. Caller holds filesMu.
func (s *Store) leftInPlace(f *openFile) {
	if !f.inPlace {
		return
	}
	now := time.Now()
	if _, ok := s.unsettled[f.ino]; ok {
		s.unsettled[f.ino] = now
		s.schedule(now.Add(settleDelay), f.ino, dueSettle)
	}
}

// settleInPlace settles ino (rewritten in place) when it has had no open
// state for settleDelay, or schedules itself for when it will have.
func (s *Store) settleInPlace(ino uint64, now time.Time) {
	s.filesMu.Lock()
	left, ok := s.unsettled[ino]
	switch {
	case !ok || left.IsZero() || s.writes[ino] != nil:
		// Settled, or open again: its next release schedules it.
		s.filesMu.Unlock()
		return
	case now.Before(left.Add(settleDelay)):
		s.schedule(left.Add(settleDelay), ino, dueSettle)
		s.filesMu.Unlock()
		return
	}
	release := s.enterEndingLocked(ino)
	s.filesMu.Unlock()
	defer release()
	if err := s.settle(ino, true, false); err != nil {
		s.log.Printf("hashing inode %d, rewritten in place: %v (a start will)", ino, err)
	}
}

// settledInPlace notes that ino's live mark is gone. Caller may hold mu.
func (s *Store) settledInPlace(ino uint64) {
	s.filesMu.Lock()
	delete(s.unsettled, ino)
	s.filesMu.Unlock()
}

// settleAllInPlace settles every inode rewritten in place and not open
// (Close).
func (s *Store) settleAllInPlace() {
	s.filesMu.Lock()
	var inos []uint64
	for ino := range s.unsettled {
		inos = append(inos, ino)
	}
	s.filesMu.Unlock()
	for _, ino := range inos {
		if release := s.enterEnding(ino); release != nil {
			if err := s.settle(ino, true, false); err != nil {
				s.log.Printf("hashing inode %d, rewritten in place: %v (the next start will)", ino, err)
			}
			release()
		}
	}
}
