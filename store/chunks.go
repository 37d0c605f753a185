package store

import (
	"math"

	"github.com/mnemofs/mnemofs/backend"
)

// Dirty chunks written ahead of a commit (spill) and stored chunks a
// truncation cut off (staleKeys).

// spill writes full dirty chunks ahead of the commit: to f's stage
// (stage.go), or, for an append on a store of one host, in place past the
// committed bytes. Caller holds f.mu.
func (s *Store) spill(f *openFile) error {
	id := f.stage
	if id == 0 && s.stages(f) {
		s.mu.Lock()
		err := s.newStage(f)
		s.unlock()
		if err != nil {
			return err
		}
		id = f.stage
	} else if id == 0 {
		var err error
		if id, err = s.chunkIDOf(f.ino); err != nil {
			return err
		}
	}
	b := s.kv.NewBatch()
	end := f.storedEnd
	var done []uint32
	for idx, c := range f.dirty {
		if len(c) == ChunkSize {
			if err := b.Set(backend.ChunkKey(id, idx), c); err != nil {
				b.Cancel()
				return err
			}
			done = append(done, idx)
		}
	}
	if err := b.Flush(); err != nil {
		return err
	}
	for _, idx := range done {
		if f.stage != 0 {
			f.staged[idx] = true
		}
		delete(f.dirty, idx)
		f.dirtyBytes -= ChunkSize
		end = max(end, uint64(idx+1)*ChunkSize)
	}
	s.tails.Forget(f.ino)
	f.spilled = true
	f.storedEnd = end
	return nil
}

// chunkIDOf is the chunk id of ino's committed content (Inode.chunkID).
func (s *Store) chunkIDOf(ino uint64) (uint64, error) {
	i, err := s.inode(ino)
	if err != nil {
		return 0, err
	}
	s.icMu.RLock()
	defer s.icMu.RUnlock()
	return i.chunkID(), nil
}

// staleKeys lists the committed chunks (chunk id id) past truncFloor that
// are not dirty: a commit that is not staged deletes them in its
// transaction. Caller holds f.mu.
func (s *Store) staleKeys(f *openFile, id uint64) ([][]byte, error) {
	if f.truncFloor == math.MaxUint64 {
		return nil, nil
	}
	s.tails.Forget(f.ino)
	first := uint32(f.truncFloor / ChunkSize)
	var stale [][]byte
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.ChunkPrefix(id), backend.ChunkKey(id, first), true, func(k, _ []byte) bool {
			if _, ok := f.dirty[backend.ChunkIndex(k)]; !ok {
				stale = append(stale, append([]byte(nil), k...))
			}
			return true
		})
	})
	return stale, err
}
