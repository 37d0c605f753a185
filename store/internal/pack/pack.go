package pack

import (
	"encoding/binary"
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

// MaxBytes and MaxFiles bound one pack (and so its transaction and the
// time the namespace lock is held): more gets several.
const (
	MaxBytes = 4 << 20
	MaxFiles = 1000
)

var (
	zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
	zdec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
)

// Cache keeps decompressed packs. Its zero value is ready.
type Cache struct {
	once sync.Once
	c    *lru.Cache[uint64, []byte]
}

func (p *Cache) get() *lru.Cache[uint64, []byte] {
	p.once.Do(func() { p.c, _ = lru.New[uint64, []byte](16) })
	return p.c
}

// Packed returns the raw content of pack id.
func (p *Cache) Packed(t backend.Txn, id uint64) ([]byte, error) {
	c := p.get()
	if b, ok := c.Get(id); ok {
		return b, nil
	}
	v, err := t.Get(backend.PackKey(id))
	if err != nil {
		return nil, fmt.Errorf("pack %d: %w", id, err)
	}
	raw, n := binary.Uvarint(v)
	if n <= 0 || raw > MaxBytes {
		return nil, fmt.Errorf("pack %d: corrupt header", id)
	}
	b, err := zdec.DecodeAll(v[n:], make([]byte, 0, raw))
	if err != nil || uint64(len(b)) != raw {
		return nil, fmt.Errorf("pack %d: corrupt (%v)", id, err)
	}
	c.Add(id, b)
	return b, nil
}

// Member is the content of file ino, packed at off in pack id with size
// bytes, as the transaction sees the pack.
func (p *Cache) Member(t backend.Txn, ino, id, off, size uint64) ([]byte, error) {
	b, err := p.Packed(t, id)
	if err != nil {
		return nil, err
	}
	if off+size > uint64(len(b)) {
		return nil, fmt.Errorf("inode %d: pack %d holds %d bytes, not %d at %d", ino, id, len(b), size, off)
	}
	return b[off : off+size : off+size], nil
}

// Remove forgets pack id, deleted.
func (p *Cache) Remove(id uint64) { p.get().Remove(id) }

// DropIfEmpty deletes pack id once it has no member left.
func (p *Cache) DropIfEmpty(kv backend.KV, id uint64) error {
	return kv.Update(func(t backend.Txn) error {
		empty := true
		err := t.Scan(backend.MemberPrefix(id), nil, true, func(_, _ []byte) bool {
			empty = false
			return false
		})
		if err != nil || !empty {
			return err
		}
		p.get().Remove(id)
		return t.Delete(backend.PackKey(id))
	})
}

// Stats is what the packs hold: members, their raw bytes, and the
// compressed bytes stored for them.
type Stats struct {
	Packs      int   `json:"packs"`
	Files      int   `json:"files"`
	RawBytes   int64 `json:"raw_bytes"`
	Compressed int64 `json:"compressed_bytes"`
}

// Sum sums the packs in kv.
func Sum(kv backend.KV) (Stats, error) {
	var ps Stats
	err := kv.View(func(t backend.Txn) error {
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
