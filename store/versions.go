package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/mnemofs/mnemofs/store/internal/blobfs"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/memory"
	"github.com/mnemofs/mnemofs/policy"
)

// Versions. Under a tree whose policy is versioned, a commit that
// changes a non-empty file first keeps the committed content as version N
// (N = the record's version being replaced); under an append tree, only a
// change that is not a pure append does. The old bytes are copied into the
// KV (v and w keys, backend/keys.go) in the commit's own transaction, so a
// crash keeps both or neither. Versions are keyed by inode: they follow
// renames and moves, and go when the inode is purged.

// versionMax: larger files keep no versions (the copy would cost too much).
const versionMax = 64 << 20

// Version describes one kept old version. It keeps who could see it and
// the file's owner and mode when it was replaced: history/ shows it to
// those, not to whoever may see the memory now.
type Version struct {
	N        uint32 `json:"n"`
	Size     uint64 `json:"size"`
	SHA256   string `json:"sha256"`
	Modified int64  `json:"modified"` // when that content was written, unix ns
	Saved    int64  `json:"saved"`    // when it was replaced, unix ns
	// Audience: Users (nil: everyone) and Unsure, as isolation.go
	// computed them for that content; Known is false for versions kept
	// before they were recorded (Audience then parses the content).
	Users  []string `json:"users,omitempty"`
	Unsure bool     `json:"unsure,omitempty"`
	Known  bool     `json:"known,omitempty"`
	// Uid, Gid and Mode of the file then (Known).
	Uid  uint32 `json:"uid,omitempty"`
	Gid  uint32 `json:"gid,omitempty"`
	Mode uint32 `json:"mode,omitempty"`
	// Owner is the memory's owner then; Log says it was a log, JSONLog
	// a JSON one (its lines are shown per user as the live log's are).
	Owner   string `json:"owner,omitempty"`
	Log     bool   `json:"log,omitempty"`
	JSONLog bool   `json:"json_log,omitempty"`
}

// keepVersion decides whether the commit of f (about to replace rec's
// content) keeps the old content, and reads it. Caller holds f.mu and mu.
func (s *Store) keepVersion(f *openFile, i *Inode, rec *Record) ([]byte, bool, error) {
	old := f.committedSize
	if old == 0 || old > versionMax || rec.Version < 1 || f.inPlace {
		return nil, false, nil // (in place: the old bytes are gone)
	}
	p, err := s.Path(f.ino)
	if err != nil || s.Ignored(p, false) {
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
		bf, err := s.blobs.Open(f.ino, i.Blob)
		if err != nil {
			return nil, false, err
		}
		err = blobfs.ReadFull(bf, b, 0)
		bf.Close()
		return b, err == nil, err
	case f.blob != nil && !f.blobNew:
		// Appended in place: the committed bytes are the blob's prefix.
		err := blobfs.ReadFull(f.blob, b, 0)
		return b, err == nil, err
	}
	// In KV chunks (also a file moving to a blob in this commit): the
	// committed chunks still hold the committed content (a spill writes
	// to a stage, or past the committed bytes: chunks.go).
	s.icMu.RLock()
	id := i.chunkID()
	s.icMu.RUnlock()
	err = s.kv.View(func(t backend.Txn) error {
		for pos := uint64(0); pos < old; pos += ChunkSize {
			c, err := s.chunk(t, nil, f.ino, id, uint32(pos/ChunkSize))
			if err != nil {
				return err
			}
			copy(b[pos:min(old, pos+ChunkSize)], c)
		}
		return nil
	})
	return b, err == nil, err
}

// putVersion writes version rec.Version of i (content b) in t, under the
// memory's lineage.
func putVersion(t backend.Txn, i *Inode, rec *Record, b []byte, now int64, chunks bool) error {
	n, ino := uint32(rec.Version), rec.lineage(i.Ino)
	v := Version{N: n, Size: uint64(len(b)), SHA256: rec.SHA256, Modified: rec.Modified, Saved: now,
		Users: rec.audience(), Unsure: rec.unsure(), Known: true, Uid: i.Uid, Gid: i.Gid, Mode: i.Mode, Owner: rec.Owner}
	for _, l := range i.Links {
		v.Log = v.Log || isLogName(l.Name)
		v.JSONLog = v.JSONLog || memory.IsJSONLog(l.Name)
	}
	h, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := t.Set(backend.VersionKey(ino, n), h); err != nil {
		return err
	}
	if chunks {
		return putVersionChunks(t, i, rec, b)
	}
	return nil
}

// setter is a Txn or a Batch.
type setter interface{ Set(k, v []byte) error }

