package store

import (
	"encoding/json"
	"path"
	"sort"
	"strings"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/cache"
)

// Memories calls fn for every linked regular file shown to the store's
// user, in inode order.
func (s *Store) Memories(fn func(Info) error) error { return s.memories(false, nil, fn) }

// MemoriesFor is Memories for a reader who may see only the memories
// may(ino) allows (nil: all the store's user sees): links and duplicate
// marks pointing elsewhere are shown as if they resolved to nothing.
func (s *Store) MemoriesFor(may func(ino uint64) bool, fn func(Info) error) error {
	return s.memories(false, may, fn)
}

// memories calls fn for every linked regular file, all of them (internal
// work: maintenance) or those the store's user sees and may allows.
//
// The records are read memPage at a time, each page in a transaction of
// its own, and the inode cache is shed past walkKeep between pages: a
// walk over a million memories otherwise held every record and every
// inode at once (about 800 MB, the peak of a mount's index build). A
// memory written during the walk may be seen or not, as with any walk.
func (s *Store) memories(all bool, may func(uint64) bool, fn func(Info) error) error {
	type rec struct {
		ino uint64
		r   *Record
	}
	recs := make([]rec, 0, memPage)
	var start []byte
	for {
		recs = recs[:0]
		err := s.kv.View(func(t backend.Txn) error {
			var jerr error
			err := t.Scan(backend.MetaPrefix(), start, false, func(k, v []byte) bool {
				r := &Record{}
				if jerr = json.Unmarshal(v, r); jerr != nil {
					return false
				}
				recs = append(recs, rec{backend.KeyIno(k), r})
				if len(recs) == memPage {
					start = append(append([]byte(nil), k...), 0) // the next key after k (a new slice: the scan may hold the last)
					return false
				}
				return true
			})
			if err != nil {
				return err
			}
			return jerr
		})
		if err != nil {
			return err
		}
		for _, x := range recs {
			if err := s.memory(all, may, x.ino, x.r, fn); err != nil {
				return err
			}
		}
		if len(recs) < memPage {
			return nil
		}
		s.DuringPass()
	}
}

// MemoryInos calls fn, in order, with the inode number of every record of
// a memory, reading only the records' keys: a superset of what Memories
// lists (it also gives ignored files and records whose inode is going),
// for a caller that reads and checks each memory itself (the views'
// build, which then reads every memory once instead of twice). On a
// store open for a user it gives the other users' memories too: what the
// user may see is in the records, which the caller reads (Info and
// ScanMemories report the others gone). Pages of memPage×16 keys a
// transaction.
func (s *Store) MemoryInos(fn func(ino uint64) error) error {
	inos := make([]uint64, 0, memPage*16)
	var start []byte
	for {
		inos = inos[:0]
		err := s.kv.View(func(t backend.Txn) error {
			return t.Scan(backend.MetaPrefix(), start, true, func(k, _ []byte) bool {
				inos = append(inos, backend.KeyIno(k))
				if len(inos) == cap(inos) {
					start = append(append([]byte(nil), k...), 0)
					return false
				}
				return true
			})
		})
		if err != nil {
			return err
		}
		for _, ino := range inos {
			if err := fn(ino); err != nil {
				return err
			}
		}
		if len(inos) < cap(inos) {
			return nil
		}
	}
}

// memPage: how many records a walk over the memories reads at once;
// walkKeep: the inode cache a pass over the memories keeps (DuringPass;
// a mount sheds to its node bound every second). Variables for the tests.
var memPage, walkKeep = 4096, 1 << 16

// memory calls fn for the memory ino, whose record is r, if it is one
// (memories).
func (s *Store) memory(all bool, may func(uint64) bool, ino uint64, r *Record, fn func(Info) error) error {
	attr := s.Attr
	if all {
		attr = s.attrWhole
	}
	i, err := attr(ino)
	if err != nil || !i.IsReg() || len(i.Links) == 0 || !all && !s.visibleRecord(r) || may != nil && !may(ino) {
		return nil
	}
	p, err := s.Path(ino)
	if err != nil || s.Ignored(p, false) {
		return nil // gone, or not a memory
	}
	s.withAccess(ino, r)
	in := info(&i, p, r)
	if !all { // the operator's view: a shared log whole
		s.partialInfo(&in)
	}
	in.Related = s.relatedPaths(r, may)
	s.maintenanceMarks(&in, r, may)
	return fn(in)
}

