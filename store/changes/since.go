package changes

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

// What changed since a version: the support for what others derive from
// the store and keep across mounts (the views' persisted index). They
// record Settled's version with what they derived, and at the next start
// ask ChangedSince for the memories to read again. A store whose KV
// numbers its commits offers it (backend.Versioned: Badger, etcd); when
// other hosts change the store too (etcd), a version is settled once the
// watch has delivered their commits up to it (backend.Settler).

// Versioned reports whether Settled and ChangedSince can answer: the
// KV numbers commits, and, when others change it, can tell when their
// commits up to a version have been delivered.
func (l *Log) Versioned() bool {
	_, ok := l.versioned()
	return ok
}

// versioned is the KV as a backend.Versioned, for a local store or a
// shared one whose KV is a backend.Settler.
func (l *Log) versioned() (backend.Versioned, bool) {
	vkv, ok := backend.AsVersioned(l.kv)
	if _, settles := vkv.(backend.Settler); l.shared && !settles {
		return nil, false
	}
	return vkv, ok
}

// Settled returns a version of the KV such that the change events of
// every commit at or below it have been delivered to Options.OnChange:
// a handler that has applied every event it was given reflects the store
// as of at least that version. It reports false when the store is not
// Versioned, or when events kept arriving for longer than wait; a shared
// store's also when it is read-only (settling writes a key) or when its
// watch did not bring that key back within wait (at least sharedSettle).
// locked runs its function under the store's namespace lock, under which
// every commit runs and records its events.
func (l *Log) Settled(wait time.Duration, locked func(func())) (uint64, bool) {
	vkv, ok := l.versioned()
	if !ok {
		return 0, false
	}
	deadline := time.Now().Add(wait)
	var v uint64
	st, settles := vkv.(backend.Settler)
	if settles && l.shared && l.readOnly {
		return 0, false // settling writes a key: not from a read-only store
	}
	if settles && l.shared {
		// A write and its return through the watch: round trips to the
		// cluster, not events in flight, which wait is meant for.
		deadline = time.Now().Add(max(wait, sharedSettle))
		// Other hosts' commits: those up to the mark's version are
		// delivered once the watch has delivered the mark (Delivered,
		// below). This host's: a commit before the mark ran under mu
		// and has recorded its events once mu is had after the mark.
		mark, err := st.Mark()
		if err != nil {
			return 0, false
		}
		locked(func() {}) // a barrier: the commits before the mark are done
		v = mark
	} else {
		// Every commit runs under mu and records its events there (a bulk
		// batch counts itself in delivering before its first write): with mu
		// held, every commit at or below v has its events recorded or counted.
		locked(func() { v = vkv.Version() })
	}
	for l.delivering.Load() != 0 {
		if time.Now().After(deadline) {
			return 0, false
		}
		time.Sleep(100 * time.Microsecond)
	}
	if settles && l.shared && !st.Delivered(v, deadline) {
		return 0, false
	}
	return v, true
}

// sharedSettle is the least Settled waits on a shared store.
const sharedSettle = 2 * time.Second

// Since is what ChangedSince found.
type Since struct {
	// Version is the KV's version when it looked; at least every commit
	// up to it is covered.
	Version uint64
	// Changed lists the nodes (files and directories) whose inode record,
	// memory metadata or extended attributes were written after the
	// version asked for, in increasing order, without repeats.
	Changed []uint64
	// Logged: the removal log reaches back to the version asked for
	// (removals.go), and Removed lists the nodes removed after it, in
	// increasing order; Live is then not filled.
	Logged  bool
	Removed []uint64
	// Live, when the log does not reach back that far, lists every node
	// that exists, in increasing order: what a caller knew of and is not
	// here was removed.
	Live []uint64
	// Settings: a store-wide setting (the policy) was written: which
	// files are memories, and how they are redacted, may differ for all.
	Settings bool
}

// ChangedSince reports what changed after version since (from Settled).
// Every change to a node rewrites its inode record (times, size, links),
// so the inode family, with metadata and extended attributes besides, is
// enough. A node removed is in Removed, from the removal log, or, when the
// log does not reach back to since, missing from Live, which takes a
// key-only walk of every inode. Otherwise the cost follows what changed.
func (l *Log) ChangedSince(since uint64) (Since, error) {
	vkv, ok := l.versioned()
	if !ok {
		return Since{}, fmt.Errorf("store: this backend does not number its commits")
	}
	out := Since{Version: vkv.Version()}
	if out.Version < since {
		return out, fmt.Errorf("store: the KV is at version %d, before %d: it is not the store that was", out.Version, since)
	}
	l.removalsMu.RLock()
	defer l.removalsMu.RUnlock()
	removed, logged, err := l.removedSince(vkv, since)
	if err != nil {
		return out, err
	}
	seen := map[uint64]bool{}
	from := since // the walk of the inodes: only what changed, with the log
	if out.Logged = logged; !logged {
		from = 0
	}
	err = vkv.KeysSince([]byte{backend.PrefixInode}, from, func(k []byte, v uint64) error {
		ino := binary.BigEndian.Uint64(k[1:])
		if !logged {
			out.Live = append(out.Live, ino)
		}
		if v > since {
			seen[ino] = true
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	out.Removed = removed
	for _, p := range []byte{backend.PrefixMeta, backend.PrefixXattr} {
		err := vkv.KeysSince([]byte{p}, since, func(k []byte, _ uint64) error {
			seen[binary.BigEndian.Uint64(k[1:])] = true
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	err = vkv.KeysSince(l.settings, since, func(k []byte, _ uint64) error {
		if !slices.ContainsFunc(l.statistics, func(st []byte) bool { return bytes.Equal(k, st) }) { // a statistic, not a setting of memories
			out.Settings = true
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	// (An inode number removed and then used again is in both lists.)
	for ino := range seen {
		out.Changed = append(out.Changed, ino)
	}
	slices.Sort(out.Changed)
	return out, nil
}
