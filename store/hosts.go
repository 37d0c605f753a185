package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

// Hosts of a shared store. Each store opened on a shared KV names itself
// (host name, pid and a random tag) and keeps a presence lease in the
// store ("s" + "lease/host/<id>", lease.go), renewed by the flusher well
// within presenceTTL. A file unlinked while open is an orphan whose key
// holds the id of the host that has it open (remove.go, rename.go): that
// host frees it at the last close; an orphan of a host whose presence
// lapsed (it was killed, or cut off for good) is freed by any other host's
// sweep (at start, then every sweepEvery). On a store of one host the
// orphan keys stay empty and are freed at start, as before.

// presenceTTL bounds how long a silent host's orphans are kept.
var presenceTTL = time.Minute

const sweepEvery = time.Minute

func newHostID() string {
	h, _ := os.Hostname()
	var r [4]byte
	rand.Read(r[:])
	return fmt.Sprintf("%s/%d/%s", h, os.Getpid(), hex.EncodeToString(r[:]))
}

// orphanTag is what an orphan key holds: this host's id on a shared store.
func (s *Store) orphanTag() []byte {
	if !s.shared {
		return nil
	}
	return []byte(s.hostID)
}

// renewPresence takes or renews this host's presence lease.
func (s *Store) renewPresence() error {
	if !s.shared || s.opts.ReadOnly {
		return nil
	}
	_, _, err := s.TakeLease("host/"+s.hostID, s.hostID, presenceTTL)
	return err
}

// alive reports whether host id's presence lease has not lapsed.
func (s *Store) alive(id string) (bool, error) {
	ok := false
	err := s.kv.View(func(t backend.Txn) error {
		v, err := t.Get(backend.StoreKey("lease/host/" + id))
		if errors.Is(err, backend.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = leaseLive(v)
		return nil
	})
	return ok, err
}

// hostsSeen remembers, for one sweep, which hosts' presence was found.
type hostsSeen map[string]bool

// up is alive, asked once a host per sweep.
func (s *Store) up(id string, seen hostsSeen) (bool, error) {
	if v, ok := seen[id]; ok {
		return v, nil
	}
	v, err := s.alive(id)
	if err == nil {
		seen[id] = v
	}
	return v, err
}

// sweepOrphans frees the orphans of hosts that are no longer there.
func (s *Store) sweepOrphans() error {
	if !s.shared || s.opts.ReadOnly {
		return nil
	}
	owners := map[uint64]string{}
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.OrphanPrefix(), nil, false, func(k, v []byte) bool {
			owners[backend.KeyIno(k)] = string(v)
			return true
		})
	})
	if err != nil {
		return err
	}
	seen := hostsSeen{}
	for ino, id := range owners {
		if id == "" || id == s.hostID {
			continue // unknown (a single host's store before) or ours
		}
		if live, err := s.up(id, seen); err != nil {
			return err
		} else if live {
			continue
		}
		s.mu.Lock()
		err := s.purge(ino)
		s.unlock()
		if err != nil {
			return fmt.Errorf("freeing inode %d, orphaned by %s: %w", ino, id, err)
		}
		s.log.Printf("freed inode %d, unlinked while open on %s, which is gone", ino, id)
	}
	return nil
}

// hostChores, on the flusher's clock: the presence lease renewed (every
// tick: 5 s, well within presenceTTL), the orphans of lapsed hosts swept
// every sweepEvery. Errors are left to the next tick (an outage is said
// once by the KV).
func (s *Store) hostChores() {
	if !s.shared || s.opts.ReadOnly {
		return
	}
	if err := s.renewPresence(); err != nil && !errors.Is(err, backend.ErrUnavailable) {
		s.log.Printf("renewing this host's presence: %v", err)
	}
	if time.Since(s.lastSweep) < sweepEvery {
		return
	}
	s.lastSweep = time.Now()
	if err := s.sweepOrphans(); err != nil && !errors.Is(err, backend.ErrUnavailable) {
		s.log.Printf("freeing gone hosts' orphans: %v", err)
	}
	if err := s.sweepStages(); err != nil && !errors.Is(err, backend.ErrUnavailable) {
		s.log.Printf("collecting replaced content: %v", err)
	}
}

// startUp repairs what a crash left: orphans, the chunks of staged
// rewrites that did not commit and of content they replaced (stage.go),
// blob files, live marks. On a shared store an orphan or a stage may be
// another host's open file: only those of hosts that are gone are freed.
func (s *Store) startUp() error {
	if s.shared {
		if err := s.renewPresence(); err != nil {
			return err
		}
		if err := s.sweepOrphans(); err != nil {
			return err
		}
		s.lastSweep = time.Now() // the flusher's next sweep is sweepEvery from now (it starts after this)
	} else {
		if err := s.undoLoad(); err != nil { // a killed import's (bulkundo.go)
			return err
		}
		if err := s.cleanOrphans(); err != nil {
			return err
		}
	}
	if err := s.sweepStages(); err != nil {
		return err
	}
	if err := s.cleanBlobs(); err != nil {
		return err
	}
	return s.settleLiveMarks()
}
