package store

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/policy"
)

// Versions (SPEC §5). Under a tree whose policy is versioned, a commit that
// changes a non-empty file first keeps the committed content as version N
// (N = the record's version being replaced); under an append tree, only a
// change that is not a pure append does. The old bytes are copied into the
// KV (v and w keys, backend/keys.go) in the commit's own transaction, so a
// crash keeps both or neither. Versions are keyed by inode: they follow
// renames and moves, and go when the inode is purged.

// versionMax: larger files keep no versions (the copy would cost too much).
const versionMax = 64 << 20

// Version describes one kept old version.
type Version struct {
	N        uint32 `json:"n"`
	Size     uint64 `json:"size"`
	SHA256   string `json:"sha256"`
	Modified int64  `json:"modified"` // when that content was written, unix ns
	Saved    int64  `json:"saved"`    // when it was replaced, unix ns
}

// Policy returns the store's policy (meta/policy.yaml, or the defaults).
func (s *Store) Policy() policy.Policy {
	if p := s.pol.Load(); p != nil {
		return *p
	}
	p := policy.Default()
	if b, err := s.Setting("policy"); err == nil && len(b) > 0 {
		if q, err := policy.Parse(b); err == nil {
			p = q
		}
	}
	s.pol.Store(&p)
	return p
}

// keepVersion decides whether the commit of f (about to replace rec's
// content) keeps the old content, and reads it. Caller holds f.mu and mu.
func (s *Store) keepVersion(f *openFile, i *Inode, rec *Record) ([]byte, bool, error) {
	old := f.committedSize
	if old == 0 || old > versionMax || rec.Version < 1 {
		return nil, false, nil
	}
	p, err := s.Path(f.ino)
	if err != nil {
		return nil, false, nil
	}
	switch s.Policy().UpdateMode(p) {
	case policy.Versioned:
	case policy.Append:
		if f.appendOnly {
			return nil, false, nil
		}
	default:
		return nil, false, nil
	}
	b := make([]byte, old)
	switch {
	case f.blob != nil && f.blobNew && i.Blob != 0:
		// Copied on write: the committed generation is still whole.
		bf, err := s.blobs.open(f.ino, i.Blob)
		if err != nil {
			return nil, false, err
		}
		err = readBlob(bf, b, 0)
		bf.Close()
		return b, err == nil, err
	case f.blob != nil && !f.blobNew:
		// Appended in place: the committed bytes are the blob's prefix.
		err := readBlob(f.blob, b, 0)
		return b, err == nil, err
	}
	// In KV chunks (also a file moving to a blob in this commit): the
	// stored chunks still hold the committed content, unless a spill of a
	// large rewrite replaced some (then no version: the bytes are gone).
	if f.spilled {
		s.log.Printf("mnemofs: inode %d: no old version kept (rewritten past %d bytes at once)", f.ino, spillBytes)
		return nil, false, nil
	}
	err = s.kv.View(func(t backend.Txn) error {
		for pos := uint64(0); pos < old; pos += ChunkSize {
			c, err := s.chunk(t, nil, f.ino, uint32(pos/ChunkSize))
			if err != nil {
				return err
			}
			copy(b[pos:min(old, pos+ChunkSize)], c)
		}
		return nil
	})
	return b, err == nil, err
}

// putVersion writes version rec.Version of ino (content b) in t.
func putVersion(t backend.Txn, ino uint64, rec *Record, b []byte, now int64) error {
	n := uint32(rec.Version)
	h, err := json.Marshal(Version{N: n, Size: uint64(len(b)), SHA256: rec.SHA256, Modified: rec.Modified, Saved: now})
	if err != nil {
		return err
	}
	if err := t.Set(backend.VersionKey(ino, n), h); err != nil {
		return err
	}
	for off, idx := 0, uint32(0); off < len(b); off, idx = off+ChunkSize, idx+1 {
		if err := t.Set(backend.VersionChunkKey(ino, n, idx), b[off:min(len(b), off+ChunkSize)]); err != nil {
			return err
		}
	}
	return nil
}

// Versions lists the kept old versions of ino, oldest first.
func (s *Store) Versions(ino uint64) ([]Version, error) {
	var out []Version
	var derr error
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.VersionPrefix(ino), nil, false, func(_, v []byte) bool {
			var x Version
			if derr = json.Unmarshal(v, &x); derr != nil {
				return false
			}
			out = append(out, x)
			return true
		})
	})
	return out, errors.Join(err, derr)
}

// VersionContent returns the bytes of version n of ino.
func (s *Store) VersionContent(ino uint64, n uint32) ([]byte, error) {
	var v Version
	var b []byte
	err := s.kv.View(func(t backend.Txn) error {
		h, err := t.Get(backend.VersionKey(ino, n))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(h, &v); err != nil {
			return fmt.Errorf("store: version %d of inode %d: %v", n, ino, err)
		}
		b = make([]byte, v.Size)
		for off := uint64(0); off < v.Size; off += ChunkSize {
			c, err := t.Get(backend.VersionChunkKey(ino, n, uint32(off/ChunkSize)))
			if err != nil {
				return err
			}
			copy(b[off:], c)
		}
		return nil
	})
	if errors.Is(err, backend.ErrNotFound) {
		return nil, fmt.Errorf("store: version %d of inode %d: %w", n, ino, errNoVersion)
	}
	return b, err
}

var errNoVersion = errors.New("no such version")
