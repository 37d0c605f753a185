package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/mnemofs/mnemofs/backend"
)

// Packs: how archived memories are stored compressed. When a pass archives
// a session, the small files under it (each below one chunk, closed, in the
// KV) are concatenated and compressed with zstd into one pack value; each
// member's inode names the pack and its offset, and its chunk is deleted.
// Compressing a session's turns together finds what they share (front
// matter keys, names, phrasing), which one small file alone cannot.
//
// A packed file reads like any other: chunk 0, when the KV has none, comes
// from the pack (decompressed packs are kept in a small LRU; packs never
// change, so it needs no invalidation; 16 packs of at most 4 MiB). The first write or truncate of a
// member unpacks it (its bytes go back to a chunk, in one transaction with
// the inode and its membership key), so nothing that writes ever sees a
// pack. A pack is deleted with its last member.

// packMax and packFiles bound one pack (and so its transaction and the
// time mu is held): more gets several.
const (
	packMax   = 4 << 20
	packFiles = 1000
)

var (
	zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
	zdec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
)

type packCache struct {
	once sync.Once
	c    *lru.Cache[uint64, []byte]
}

func (p *packCache) get() *lru.Cache[uint64, []byte] {
	p.once.Do(func() { p.c, _ = lru.New[uint64, []byte](16) })
	return p.c
}

// packed returns the raw content of pack id.
func (s *Store) packed(t backend.Txn, id uint64) ([]byte, error) {
	c := s.packs.get()
	if b, ok := c.Get(id); ok {
		return b, nil
	}
	v, err := t.Get(backend.PackKey(id))
	if err != nil {
		return nil, fmt.Errorf("pack %d: %w", id, err)
	}
	raw, n := binary.Uvarint(v)
	if n <= 0 || raw > packMax {
		return nil, fmt.Errorf("pack %d: corrupt header", id)
	}
	b, err := zdec.DecodeAll(v[n:], make([]byte, 0, raw))
	if err != nil || uint64(len(b)) != raw {
		return nil, fmt.Errorf("pack %d: corrupt (%v)", id, err)
	}
	c.Add(id, b)
	return b, nil
}

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
	b, err := s.packed(t, i.Pack)
	if err != nil {
		return nil, err
	}
	if i.PackOff+i.Size > uint64(len(b)) {
		return nil, fmt.Errorf("inode %d: pack %d holds %d bytes, not %d at %d", ino, i.Pack, len(b), i.Size, i.PackOff)
	}
	return b[i.PackOff : i.PackOff+i.Size : i.PackOff+i.Size], nil
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

// PackTree packs the small files under the directory (or the file) ino,
// where compressing saves bytes (which trees: package lifecycle, what a
// pass archived). The walk takes no lock; each pack is
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
		runtime.Gosched() // as between actions (maintain.go)
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
	for len(cands) > 0 && len(group) < packFiles {
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
	return cands, s.writePack(files, v)
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
			c, err := s.chunk(t, nil, i.Ino, 0)
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
			if err := t.Delete(backend.ChunkKey(i.Ino, 0)); err != nil {
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
		if err := t.Set(backend.ChunkKey(ino, 0), data); err != nil {
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
func (s *Store) dropPackIfEmpty(id uint64) error {
	return s.kv.Update(func(t backend.Txn) error {
		empty := true
		err := t.Scan(backend.MemberPrefix(id), nil, true, func(_, _ []byte) bool {
			empty = false
			return false
		})
		if err != nil || !empty {
			return err
		}
		s.packs.get().Remove(id)
		return t.Delete(backend.PackKey(id))
	})
}

// PackStats is what the packs hold: members, their raw bytes, and the
// compressed bytes stored for them.
type PackStats struct {
	Packs      int   `json:"packs"`
	Files      int   `json:"files"`
	RawBytes   int64 `json:"raw_bytes"`
	Compressed int64 `json:"compressed_bytes"`
}

// Packs sums the packs of the store.
func (s *Store) Packs() (PackStats, error) {
	var ps PackStats
	err := s.kv.View(func(t backend.Txn) error {
		err := t.Scan(backend.PackPrefix(), nil, false, func(_, v []byte) bool {
			raw, n := binary.Uvarint(v)
			if n > 0 {
				ps.Packs++
				ps.RawBytes += int64(raw)
				ps.Compressed += int64(len(v))
			}
			return true
		})
		if err != nil {
			return err
		}
		return t.Scan(backend.AllMembersPrefix(), nil, true, func(_, _ []byte) bool {
			ps.Files++
			return true
		})
	})
	return ps, err
}
