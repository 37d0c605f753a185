package fusefs

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/views"
)

// searchDir is search/: every name looked up in it is a query. Nothing is
// stored; the listing shows only the help file (views.HelpName).
type searchDir struct {
	genDir
	scope scopeFn
	key   string
}

func (s *searchDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if name == views.HelpName {
		return s.helpChild(ctx, s.key, "search", out), 0
	}
	q, err := views.ParseQuery(name)
	if err != nil {
		return nil, syscall.EINVAL
	}
	if inMkdir(ctx) {
		// mkdir "search/new query": the kernel makes a name it finds
		// with EEXIST, so the query is made by Mkdir instead.
		return nil, syscall.ENOENT
	}
	return s.query(ctx, name, q, out), 0
}

// query returns the directory of the query q, named name.
func (s *searchDir) query(ctx context.Context, name string, q views.Query, out *fuse.EntryOut) *fs.Inode {
	key := s.key + "/" + name
	ch := s.child(ctx, key, &queryDir{genDir: genDir{fsys: s.fsys}, scope: s.scope, q: q, key: key}, out)
	out.SetEntryTimeout(uncached)
	return ch
}

// Mkdir of a query is the query: nothing is made, and it is there.
func (s *searchDir) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	q, err := views.ParseQuery(name)
	if err != nil || name == views.HelpName {
		return nil, syscall.EINVAL
	}
	return s.query(ctx, name, q, out), 0
}

func (s *searchDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	return helpListing(s.key), 0
}

// helpListing is the listing of search/ and context/: the help file.
func helpListing(key string) fs.DirStream {
	return fs.NewListDirStream([]fuse.DirEntry{{Name: views.HelpName, Mode: syscall.S_IFREG, Ino: synthIno(key + "/" + views.HelpName)}})
}

// helpChild is the help file of search/ or context/ (dir) at key.
func (g *genDir) helpChild(ctx context.Context, key, dir string, out *fuse.EntryOut) *fs.Inode {
	return g.genFileChild(ctx, key+"/"+views.HelpName, func(context.Context, views.May) ([]byte, error) {
		return views.SearchHelp(dir), nil
	}, out)
}

// queryDir is search/<query>/: the ranked results as entries 01-<name>, …
// (the memories themselves; for a log's line, 01-<name>#L<n>, a generated
// file of that line and its neighbours) and a .results file.
type queryDir struct {
	genDir
	scope scopeFn
	q     views.Query
	key   string

	// mu guards the result snapshot, shared by a listing and the lookups
	// that follow it; it is recomputed when the store changed or after a
	// second.
	mu      sync.Mutex
	results []views.Result
	gen     uint64
	at      time.Time
}

// maxStale bounds how long one set of results answers lookups.
const maxStale = time.Second

// snapshot is the results for the caller: a restricted reader's are its
// own (reader.go), kept for a moment like everyone else's.
func (d *queryDir) snapshot(ctx context.Context, fresh bool) ([]views.Result, error) {
	if k, may := d.fsys.readerOf(ctx); may != nil {
		key := k + "\x00q\x00" + d.key
		var err error
		compute := func() any {
			var rs []views.Result
			rs, err = d.fsys.eng.SearchCtx(ctx, d.q, d.scope().And(views.Filter{May: may}))
			return rs
		}
		if fresh {
			d.fsys.rcache.forget(key)
		}
		rs := d.fsys.rcache.get(key, d.fsys.eng.Gen(), compute).([]views.Result)
		if err != nil {
			d.fsys.rcache.forget(key) // an interrupted search is no answer
		}
		return rs, err
	}
	return d.shared(ctx, fresh)
}

// shared is the results for unrestricted callers.
func (d *queryDir) shared(ctx context.Context, fresh bool) ([]views.Result, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	gen := d.fsys.eng.Gen()
	if fresh || d.results == nil || gen != d.gen || time.Since(d.at) > maxStale {
		rs, err := d.fsys.eng.SearchCtx(ctx, d.q, d.scope())
		if err != nil {
			return nil, err
		}
		d.results = rs
		d.gen, d.at = gen, time.Now()
	}
	return d.results, nil
}

func (d *queryDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	defer observe(latSearch, time.Now())
	rs, err := d.snapshot(ctx, true)
	if err != nil {
		return nil, errno(err)
	}
	list := []fuse.DirEntry{{Name: ".results", Mode: syscall.S_IFREG, Ino: synthIno(d.key + "/.results")}}
	for _, r := range rs {
		ino := r.Ino
		if r.Line > 0 {
			ino = synthIno(d.lineKey(r))
		}
		list = append(list, fuse.DirEntry{Name: views.EntryName(r), Ino: ino, Mode: syscall.S_IFREG})
	}
	return rewindable(fs.NewListDirStream(list), d.Readdir), 0
}

