package store

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/mnemofs/mnemofs/memory"
)

// Views for one user (ForUser). A process that holds a store for every
// user (a mount without --user, an MCP server for many agents) serves
// each user through a view: a *Store that shares everything with the
// store it was made from (the KV, every cache, every lock, the write
// states, the change events and the kernel's notifier), and whose
// Options.User is that user. So a view isolates exactly as a store opened
// for the user does (isolation.go: the same code reads Options.User),
// its writes are the store's writes (a mount serving the kernel from the
// same store sees them at once), and nothing is loaded or indexed twice.
// What depends on the user is the view's own: the lines of shared logs
// its user sees (proj, lines).

// ForUser returns the store as a store opened for user u shows it (u ""
// for every user). A store opened for one user has no view for another:
// a view narrows, it never widens. A view is not closed; the store is,
// after the last use of its views.
func (s *Store) ForUser(u string) (*Store, error) {
	if s.opts.User != "" && u != s.opts.User {
		return nil, fmt.Errorf("this store is open for user %s only: it has no view for %s", s.opts.User, forWhom(u))
	}
	if u != "" && !ValidName(u) {
		return nil, fmt.Errorf("%q is not a user name (one usable as a file name)", u)
	}
	v := &Store{core: s.core, opts: s.opts, view: true}
	v.opts.User = u
	return v, nil
}

func forWhom(u string) string {
	if u == "" {
		return "every user"
	}
	return "user " + u
}

// SeesLine reports whether the store's user sees line n (from 1, as
// views number the lines of a log) of the memory ino: for a shared log
// (one with lines of other users), whether that line is one the user
// sees, as ReadAt shows them; for any other memory, whether the user sees
// it at all.
func (s *Store) SeesLine(ino uint64, n uint32) bool {
	u := s.opts.User
	if u == "" {
		return true
	}
	r, reg, err := s.memoryRecord(ino)
	if err != nil || !reg || !r.VisibleTo(u) {
		return false
	}
	if !r.partial(u) {
		return true
	}
	set, ok := s.lines.get(ino, r.SHA256)
	if !ok {
		if set, err = s.seenLines(ino); err != nil {
			return false
		}
		if r.SHA256 != "" {
			s.lines.put(ino, r.SHA256, set)
		}
	}
	return set[n]
}

// seenLines reads the log ino and returns the numbers of the lines the
// store's user sees (projectLines keeps the same ones).
func (s *Store) seenLines(ino uint64) (map[uint32]bool, error) {
	i, err := s.inode(ino)
	if err != nil {
		return nil, err
	}
	s.icMu.RLock()
	size, jsonLog := i.Size, false
	for _, l := range i.Links {
		jsonLog = jsonLog || memory.IsJSONLog(l.Name) // any of its names: fail closed
	}
	s.icMu.RUnlock()
	set := map[uint32]bool{}
	if size > lineScanMax {
		return set, nil // too large to show in part: none of it (partialOf)
	}
	b := make([]byte, size)
	m, err := s.readLocked(ino, nil, b, 0)
	if err != nil {
		return nil, err
	}
	for k, line := range bytes.Split(b[:m], []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && lineVisible(lineUsers(jsonLog, t), s.opts.User) {
			set[uint32(k+1)] = true
		}
	}
	return set, nil
}

// lineSets caches SeesLine's sets per log, while its content is the same
// (its sha256).
type lineSets struct {
	mu sync.Mutex
	m  map[uint64]lineSet
}

type lineSet struct {
	sha string
	set map[uint32]bool
}

func (l *lineSets) get(ino uint64, sha string) (map[uint32]bool, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.m[ino]
	return e.set, ok && sha != "" && e.sha == sha
}

func (l *lineSets) put(ino uint64, sha string, set map[uint32]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || len(l.m) > 256 {
		l.m = map[uint64]lineSet{}
	}
	l.m[ino] = lineSet{sha, set}
}
