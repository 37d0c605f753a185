package views

import "strings"

// path is the canonical path of a memory, from a memo of directory paths
// kept until the catalog changes (every move bumps the generation), so
// filtering many memories does not walk the same parents again and again.
// entryPath is where a memory is, as its catalog entry says (its first
// link, kept up to date as it moves; its directory's path is looked up).
func (e *Engine) entryPath(ent *Entry) (string, error) {
	dir, err := e.dirPath(ent.parent)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(dir, "/") + "/" + ent.name, nil
}

func (e *Engine) dirPath(dir uint64) (string, error) {
	// Keyed by the moves applied, not the catalog's generation, which
	// every memory indexed changes: a new map each time was a quarter of a
	// gigabyte of garbage in a 1M build.
	gen := e.moves.Load()
	e.pathMu.Lock()
	if e.paths == nil || e.pathGen != gen {
		e.paths, e.pathGen = map[uint64]string{}, gen
	}
	p, ok := e.paths[dir]
	e.pathMu.Unlock()
	if ok {
		return p, nil
	}
	p, err := e.st.Path(dir)
	if err != nil {
		return "", err
	}
	e.pathMu.Lock()
	if len(e.paths) < 1<<16 && e.pathGen == gen { // not if a move came meanwhile
		e.paths[dir] = p
	}
	e.pathMu.Unlock()
	return p, nil
}

// hiddenAt reports whether a memory named name in directory parent is
// left out of the unfiltered views (under /archive, or no path).
func (e *Engine) hiddenAt(parent uint64, name string) bool {
	dir, err := e.dirPath(parent)
	return err != nil || archived(strings.TrimSuffix(dir, "/")+"/"+name)
}
