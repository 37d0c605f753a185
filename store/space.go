package store

import (
	"sync"
	"syscall"
	"time"
)

// Free space. Badger writes its logs through memory maps: on a full disk a
// write into a map that the filesystem cannot back kills the process
// (SIGBUS) instead of failing. So the store keeps a reserve free on the
// data directory's filesystem: operations that add data (writes, new
// names, xattrs, imports) get ENOSPC once free space falls below it, while
// the ones that free space (unlink, rmdir, truncate, rename into the
// trash) still work, and the KV's own writes always find room.

// reserveMin and reserveMax bound the reserve: a tenth of the filesystem,
// within them.
const (
	reserveMin = 8 << 20
	reserveMax = 64 << 20
	// spaceCheckEvery: free space is measured again after this many
	// bytes written or this long.
	spaceCheckBytes = 1 << 20
	spaceCheckAge   = 100 * time.Millisecond
)

type spaceGuard struct {
	dir string

	mu      sync.Mutex
	free    int64 // bytes available at the last measure, less writes since
	reserve int64
	since   int64
	at      time.Time
}

// need reports ENOSPC when writing n more bytes would eat into the
// reserve. A nil guard never refuses.
func (g *spaceGuard) need(n int) error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.at.IsZero() || g.since >= spaceCheckBytes || time.Since(g.at) > spaceCheckAge {
		var st syscall.Statfs_t
		if err := syscall.Statfs(g.dir, &st); err != nil {
			return nil // cannot tell: let the write itself find out
		}
		total := int64(st.Blocks) * st.Bsize
		g.free = int64(st.Bavail) * st.Bsize
		g.reserve = Reserve(total)
		g.since, g.at = 0, time.Now()
	}
	if g.free-int64(n) < g.reserve {
		return syscall.ENOSPC
	}
	g.free -= int64(n)
	g.since += int64(n)
	return nil
}

// Reserve is the free space kept on a filesystem of total bytes: a write
// that would eat into it is ENOSPC (statfs leaves it out of what is
// available).
func Reserve(total int64) int64 { return min(max(total/10, reserveMin), reserveMax) }
