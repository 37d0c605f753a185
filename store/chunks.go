package store

import (
	"math"

	"github.com/mnemofs/mnemofs/backend"
)

// Dirty chunks written ahead of a commit (spill) and stored chunks a
// truncation cut off (dropStale).

// spill writes full dirty chunks ahead of the commit. Caller holds f.mu.
func (s *Store) spill(f *openFile) error {
	s.mu.Lock()
	defer s.unlock()
	if err := s.dropStale(f); err != nil {
		return err
	}
	b := s.kv.NewBatch()
	end := f.storedEnd
	for idx, c := range f.dirty {
		if len(c) == ChunkSize {
			if err := b.Set(backend.ChunkKey(f.ino, idx), c); err != nil {
				b.Cancel()
				return err
			}
			delete(f.dirty, idx)
			f.dirtyBytes -= ChunkSize
			end = max(end, uint64(idx+1)*ChunkSize)
		}
	}
	if err := b.Flush(); err != nil {
		return err
	}
	s.tails.Forget(f.ino)
	f.spilled = true
	f.storedEnd = end
	return nil
}

// dropStale deletes stored chunks past truncFloor that are not dirty.
// Caller holds f.mu and s.mu.
func (s *Store) dropStale(f *openFile) error {
	if f.truncFloor == math.MaxUint64 {
		return nil
	}
	s.tails.Forget(f.ino)
	first := uint32(f.truncFloor / ChunkSize)
	var stale [][]byte
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.ChunkPrefix(f.ino), backend.ChunkKey(f.ino, first), true, func(k, _ []byte) bool {
			if _, ok := f.dirty[backend.ChunkIndex(k)]; !ok {
				stale = append(stale, append([]byte(nil), k...))
			}
			return true
		})
	})
	if err != nil {
		return err
	}
	if err := backend.DeleteKeys(s.kv, stale); err != nil {
		return err
	}
	f.truncFloor = math.MaxUint64
	return nil
}
