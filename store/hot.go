package store

import (
	"crypto/sha256"
	"encoding/hex"
	"math"

	"github.com/mnemofs/mnemofs/cache"
)

// The content cache ("hot memory"): whole small files, as committed, kept
// in a byte-bounded LRU (cache.Sized) keyed by inode number.
//
// Staleness is ruled out by content addressing rather than by hooks in
// every writer. An entry holds bytes together with their SHA-256, which is
// checked when the entry is filled; a read uses it only while the inode's
// record still names that SHA-256 and its size still matches. Every path
// that changes committed content goes through a commit that stores the new
// SHA-256 with the content in one transaction (writes, appends, truncates,
// import overwrites, restores from history, fsck --repair), or creates a
// new inode (import of new files); renames and maintenance moves change no
// content and keep the inode. A fill that raced with a commit hashes to a
// SHA-256 the record does not hold (then the bytes are served, not kept),
// or to the one it holds (then they are right). The one thing that would
// make the cache serve old bytes is a record whose SHA-256 does not match
// the stored content, which fsck reports as corruption.
//
// A file enters the cache on its second read (from offset 0: a sequential
// read of a large file is many reads) within the admission window
// (cache.NewSizedAdmit), or on its first read after the content of a
// cached file changed: a file read once (by the index build, or a grep -r
// over the tree) costs what it costs with the cache off, and evicts
// nothing.
//
// Reads of a file with uncommitted changes (dirty chunks, a truncation, a
// blob copied on write) bypass the cache: they are served from the open
// state as before. So do files that are unlinked, empty, or larger than
// HotFileMax.

// HotFileMax: files up to this size are cached whole.
const HotFileMax = 256 << 10

type hotEntry struct {
	sha  string
	data []byte // never modified
}

func newHot(bytes int64) *cache.Sized[uint64, hotEntry] {
	if bytes == 0 {
		bytes, _ = cache.Split(cache.DefaultBytes)
	}
	return cache.NewSizedAdmit[uint64, hotEntry](bytes)
}

// readHot serves a read from the content cache, filling it on a miss. It
// reports ok false when the cache does not apply: the caller then reads as
// usual. Caller holds f.mu when f is not nil.
func (s *Store) readHot(ino uint64, f *openFile, dest []byte, off uint64) (n int, ok bool, err error) {
	if s.hot == nil || !committedView(f) {
		return 0, false, nil
	}
	i, err := s.inode(ino)
	if err != nil {
		return 0, false, nil // readLocked reports it
	}
	s.icMu.RLock()
	size, linked, reg := i.Size, len(i.Links) > 0, i.IsReg()
	s.icMu.RUnlock()
	if size == 0 || size > HotFileMax || off >= size || !linked || !reg {
		return 0, false, nil
	}
	if !s.hot.Probe(ino, off == 0) && !s.shared {
		// Read once: cached if read again soon. On a shared store a
		// miss is a network round trip, and what is cached is what an
		// outage leaves readable: cached at the first read.
		return 0, false, nil
	}
	rec, err := s.storedRecord(ino)
	if err != nil || rec.SHA256 == "" {
		return 0, false, nil
	}
	sum := rec.SHA256
	e, hit := s.hot.Lookup(ino, func(e hotEntry) bool { return e.sha == sum && uint64(len(e.data)) == size })
	if !hit {
		data := make([]byte, size)
		m, err := s.readLocked(ino, f, data, 0)
		if err != nil {
			return 0, true, err
		}
		data = data[:m]
		if h := sha256.Sum256(data); hex.EncodeToString(h[:]) == sum {
			s.hot.Add(ino, hotEntry{sha: sum, data: data}, len(data)+len(sum))
		}
		e = hotEntry{data: data}
	}
	if off >= uint64(len(e.data)) {
		return 0, true, nil
	}
	return copy(dest, e.data[off:]), true, nil
}

// committedView reports whether reads through f see exactly the committed
// content (or f is nil: no open state). Caller holds f.mu.
func committedView(f *openFile) bool {
	return f == nil || !f.modified && len(f.dirty) == 0 && !f.blobNew && !f.spilled &&
		f.truncFloor == math.MaxUint64
}

// CacheStats returns the counters of the store's caches: "content" (whole
// small files) and "records" (system and front matter metadata, which
// with the inode table serves attributes and xattrs).
func (s *Store) CacheStats() map[string]cache.Stats {
	return map[string]cache.Stats{"content": s.hot.Stats(), "records": s.recs.Stats()}
}

// DropCache empties the content cache (its counters are kept): a cold
// start for benchmarks.
func (s *Store) DropCache() { s.hot.Purge() }

// DuringPass bounds the inode cache during a pass that reads every
// memory (the walk of memories, the views' build), which would otherwise
// keep every inode it read: call it every few thousand memories.
func (s *Store) DuringPass() { s.ShedInodes(walkKeep) }

// AfterPass empties the inode, content and record caches after a pass
// that read every memory once (the views' build): they hold the end of
// the pass, not what is used, and what they hold was allocated among the
// pass's garbage, each entry keeping a page of it in the heap: at a
// million memories, the heap's pages in use but free after a build (and
// the snapshot's swap) went from 50 MB to 24 MB by emptying them.
func (s *Store) AfterPass() {
	s.ShedInodes(0)
	s.hot.Purge()
	s.recs.Purge()
}
