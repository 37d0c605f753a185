package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

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
