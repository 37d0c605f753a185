package fusefs

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// Readers (--allow-other): the kernel checks every real node's mode for a
// local user other than the mount's owner, but generated nodes mix many
// memories. Each request from such a user gets a views.May that keeps only
// the memories that user may read (store.ReadableBy), and every generated
// listing and file is computed with it: each uid sees its own version.
// Requests of the mount's owner and of root are not restricted (they own
// the data directory, or can read it anyway), and without --allow-other
// the kernel lets no one else in.

// reader returns what the caller of a request may see; nil when the caller
// is not restricted.
func (f *FS) reader(ctx context.Context) views.May {
	_, may := f.readerOf(ctx)
	return may
}

// readerOf returns the caller's key for per-reader caches and what it may
// see ("", nil when not restricted). The predicate is kept for readerTTL,
// so that the requests of one listing share its memo of directories.
func (f *FS) readerOf(ctx context.Context) (string, views.May) {
	if !f.allowOther {
		return "", nil
	}
	c, ok := fuse.FromContext(ctx)
	if !ok || c.Uid == 0 || c.Uid == f.ownerUid {
		return "", nil
	}
	cred := store.Cred{Uid: c.Uid, Gid: c.Gid, Groups: groupsOf(c.Pid, c.Gid)}
	key := fmt.Sprintf("%d:%d:%v", cred.Uid, cred.Gid, cred.Groups)
	may := f.rcache.get(key+"\x00may", 0, func() any { return views.May(f.st.ReadableBy(cred)) }).(views.May)
	return key, may
}

// groupsOf reads the supplementary groups of process pid (the kernel does
// not pass them with a request). When they cannot be read, only the
// primary group counts: fewer groups never grant more.
func groupsOf(pid uint32, gid uint32) []uint32 {
	if pid == 0 {
		return nil
	}
	fh, err := os.Open("/proc/" + strconv.FormatUint(uint64(pid), 10) + "/status")
	if err != nil {
		return nil
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "Groups:")
		if !ok {
			continue
		}
		var out []uint32
		for _, g := range strings.Fields(rest) {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil && uint32(n) != gid {
				out = append(out, uint32(n))
			}
		}
		return out
	}
	return nil
}

// readerCache keeps what was computed for a restricted reader (its
// predicate, its listings of a generated directory) for a moment, so that
// the lookups of a READDIRPLUS do not recompute them entry by entry.
type readerCache struct {
	mu sync.Mutex
	m  map[string]readerEntry
}

type readerEntry struct {
	at  time.Time
	gen uint64
	val any
}

// readerTTL bounds how long a reader's answers are reused (modes can
// change without the catalog changing).
const readerTTL = time.Second

// get returns the value for key at catalog generation gen, computing it
// when missing or stale.
func (c *readerCache) get(key string, gen uint64, compute func() any) any {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && e.gen == gen && time.Since(e.at) < readerTTL {
		return e.val
	}
	v := compute()
	c.mu.Lock()
	if c.m == nil || len(c.m) > 1024 {
		c.m = map[string]readerEntry{}
	}
	c.m[key] = readerEntry{time.Now(), gen, v}
	c.mu.Unlock()
	return v
}

// forget drops what is kept for key.
func (c *readerCache) forget(key string) {
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}

// valueSet is a listing kept as a set.
func valueSet(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, v := range list {
		m[v] = true
	}
	return m
}