// putVersionChunks writes the content of the version putVersion records.
func putVersionChunks(t setter, i *Inode, rec *Record, b []byte) error {
	n, ino := uint32(rec.Version), rec.lineage(i.Ino)
	for off, idx := 0, uint32(0); off < len(b); off, idx = off+ChunkSize, idx+1 {
		if err := t.Set(backend.VersionChunkKey(ino, n, idx), b[off:min(len(b), off+ChunkSize)]); err != nil {
			return err
		}
	}
	return nil
}

// Versions lists the kept old versions of ino the store's user may see,
// oldest first.
func (s *Store) Versions(ino uint64) ([]Version, error) {
	all, err := s.versions(ino)
	if err != nil || s.opts.User == "" {
		return all, err
	}
	out := all[:0]
	for _, v := range all {
		if !s.versionVisible(ino, &v) {
			continue
		}
		if b, lines, ok, err := s.versionLines(ino, &v); err != nil {
			return nil, err
		} else if ok {
			if !lines {
				continue // none of its lines is the user's to see
			}
			v.Size, v.SHA256 = uint64(len(b)), sha(b)
		}
		out = append(out, v)
	}
	return out, nil
}

// versionLines returns, when version v of ino is of a log the store's
// user may see only in part, the lines of it that user sees (as
// partialOf does for the live log), whether there is any, and true.
func (s *Store) versionLines(ino uint64, v *Version) ([]byte, bool, bool, error) {
	u := s.opts.User
	log, jsonLog := v.Log, v.JSONLog
	if !v.Known || (!log && v.Owner == "") {
		// Kept before versions said so: by the memory's names now.
		if i, err := s.inode(ino); err == nil {
			s.icMu.RLock()
			for _, l := range i.Links {
				log = log || isLogName(l.Name)
				jsonLog = jsonLog || memory.IsJSONLog(l.Name)
			}
			s.icMu.RUnlock()
		}
	}
	if u == "" || !log || (v.Owner != "" && v.Owner == u) {
		return nil, false, false, nil
	}
	b, err := s.versionContent(ino, v.N)
	if err != nil {
		return nil, false, true, err
	}
	out, _ := projectLines(jsonLog, b, u)
	return out, len(bytes.TrimSpace(out)) > 0, true, nil
}

// versionVisible reports whether the store's user may see version v of
// ino: its recorded audience, or for an old record what its content
// declares (with the memory's owner).
func (s *Store) versionVisible(ino uint64, v *Version) bool {
	r := Record{Meta: memory.Meta{Users: v.Users}, Unreadable: v.Unsure}
	if !v.Known {
		cur, err := s.storedRecord(ino)
		b, berr := s.versionContent(ino, v.N)
		if err != nil || berr != nil {
			return false
		}
		p, _ := s.Path(ino)
		r.applyParse(memory.Parse(path.Base(p), b))
		r.Owner = cur.Owner
	}
	return r.VisibleTo(s.opts.User)
}

// lineageOf is the lineage the versions of the memory ino are kept under.
func (s *Store) lineageOf(ino uint64) uint64 {
	if r, err := s.storedRecord(ino); err == nil {
		return r.lineage(ino)
	}
	return ino
}

// versions lists every kept old version of ino, oldest first.
func (s *Store) versions(ino uint64) ([]Version, error) {
	var out []Version
	var derr error
	l := s.lineageOf(ino)
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.VersionPrefix(l), nil, false, func(_, v []byte) bool {
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

// VersionContent returns the bytes of version n of ino, if the store's
// user may see it.
func (s *Store) VersionContent(ino uint64, n uint32) ([]byte, error) {
	if s.opts.User != "" {
		// Checked as Versions lists it, this version alone.
		all, err := s.versions(ino)
		if err != nil {
			return nil, err
		}
		k := slices.IndexFunc(all, func(v Version) bool { return v.N == n })
		if k < 0 || !s.versionVisible(ino, &all[k]) {
			return nil, fmt.Errorf("store: version %d of inode %d: %w", n, ino, errNoVersion)
		}
		if b, lines, ok, err := s.versionLines(ino, &all[k]); err != nil {
			return nil, err
		} else if ok && !lines {
			return nil, fmt.Errorf("store: version %d of inode %d: %w", n, ino, errNoVersion)
		} else if ok {
			return b, nil
		}
	}
	return s.versionContent(ino, n)
}

// versionContent is VersionContent without isolation.
func (s *Store) versionContent(ino uint64, n uint32) ([]byte, error) {
	var v Version
	var b []byte
	l := s.lineageOf(ino)
	err := s.kv.View(func(t backend.Txn) error {
		h, err := t.Get(backend.VersionKey(l, n))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(h, &v); err != nil {
			return fmt.Errorf("store: version %d of inode %d: %v", n, ino, err)
		}
		b = make([]byte, v.Size)
		for off := uint64(0); off < v.Size; off += ChunkSize {
			c, err := t.Get(backend.VersionChunkKey(l, n, uint32(off/ChunkSize)))
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
