package fusefs

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"

	"github.com/mnemofs/mnemofs/views"
)

// The views as one caller sees them: the engine's cached listings for an
// unrestricted caller, and for a restricted reader (reader.go) listings
// computed over the memories it may read, kept for a moment so that the
// lookups of a READDIRPLUS do not recompute them entry by entry.

// values lists the distinct values of field among the memories the caller
// may see, sorted.
func (f *FS) values(ctx context.Context, field string) []string {
	return f.eng.Values(field, views.Filter{May: f.reader(ctx)})
}

// hasValue reports whether some memory the caller may see has value v of
// field.
func (f *FS) hasValue(ctx context.Context, field, v string) bool {
	if k, may := f.readerOf(ctx); may != nil {
		set := f.rcache.get(k+"\x00"+field, f.eng.Gen(), func() any {
			return valueSet(f.eng.Values(field, views.Filter{May: may}))
		}).(map[string]bool)
		return set[v]
	}
	return f.eng.HasValue(field, v)
}

// dateNames lists the names one level below the by-date/ prefix ("",
// "2024", "2024/05") that lead to memories the caller may see.
func (f *FS) dateNames(ctx context.Context, prefix string) []string {
	may := f.reader(ctx)
	if may == nil {
		return f.eng.DateNames(prefix)
	}
	seen := map[string]bool{}
	var out []string
	for _, day := range f.eng.Values("date", views.Filter{May: may}) {
		if prefix != "" && !strings.HasPrefix(day, prefix+"/") {
			continue
		}
		part, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(day, prefix), "/"), "/")
		if !seen[part] {
			seen[part] = true
			out = append(out, part)
		}
	}
	return out
}

// hasDate reports whether name one level below prefix leads to memories
// the caller may see.
func (f *FS) hasDate(ctx context.Context, prefix, name string) bool {
	k, may := f.readerOf(ctx)
	if may == nil {
		return f.eng.HasDate(strings.TrimPrefix(prefix+"/"+name, "/"))
	}
	set := f.rcache.get(k+"\x00date\x00"+prefix, f.eng.Gen(), func() any {
		return valueSet(f.dateNames(ctx, prefix))
	}).(map[string]bool)
	return set[name]
}

// dirsWith is the engine's DirsWith for the caller.
func (f *FS) dirsWith(ctx context.Context, viewKey string, filter views.Filter) (map[uint64]bool, error) {
	k, may := f.readerOf(ctx)
	if may == nil {
		return f.eng.DirsWithCtx(ctx, filter)
	}
	filter = filter.And(views.Filter{May: may})
	var err error
	dirs := f.rcache.get(k+"\x00dirs\x00"+viewKey, f.eng.Gen(), func() any {
		var d map[uint64]bool
		d, err = f.eng.DirsWithCtx(ctx, filter)
		return d
	}).(map[uint64]bool)
	if err != nil {
		f.rcache.forget(k + "\x00dirs\x00" + viewKey)
	}
	return dirs, err
}

// viewTTL is how long the kernel may cache a view's entries: the tree's
// ttl, so that walking a view costs what walking the tree does. A memory
// that leaves a view has its cached view entries dropped at once
// (viewLinks); a view directory that empties stays listed, empty, for at
// most ttl. Under --allow-other nothing in a view is cached: a cached
// entry would answer every reader alike.
func (f *FS) viewTTL() time.Duration {
	if f.allowOther {
		return uncached
	}
	return ttl
}

// viewLinks remembers the view entries the kernel caches for each memory
// (for ttl), so that a change of the memory drops them: it may have left
// the views it was in.
type viewLinks struct {
	mu sync.Mutex
	m  map[uint64][]viewLink
	n  int
}

type viewLink struct {
	dir  *fs.Inode
	name string
	at   time.Time
}

// add records that dir/name (a view entry of the memory ino) is cached.
func (l *viewLinks) add(ino uint64, dir *fs.Inode, name string) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || l.n > 1<<16 {
		// Prune what the kernel no longer caches (older than ttl).
		old := l.m
		l.m, l.n = map[uint64][]viewLink{}, 0
		for k, ls := range old {
			for _, x := range ls {
				if now.Sub(x.at) < ttl {
					l.m[k] = append(l.m[k], x)
					l.n++
				}
			}
		}
	}
	for k, x := range l.m[ino] {
		if x.dir == dir && x.name == name {
			l.m[ino][k].at = now
			return
		}
	}
	l.m[ino] = append(l.m[ino], viewLink{dir, name, now})
	l.n++
}

// take returns and forgets the cached view entries of ino.
func (l *viewLinks) take(ino uint64) []viewLink {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := l.m[ino]
	delete(l.m, ino)
	l.n -= len(ls)
	return ls
}

// anyMemory keys the cached view directories in viewLinks: any change of
// any memory may empty one.
const anyMemory = 0

// memoryChanged drops the kernel's cached view entries of ino and every
// cached view directory (the views engine calls it as the store reports
// the change, before the call that made it returns; the lookups that
// follow wait for the engine to apply it).
//
// It waits until the kernel has dropped them, so that a stat after the
// write returns never sees a memory in a view it left. That is safe here:
// the change was made with no store lock held, and what the kernel locks
// to drop a view entry is the generated directory, which no request that
// waits for this one can hold (a lookup there waits at most for the views
// engine, which waits for nothing this request holds).
func (f *FS) memoryChanged(ino uint64) {
	sent := false
	for _, key := range []uint64{ino, anyMemory} {
		for _, l := range f.viewLinks.take(key) {
			f.notify.viewEntry(l.dir, l.name)
			sent = true
		}
	}
	if sent {
		f.notify.Drain()
	}
}
