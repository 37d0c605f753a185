package store

import (
	"encoding/binary"
	"errors"
	"runtime"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// Packing: the writing of packs (the format and the reading of packed
// content: pack.go). A tree is walked without a lock, its candidates read
// and compressed without one, and each pack written under mu after its
// members are checked unchanged.

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

// PackTree packs the small files under the directory (or the file) ino,
// where compressing saves bytes (which trees is package lifecycle's
// choice: what a pass archived). The walk takes no lock; each pack is
// written under mu on its own, its members checked again there, so that
// writers wait for one pack at most.
func (s *Store) PackTree(ino uint64) error {
	var cands []uint64
	var walk func(ino uint64) error
	walk = func(ino uint64) error {
		i, err := s.inode(ino)
		if err != nil {
			return err
		}
		if !i.IsDir() {
			cands = append(cands, ino)
			return nil
		}
		var kids []uint64
		err = s.kv.View(func(t backend.Txn) error {
			return t.Scan(backend.DirentPrefix(ino), nil, false, func(_, v []byte) bool {
				if len(v) >= 8 {
					kids = append(kids, binary.BigEndian.Uint64(v))
				}
				return true
			})
		})
		for _, k := range kids {
			if err == nil {
				if err = walk(k); errors.Is(err, syscall.ENOENT) {
					err = nil // removed since the scan
				}
			}
		}
		return err
	}
	if err := walk(ino); err != nil {
		return err
	}
	for len(cands) > 0 {
		runtime.Gosched() // as between a pass's actions (lifecycle/maintain.go)
		var err error
		if cands, err = s.packSome(cands); err != nil {
			return err
		}
	}
	return nil
}

// packSome packs the first candidates that can be packed, up to packMax
// bytes or packFiles files, and returns the rest. The members are read and
// compressed without a lock; under mu they are checked to be unchanged
// (else the group waits for a later pass) and the pack is written.
func (s *Store) packSome(cands []uint64) ([]uint64, error) {
	var group []Inode // snapshots
	var vers []recVersion
	raw := uint64(0)
	limit := packFiles
	if l := int(s.packLimit.Load()); l > 0 {
		limit = l
	}
	all := cands
	for len(cands) > 0 && len(group) < limit {
		i, err := s.inode(cands[0])
		if err != nil || !s.packable(i) {
			cands = cands[1:] // gone or changed since the walk
			continue
		}
		// The record before the content: a commit in between changes
		// its version, which is checked again under the lock.
		rec, err := s.storedRecordLocked(cands[0])
		if err != nil {
			cands = cands[1:]
			continue
		}
		s.icMu.RLock()
		snap := *i
		s.icMu.RUnlock()
		if raw+snap.Size > packMax {
			break
		}
		raw += snap.Size
		group, cands = append(group, snap), cands[1:]
		vers = append(vers, recVersion{rec.Version, rec.SHA256})
	}
	if len(group) == 0 {
		return cands, nil
	}
	v, offs, err := s.compressFiles(group)
	if err != nil || v == nil {
		return cands, err
	}
	s.mu.Lock()
	defer s.unlock()
	files := make([]*Inode, len(group))
	for k, snap := range group {
		i, err := s.inode(snap.Ino)
		if err != nil || !s.packable(i) || !s.sameContent(i, &snap) {
			return cands, nil // changed meanwhile: packed by a later pass
		}
		if rec, err := s.storedRecord(snap.Ino); err != nil || (recVersion{rec.Version, rec.SHA256}) != vers[k] {
			return cands, nil // committed meanwhile (even at the same size and time)
		}
		if files[k], err = s.editable(snap.Ino); err != nil {
			return nil, err
		}
		files[k].PackOff = offs[k]
	}
	err = s.writePack(files, v)
	if errors.Is(err, backend.ErrTxnTooBig) && len(files) > 1 {
		// The engine's transactions are smaller (etcd: 128 operations,
		// three a member): smaller packs from now on, this group again.
		s.packLimit.Store(int32(len(files) / 2))
		return all, nil
	}
	return cands, err
}

// recVersion identifies a committed content: every commit that changes
// the bytes bumps the version.
type recVersion struct {
	version int
	sha     string
}

// storedRecordLocked is storedRecord taking mu.
func (s *Store) storedRecordLocked(ino uint64) (*Record, error) {
	s.mu.Lock()
	defer s.unlock()
	return s.storedRecord(ino)
}

// sameContent reports whether i still has the content it had in snap.
func (s *Store) sameContent(i, snap *Inode) bool {
	s.icMu.RLock()
	defer s.icMu.RUnlock()
	return i.Size == snap.Size && i.Mtime == snap.Mtime && i.Ctime == snap.Ctime && i.Pack == 0 && i.Blob == 0
}

// compressFiles reads the files and returns the pack value and each one's
// offset; a nil value when compressing saves nothing (a tiny file alone).
func (s *Store) compressFiles(files []Inode) ([]byte, []uint64, error) {
	var raw []byte
	offs := make([]uint64, len(files))
	err := s.kv.View(func(t backend.Txn) error {
		for k, i := range files {
			c, err := s.chunk(t, nil, i.Ino, i.chunkID(), 0)
			if err != nil {
				return err
			}
			offs[k] = uint64(len(raw))
			n := min(uint64(len(c)), i.Size)
			raw = append(raw, c[:n]...)
			raw = append(raw, make([]byte, i.Size-n)...)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	v := binary.AppendUvarint(nil, uint64(len(raw)))
	v = zenc.EncodeAll(raw, v)
	if len(v) >= len(raw) {
		return nil, nil, nil
	}
	return v, offs, nil
}

// writePack stores pack value v for the files (editable copies with their
// offsets set). Caller holds mu.
func (s *Store) writePack(files []*Inode, v []byte) error {
	id, err := s.nextPack()
	if err != nil {
		return err
	}
	for _, i := range files {
		i.Pack = id
	}
	err = s.update(func(t backend.Txn) error {
		if err := t.Set(backend.PackKey(id), v); err != nil {
			return err
		}
		for _, i := range files {
			if err := t.Set(backend.MemberKey(id, i.Ino), nil); err != nil {
				return err
			}
			if err := t.Delete(backend.ChunkKey(i.chunkID(), 0)); err != nil {
				return err
			}
		}
		return nil
	}, files...)
	for _, i := range files {
		s.tails.Forget(i.Ino)
	}
	return err
}

// nextPack allocates a pack id. Caller holds mu.
func (s *Store) nextPack() (uint64, error) {
	var id uint64
	err := s.kv.Update(func(t backend.Txn) error {
		id = 1
		if v, err := t.Get(backend.StoreKey("nextpack")); err == nil && len(v) == 8 {
			id = binary.BigEndian.Uint64(v)
		} else if err != nil && !errors.Is(err, backend.ErrNotFound) {
			return err
		}
		return t.Set(backend.StoreKey("nextpack"), binary.BigEndian.AppendUint64(nil, id+1))
	})
	return id, err
}