// OpendirHandle: an open search/<query>/ lists the results and answers
// a READDIRPLUS's lookups (plusHandle).
func (d *queryDir) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return &plusHandle{d: d}, 0, 0
}

// plusHandle is an open search/<query>/: its listing, read at the first
// read, and the lookups of a READDIRPLUS, which decline the generated
// entries (errDeclined: they go out without attributes).
type plusHandle struct {
	d  *queryDir
	ds fs.DirStream
}

var (
	_ fs.FileReaddirenter = (*plusHandle)(nil)
	_ fs.FileLookuper     = (*plusHandle)(nil)
	_ fs.FileSeekdirer    = (*plusHandle)(nil)
	_ fs.FileReleasedirer = (*plusHandle)(nil)
)

func (h *plusHandle) open(ctx context.Context) syscall.Errno {
	if h.ds == nil {
		ds, errno := h.d.Readdir(ctx)
		if errno != 0 {
			return errno
		}
		h.ds = ds
	}
	return 0
}

func (h *plusHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if errno := h.open(ctx); errno != 0 {
		return nil, errno
	}
	if !h.ds.HasNext() {
		return nil, 0
	}
	e, errno := h.ds.Next()
	return &e, errno
}

func (h *plusHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if errno := h.open(ctx); errno != 0 {
		return errno
	}
	if sd, ok := h.ds.(fs.FileSeekdirer); ok {
		return sd.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}

func (h *plusHandle) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return h.d.lookup(ctx, name, out, true)
}

func (h *plusHandle) Releasedir(ctx context.Context, flags uint32) {
	if h.ds != nil {
		h.ds.Close()
	}
}

// lineKey names the result file of a log's line in this query directory:
// one inode per line and directory, whatever its rank (its content
// depends on the directory's scope, not on the rank).
func (d *queryDir) lineKey(r views.Result) string {
	return fmt.Sprintf("%s/\x00line/%d/%d", d.key, r.Ino, r.Line)
}

func (d *queryDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return d.lookup(ctx, name, out, false)
}

// errDeclined is what a READDIRPLUS's lookup of a generated entry (plus)
// answers: its size is its content (snippets, or a log's lines, read from
// the store), not worth computing for a listing that shows names. An
// entry without a node leaves it to a lookup, made if the name is used
// (fuse_direntplus_link).
const errDeclined = syscall.EAGAIN

func (d *queryDir) lookup(ctx context.Context, name string, out *fuse.EntryOut, plus bool) (*fs.Inode, syscall.Errno) {
	if name == ".results" {
		if plus {
			return nil, errDeclined
		}
		return d.genFileChild(ctx, d.key+"/.results", func(ctx context.Context, may views.May) ([]byte, error) {
			rs, err := d.snapshot(ctx, false)
			return views.ResultsText(d.q, d.fsys.eng.WithSnippets(d.q, rs)), err
		}, out), 0
	}
	rs, err := d.snapshot(ctx, false)
	if err != nil {
		return nil, errno(err)
	}
	for _, r := range rs {
		if views.EntryName(r) != name {
			continue
		}
		if r.Line > 0 {
			if plus {
				return nil, errDeclined
			}
			// A log's line: a generated file of the line and its
			// neighbours, computed at each open for the caller.
			ino, line := r.Ino, r.Line
			return d.genFileChild(ctx, d.lineKey(r), func(ctx context.Context, may views.May) ([]byte, error) {
				return d.fsys.eng.LineResult(ino, line, d.scope().And(d.q.Filter).And(views.Filter{May: may}))
			}, out), 0
		}
		i, err := d.fsys.st.Attr(r.Ino)
		if err != nil {
			return nil, errno(err)
		}
		ch := d.fsys.newNode(ctx, d.EmbeddedInode(), &i, out)
		out.SetEntryTimeout(uncached) // ranks move as memories change
		return ch, 0
	}
	return nil, syscall.ENOENT
}

// contextDir is context/: every name looked up in it is a query whose file
// holds the matching memories and the newest working/ ones, in a budget.
type contextDir struct {
	genDir
	scope scopeFn
	key   string
}

func (c *contextDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if name == views.HelpName {
		return c.helpChild(ctx, c.key, "context", out), 0
	}
	q, err := views.ParseQuery(name)
	if err != nil {
		return nil, syscall.EINVAL
	}
	return c.genFileChild(ctx, c.key+"/"+name, func(ctx context.Context, may views.May) ([]byte, error) {
		return c.fsys.eng.ContextCtx(ctx, q, c.scope().And(views.Filter{May: may}))
	}, out), 0
}

func (c *contextDir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	return helpListing(c.key), 0
}