// Stats is the health summary of a store.
type Stats struct {
	Memories    int              `json:"memories"`
	Directories int              `json:"directories"`
	Bytes       uint64           `json:"bytes"`
	Trees       map[string]Tree  `json:"trees"`
	LargestDirs []DirCount       `json:"largest_directories"`
	Errors      int              `json:"memories_with_errors"`
	Disk        map[string]int64 `json:"disk_bytes"`
	Duplicates  int              `json:"duplicate_files"`
	Growth      Growth           `json:"growth"`
	// Packs: archived files kept compressed (internal/pack).
	Packs    PackStats `json:"archive_packs"`
	Warnings []string  `json:"warnings"`
	// Scope says what a restricted reader's stats count (StatsFor).
	Scope string `json:"scope,omitempty"`
	// Cache: hit counters of the in-memory caches, by name (hot.go);
	// meta/stats.json adds the views' "queries".
	Cache map[string]cache.Stats `json:"cache,omitempty"`
}

// Tree is the size of one top-level directory.
type Tree struct {
	Files int    `json:"files"`
	Bytes uint64 `json:"bytes"`
}

// DirCount is the number of entries of one directory.
type DirCount struct {
	Path    string `json:"path"`
	Entries int    `json:"entries"`
}

// Stats walks the store and summarises it.
func (s *Store) Stats() (Stats, error) { return s.StatsFor(nil) }

// StatsFor is Stats as a restricted reader sees it: a store open for a
// user, or a reader who may see only the memories may allows. It counts
// only those memories and the directories that hold them, and leaves out
// what describes the whole store (disk bytes, growth, packs, caches).
func (s *Store) StatsFor(may func(ino uint64) bool) (Stats, error) {
	if s.opts.User != "" || may != nil {
		return s.restrictedStats(may)
	}
	st := Stats{Trees: map[string]Tree{}, Cache: s.CacheStats()} // before the walk reads records
	seen := map[string]int{}
	err := s.Memories(func(in Info) error {
		st.Memories++
		st.Bytes += in.Size
		t := st.Trees[TopDir(in.Path)]
		t.Files++
		t.Bytes += in.Size
		st.Trees[TopDir(in.Path)] = t
		if in.Error != "" {
			st.Errors++
		}
		if in.Size > 0 {
			seen[in.SHA256]++
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	for _, n := range seen {
		if n > 1 {
			st.Duplicates += n - 1
		}
	}
	counts := map[uint64]int{}
	st.Directories = 1 // the root
	err = s.kv.View(func(t backend.Txn) error {
		return t.Scan([]byte{backend.PrefixDirent}, nil, false, func(k, v []byte) bool {
			counts[backend.DirentDir(k)]++
			if _, mode, err := decodeDirent(v); err == nil && mode&syscall.S_IFMT == syscall.S_IFDIR {
				st.Directories++
			}
			return true
		})
	})
	if err != nil {
		return st, err
	}
	for dir, n := range counts {
		if p, err := s.Path(dir); err == nil && !s.Ignored(p, true) {
			st.LargestDirs = append(st.LargestDirs, DirCount{p, n})
		}
	}
	sort.Slice(st.LargestDirs, func(a, b int) bool {
		x, y := st.LargestDirs[a], st.LargestDirs[b]
		return x.Entries > y.Entries || x.Entries == y.Entries && strings.Compare(x.Path, y.Path) < 0
	})
	if len(st.LargestDirs) > 10 {
		st.LargestDirs = st.LargestDirs[:10]
	}
	lsm, vlog := s.kv.Size()
	st.Disk = map[string]int64{"lsm": lsm, "vlog": vlog, "blobs": s.blobs.Size()}
	st.Growth = s.SampleSize(s.now(), int64(st.Bytes))
	if st.Packs, err = s.Packs(); err != nil {
		return st, err
	}
	st.Warnings = s.warnings(&st)
	return st, nil
}

// restrictedStats is StatsFor a restricted reader.
func (s *Store) restrictedStats(may func(uint64) bool) (Stats, error) {
	st := Stats{Trees: map[string]Tree{}, Scope: "the memories this reader may see"}
	seen := map[string]int{}
	dirs := map[string]int{}
	err := s.MemoriesFor(may, func(in Info) error {
		st.Memories++
		st.Bytes += in.Size
		t := st.Trees[TopDir(in.Path)]
		t.Files++
		t.Bytes += in.Size
		st.Trees[TopDir(in.Path)] = t
		if in.Error != "" {
			st.Errors++
		}
		if in.Size > 0 {
			seen[in.SHA256+"\x00"+AudienceKey(in)]++
		}
		dirs[path.Dir(in.Path)]++
		return nil
	})
	for _, n := range seen {
		if n > 1 {
			st.Duplicates += n - 1
		}
	}
	st.Directories = len(dirs)
	for p, n := range dirs {
		st.LargestDirs = append(st.LargestDirs, DirCount{p, n})
	}
	sort.Slice(st.LargestDirs, func(a, b int) bool {
		x, y := st.LargestDirs[a], st.LargestDirs[b]
		return x.Entries > y.Entries || x.Entries == y.Entries && x.Path < y.Path
	})
	st.LargestDirs = st.LargestDirs[:min(len(st.LargestDirs), 10)]
	st.Warnings = []string{}
	return st, err
}
