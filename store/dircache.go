package store

import (
	"sort"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// The directory cache holds whole listings in memory, so lookups (found or
// missing), listings and emptiness checks never reach the backend after a
// directory's first use. Every change of an entry updates it under dcMu
// after the change is committed.
//
// Loading races with changes: a loader notes dcEpoch, scans the backend, and
// installs its listing only if no change happened meanwhile (every change
// bumps dcEpoch under dcMu); otherwise it uses its scan once without keeping
// it. A change committed before the loader noted the epoch is in its scan; a
// change applied after the install updates the installed listing.

type dirent struct {
	ino  uint64
	mode uint32
}

type listing struct {
	m      map[string]dirent
	sorted []Dirent // nil when stale
}

// listing returns the cached listing of dir, loading it. The result is
// shared: read it under dcMu.
func (s *Store) listing(dir uint64) (*listing, error) {
	s.dcMu.RLock()
	l := s.dc[dir]
	epoch := s.dcEpoch
	s.dcMu.RUnlock()
	if l != nil {
		return l, nil
	}
	l = &listing{m: map[string]dirent{}}
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.DirentPrefix(dir), nil, false, func(k, v []byte) bool {
			if ino, mode, err := decodeDirent(v); err == nil {
				l.m[backend.DirentName(k)] = dirent{ino, mode}
			}
			return true
		})
	})
	if err != nil {
		return nil, err
	}
	s.dcMu.Lock()
	if c := s.dc[dir]; c != nil {
		l = c
	} else if s.dcEpoch == epoch {
		s.dc[dir] = l
	}
	s.dcMu.Unlock()
	return l, nil
}

// lookup finds name in dir through the cache.
func (s *Store) lookup(dir uint64, name string) (uint64, uint32, error) {
	l, err := s.listing(dir)
	if err != nil {
		return 0, 0, err
	}
	s.dcMu.RLock()
	e, ok := l.m[name]
	s.dcMu.RUnlock()
	if !ok {
		return 0, 0, syscall.ENOENT
	}
	return e.ino, e.mode, nil
}

// ReadDir lists directory dir in name order.
func (s *Store) ReadDir(dir uint64) ([]Dirent, error) {
	ents, err := s.readDir(dir)
	if err != nil {
		return nil, err
	}
	return s.visibleEntries(ents), nil
}

// readDir is ReadDir without isolation.
func (s *Store) readDir(dir uint64) ([]Dirent, error) {
	l, err := s.listing(dir)
	if err != nil {
		return nil, err
	}
	s.dcMu.RLock()
	out := l.sorted
	s.dcMu.RUnlock()
	if out != nil {
		return out, nil
	}
	s.dcMu.Lock()
	defer s.dcMu.Unlock()
	if l.sorted == nil {
		out = make([]Dirent, 0, len(l.m))
		for name, e := range l.m {
			out = append(out, Dirent{name, e.ino, e.mode})
		}
		sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
		l.sorted = out
	}
	return l.sorted, nil
}

func (s *Store) isEmpty(dir uint64) (bool, error) {
	l, err := s.listing(dir)
	if err != nil {
		return false, err
	}
	s.dcMu.RLock()
	defer s.dcMu.RUnlock()
	return len(l.m) == 0, nil
}

// dcSet records a committed new or changed entry.
func (s *Store) dcSet(dir uint64, name string, ino uint64, mode uint32) {
	s.dcMu.Lock()
	s.dcEpoch++
	if l := s.dc[dir]; l != nil {
		l.m[name] = dirent{ino, mode}
		l.sorted = nil
	}
	s.dcMu.Unlock()
}

// dcDel records a committed removal of an entry.
func (s *Store) dcDel(dir uint64, name string) {
	s.dcMu.Lock()
	s.dcEpoch++
	if l := s.dc[dir]; l != nil {
		delete(l.m, name)
		l.sorted = nil
	}
	s.dcMu.Unlock()
}

// dcDrop forgets a directory's listing (removed, or repaired by fsck).
func (s *Store) dcDrop(dir uint64) {
	s.dcMu.Lock()
	s.dcEpoch++
	delete(s.dc, dir)
	s.dcMu.Unlock()
}

// dcReset forgets every listing.
func (s *Store) dcReset() {
	s.dcMu.Lock()
	s.dcEpoch++
	s.dc = map[uint64]*listing{}
	s.dcMu.Unlock()
}
