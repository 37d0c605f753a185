package store

import (
	"encoding/binary"
	"errors"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store/internal/pack"
)

// Packs (package internal/pack): the store's side of them, which reads and
// changes inodes.

// PackStats is what the packs hold.
type PackStats = pack.Stats

// Packs sums the packs of the store.
func (s *Store) Packs() (PackStats, error) { return pack.Sum(s.kv) }

// PackTree packs the small files under the directory (or the file) ino,
// where compressing saves bytes (pack.Packer.PackTree).
func (s *Store) PackTree(ino uint64) error { return s.packer.PackTree(s.kv, ino, packHost{s}) }

// packedChunk is chunk 0 of a packed file, as the transaction sees it
// (the inode is read in t, so a pack committed after t began is not seen
// half-way); nil when the file is not packed.
func (s *Store) packedChunk(t backend.Txn, ino uint64) ([]byte, error) {
	v, err := t.Get(backend.InodeKey(ino))
	if err != nil {
		if errors.Is(err, backend.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	i, err := decodeInode(v)
	if err != nil || i.Pack == 0 {
		return nil, err
	}
	return s.packs.Member(t, ino, i.Pack, i.PackOff, i.Size)
}

// unpack puts a packed file's bytes back in a chunk before it changes.
// The stored inode is rewritten without its pack, not the cached one: the
// cache may already hold a change not yet committed (a truncate).
func (s *Store) unpack(ino uint64) error {
	if i, err := s.inode(ino); err != nil || !s.isPacked(i) {
		return err
	}
	s.mu.Lock()
	defer s.unlock()
	var id uint64
	err := s.kv.Update(func(t backend.Txn) error {
		v, err := t.Get(backend.InodeKey(ino))
		if err != nil {
			return err
		}
		stored, err := decodeInode(v)
		if err != nil || stored.Pack == 0 {
			return err
		}
		id = stored.Pack
		data, err := s.packedChunk(t, ino)
		if err != nil {
			return err
		}
		stored.Pack, stored.PackOff = 0, 0
		if err := t.Set(backend.ChunkKey(stored.chunkID(), 0), data); err != nil {
			return err
		}
		if err := t.Delete(backend.MemberKey(id, ino)); err != nil {
			return err
		}
		return putInode(t, stored)
	})
	if err != nil || id == 0 {
		return err
	}
	s.icMu.Lock() // in place, as sizes are: holders of the cached inode see it
	if c := s.inodes[ino]; c != nil {
		c.Pack, c.PackOff = 0, 0
	}
	s.icMu.Unlock()
	s.tails.Forget(ino)
	return s.dropPackIfEmpty(id)
}

func (s *Store) isPacked(i *Inode) bool {
	s.icMu.RLock()
	defer s.icMu.RUnlock()
	return i.Pack != 0
}

// dropPackIfEmpty deletes pack id once it has no member left.
func (s *Store) dropPackIfEmpty(id uint64) error { return s.packs.DropIfEmpty(s.kv, id) }

// packHost is the store as the packer sees it.
type packHost struct{ s *Store }

func (h packHost) Kids(ino uint64) ([]uint64, bool, error) {
	i, err := h.s.inode(ino)
	if err != nil || !i.IsDir() {
		return nil, false, err
	}
	var kids []uint64
	err = h.s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.DirentPrefix(ino), nil, false, func(_, v []byte) bool {
			if len(v) >= 8 {
				kids = append(kids, binary.BigEndian.Uint64(v))
			}
			return true
		})
	})
	return kids, true, err
}

func (h packHost) Candidate(ino uint64) (pack.File, bool) {
	s := h.s
	i, err := s.inode(ino)
	if err != nil || !s.packable(i) {
		return pack.File{}, false
	}
	// The record before the content: a commit in between changes
	// its version, which is checked again under the lock.
	rec, err := s.storedRecordLocked(ino)
	if err != nil {
		return pack.File{}, false
	}
	s.icMu.RLock()
	snap := *i
	s.icMu.RUnlock()
	return pack.File{Ino: ino, Size: snap.Size, ChunkID: snap.chunkID(), Mtime: snap.Mtime, Ctime: snap.Ctime,
		Version: rec.Version, SHA256: rec.SHA256}, true
}

func (h packHost) Content(t backend.Txn, f pack.File) ([]byte, error) {
	return h.s.chunk(t, nil, f.Ino, f.ChunkID, 0)
}

func (h packHost) Write(files []pack.File, write func(t backend.Txn, id uint64) error) error {
	s := h.s
	s.mu.Lock()
	defer s.unlock()
	eds := make([]*Inode, len(files))
	for k, f := range files {
		i, err := s.inode(f.Ino)
		if err != nil || !s.packable(i) || !s.sameContent(i, f) {
			return nil // changed meanwhile: packed by a later pass
		}
		if rec, err := s.storedRecord(f.Ino); err != nil || rec.Version != f.Version || rec.SHA256 != f.SHA256 {
			return nil // committed meanwhile (even at the same size and time)
		}
		if eds[k], err = s.editable(f.Ino); err != nil {
			return err
		}
		eds[k].PackOff = f.Off
	}
	id, err := pack.NextID(s.kv)
	if err != nil {
		return err
	}
	for _, i := range eds {
		i.Pack = id
	}
	err = s.update(func(t backend.Txn) error { return write(t, id) }, eds...)
	for _, i := range eds {
		s.tails.Forget(i.Ino)
	}
	return err
}

// packable reports whether i can join a pack. Caller holds mu.
func (s *Store) packable(i *Inode) bool {
	if s.openState(i.Ino) != nil {
		return false
	}
	s.icMu.RLock()
	defer s.icMu.RUnlock()
	return i.IsReg() && i.Size > 0 && i.Size < ChunkSize && i.Blob == 0 && i.Pack == 0 &&
		len(i.Links) == 1 // a hard-linked file may be live elsewhere: left alone
}

// sameContent reports whether i still has the content it had in f.
func (s *Store) sameContent(i *Inode, f pack.File) bool {
	s.icMu.RLock()
	defer s.icMu.RUnlock()
	return i.Size == f.Size && i.Mtime == f.Mtime && i.Ctime == f.Ctime && i.Pack == 0 && i.Blob == 0 && i.chunkID() == f.ChunkID
}
