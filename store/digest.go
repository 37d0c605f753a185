package store

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"errors"
	"math"

	"github.com/mnemofs/mnemofs/cache"
	"github.com/mnemofs/mnemofs/memory"
)

// What a commit learns of the content without rereading it: the running
// hash of sequential writes and appends, the tail cache of the last chunk
// (appends read nothing back), and the first bytes to parse.

// keepTail caches what the next append needs (tails): the last chunk of a
// file in the KV, and for any file the hash state and whether appends can
// change its metadata. Caller holds f.mu.
func (s *Store) keepTail(f *openFile, size uint64, rec *Record, state []byte) {
	if size == 0 {
		s.tails.Forget(f.ino)
		return
	}
	tail := cache.Tail{Index: math.MaxUint32, Size: size, // MaxUint32: no chunk
		Settled: rec.Error == "" && rec.BodyOffset > 0 && uint64(rec.BodyOffset) <= size}
	if f.blob == nil {
		last := uint32((size - 1) / ChunkSize)
		c, ok := f.dirty[last]
		if !ok {
			s.tails.Forget(f.ino)
			return
		}
		tail.Index, tail.Data = last, c
	}
	tail.Hash = state
	if f.hash != nil && f.hashPos == size {
		tail.Hash, _ = f.hash.(encoding.BinaryMarshaler).MarshalBinary()
	}
	s.tails.Set(f.ino, tail)
}

// headMax is how much of a file is kept in hand for metadata parsing.
const headMax = memory.MaxParse

// hashStateMin: files at least this large keep their hash state, so an
// append hashes only the new bytes.
const hashStateMin = 4 << 10

// HashMax: a file larger than this is not read back to be hashed at commit
// (a truncate to 1 TiB must not take minutes); its sha256 is known only
// when it was written sequentially, else it is empty (unknown).
const HashMax = 1 << 30

// digest hashes the current content and returns the hash state (for large
// files) and the first bytes when the name carries metadata. An append to a
// file whose hash state is known hashes only the appended bytes. Caller
// holds f.mu.
func (s *Store) digest(f *openFile, size uint64, name string, keepMeta bool) (string, []byte, []byte, error) {
	needHead := !keepMeta && size <= headMax && memory.HasMetadata(name)
	if f.hash != nil && f.hashPos == size && !needHead {
		// Written sequentially: the running hash already covers it all.
		var state []byte
		if size >= hashStateMin {
			state, _ = f.hash.(encoding.BinaryMarshaler).MarshalBinary()
		}
		return hex.EncodeToString(f.hash.Sum(nil)), state, nil, nil
	}
	if size > HashMax {
		return "", nil, nil, nil
	}
	h := sha256.New()
	start := uint64(0)
	if f.appendOnly && !needHead && f.committedSize > 0 && size >= f.committedSize {
		// An append whose running hash was lost (say, a write at the end
		// while another handle wrote elsewhere): start from the saved one.
		if prev, err := s.record(f.ino); err == nil && prev.HashState != nil && prev.HashSize == f.committedSize {
			if h.(encoding.BinaryUnmarshaler).UnmarshalBinary(prev.HashState) == nil {
				start = f.committedSize
			} else {
				h.Reset()
			}
		}
	}
	var head []byte
	var err error
	buf := make([]byte, min(size-start, 1<<20))
	for pos := start; pos < size; {
		var n int
		n, err = s.readLocked(f.ino, f, buf[:min(uint64(len(buf)), size-pos)], pos)
		if err != nil {
			break
		}
		if n == 0 {
			err = errors.New("store: short read hashing content")
			break
		}
		h.Write(buf[:n])
		if needHead {
			head = append(head, buf[:n]...)
		}
		pos += uint64(n)
	}
	var state []byte
	if size >= hashStateMin {
		state, _ = h.(encoding.BinaryMarshaler).MarshalBinary()
	}
	return hex.EncodeToString(h.Sum(nil)), state, head, err
}
