package pack

import (
	"encoding/binary"
	"errors"
	"runtime"
	"sync/atomic"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// Packing: the writing of packs (the format and the reading of packed
// content: pack.go). A tree is walked without a lock, its candidates read
// and compressed without one, and each pack written under the store's
// namespace lock after its members are checked unchanged (Host.Write).

// File is a file to pack, as it was when chosen.
type File struct {
	Ino  uint64
	Size uint64
	// ChunkID names its chunks (backend.ChunkKey): the one chunk it has
	// goes when it is packed.
	ChunkID      uint64
	Mtime, Ctime int64
	// Version and SHA256 are those of its committed content: every commit
	// that changes the bytes bumps the version.
	Version int
	SHA256  string
	// Off is where its bytes begin in the pack.
	Off uint64
}

// Host is the store whose files are packed.
type Host interface {
	// Kids lists the inodes in the directory ino; dir is false when ino
	// is not a directory.
	Kids(ino uint64) (kids []uint64, dir bool, err error)
	// Candidate returns the file ino as it is now, and false when it
	// cannot join a pack: not a regular file, open, empty, not within one
	// chunk of the KV, in a pack already, or hard-linked (it may be live
	// elsewhere).
	Candidate(ino uint64) (File, bool)
	// Content reads the chunk of f in t.
	Content(t backend.Txn, f File) ([]byte, error)
	// Write, under the namespace lock, checks that every file is still
	// what it was when chosen (the same content, the same committed
	// version), allocates a pack id (NextID), and writes what write
	// writes in one transaction with the files' inodes, each pointing
	// into the pack at its offset. When one of them changed meanwhile it
	// writes nothing: a later pass packs them.
	Write(files []File, write func(t backend.Txn, id uint64) error) error
}

// Packer packs the small files of trees. Its zero value is ready.
type Packer struct {
	// limit, when set, is fewer members a pack than MaxFiles: the engine
	// refused a bigger pack's transaction.
	limit atomic.Int32
}

// PackTree packs the small files of kv under the directory (or the file) ino,
// where compressing saves bytes (which trees is package lifecycle's
// choice: what a pass archived). The walk takes no lock; each pack is
// written under the namespace lock on its own, its members checked again
// there, so that writers wait for one pack at most.
func (p *Packer) PackTree(kv backend.KV, ino uint64, h Host) error {
	var cands []uint64
	var walk func(ino uint64) error
	walk = func(ino uint64) error {
		kids, dir, err := h.Kids(ino)
		if err != nil {
			return err
		}
		if !dir {
			cands = append(cands, ino)
			return nil
		}
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
		if cands, err = p.packSome(kv, cands, h); err != nil {
			return err
		}
	}
	return nil
}

// packSome packs the first candidates that can be packed, up to MaxBytes
// bytes or MaxFiles files, and returns the rest. The members are read and
// compressed without a lock; under it they are checked to be unchanged
// (else the group waits for a later pass) and the pack is written.
func (p *Packer) packSome(kv backend.KV, cands []uint64, h Host) ([]uint64, error) {
	var group []File
	raw := uint64(0)
	limit := MaxFiles
	if l := int(p.limit.Load()); l > 0 {
		limit = l
	}
	all := cands
	for len(cands) > 0 && len(group) < limit {
		f, ok := h.Candidate(cands[0])
		if !ok {
			cands = cands[1:] // gone or changed since the walk
			continue
		}
		if raw+f.Size > MaxBytes {
			break
		}
		raw += f.Size
		group, cands = append(group, f), cands[1:]
	}
	if len(group) == 0 {
		return cands, nil
	}
	v, err := compressFiles(kv, group, h)
	if err != nil || v == nil {
		return cands, err
	}
	err = h.Write(group, func(t backend.Txn, id uint64) error { return writePack(t, id, group, v) })
	if errors.Is(err, backend.ErrTxnTooBig) && len(group) > 1 {
		// The engine's transactions are smaller (etcd: 128 operations,
		// three a member): smaller packs from now on, this group again.
		p.limit.Store(int32(len(group) / 2))
		return all, nil
	}
	return cands, err // written, or changed meanwhile: packed by a later pass
}

// compressFiles reads the files, sets each one's offset, and returns the
// pack value; nil when compressing saves nothing (a tiny file alone).
func compressFiles(kv backend.KV, files []File, h Host) ([]byte, error) {
	var raw []byte
	err := kv.View(func(t backend.Txn) error {
		for k, f := range files {
			c, err := h.Content(t, f)
			if err != nil {
				return err
			}
			files[k].Off = uint64(len(raw))
			n := min(uint64(len(c)), f.Size)
			raw = append(raw, c[:n]...)
			raw = append(raw, make([]byte, f.Size-n)...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	v := binary.AppendUvarint(nil, uint64(len(raw)))
	v = zenc.EncodeAll(raw, v)
	if len(v) >= len(raw) {
		return nil, nil
	}
	return v, nil
}

// writePack stores pack value v for the files in t.
func writePack(t backend.Txn, id uint64, files []File, v []byte) error {
	if err := t.Set(backend.PackKey(id), v); err != nil {
		return err
	}
	for _, f := range files {
		if err := t.Set(backend.MemberKey(id, f.Ino), nil); err != nil {
			return err
		}
		if err := t.Delete(backend.ChunkKey(f.ChunkID, 0)); err != nil {
			return err
		}
	}
	return nil
}

// NextID allocates a pack id.
func NextID(kv backend.KV) (uint64, error) {
	var id uint64
	err := kv.Update(func(t backend.Txn) error {
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
