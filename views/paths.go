package views

import (
	"strings"
	"sync"
	"sync/atomic"
)

// Paths are not stored in the catalog: a memory's is its directory's
// path and its name (the entry's first link, kept up to date as it
// moves), and directories' paths come from a memo, so that filtering many
// memories does not walk the same parents again and again.

// dirPaths is the memo of directory paths, valid while no move is
// applied. Its lock, mu, is taken alone: the store is asked without it.
type dirPaths struct {
	src interface {
		Path(ino uint64) (string, error)
	}
	// mu guards memo, the paths as of gen moves (moves counts the moves
	// applied).
	mu    sync.Mutex
	memo  map[uint64]string
	gen   uint64
	moves atomic.Uint64
}

// bind gives the memo the store it asks for paths.
func (d *dirPaths) bind(src interface {
	Path(ino uint64) (string, error)
}) {
	d.src = src
}

// moved drops the memo: a move was applied.
func (d *dirPaths) moved() { d.moves.Add(1) }

// path is the path of the directory dir.
func (d *dirPaths) path(dir uint64) (string, error) {
	// Keyed by the moves applied, not the catalog's generation, which
	// every memory indexed changes: a new map each time was a quarter of a
	// gigabyte of garbage in a 1M build.
	gen := d.moves.Load()
	d.mu.Lock()
	if d.memo == nil || d.gen != gen {
		d.memo, d.gen = map[uint64]string{}, gen
	}
	p, ok := d.memo[dir]
	d.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := d.src.Path(dir)
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	if len(d.memo) < 1<<16 && d.gen == gen { // not if a move came meanwhile
		d.memo[dir] = p
	}
	d.mu.Unlock()
	return p, nil
}

// entryPath is where a memory is, as its catalog entry says.
func (c *catalog) entryPath(ent *Entry) (string, error) {
	dir, err := c.paths.path(ent.parent)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(dir, "/") + "/" + ent.name, nil
}

// hiddenAt reports whether a memory named name in directory parent is
// left out of the unfiltered views (under /archive, or no path).
func (c *catalog) hiddenAt(parent uint64, name string) bool {
	dir, err := c.paths.path(parent)
	return err != nil || archived(strings.TrimSuffix(dir, "/")+"/"+name)
}
