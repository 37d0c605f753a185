package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/mnemofs/mnemofs/backend"
)

// The markers of chunk sets no inode points at, and their collection
// (stage.go).

// stageMark is one decoded stage marker.
type stageMark struct {
	id    uint64
	raw   string
	state byte      // stageWriting, stageGarbage or stageCollecting
	host  string    // writing or collecting: the host doing it
	since time.Time // garbage: since when
	ino   uint64    // garbage: the inode whose content it was
}

func (m stageMark) String() string {
	switch m.state {
	case stageGarbage:
		return fmt.Sprintf("replaced content %d of inode %d", m.id, m.ino)
	case stageCollecting:
		return fmt.Sprintf("content %d being collected by %s", m.id, m.host)
	}
	return fmt.Sprintf("staged content %d written by %q", m.id, m.host)
}

func decodeMark(id uint64, v []byte) stageMark {
	m := stageMark{id: id, raw: string(v), state: stageWriting}
	if len(v) > 0 {
		m.state = v[0]
		m.host = string(v[1:])
	}
	if m.state == stageGarbage && len(v) == 17 {
		m.host = ""
		m.since = time.Unix(0, int64(binary.BigEndian.Uint64(v[1:])))
		m.ino = binary.BigEndian.Uint64(v[9:])
	}
	return m
}

func garbageMark(now time.Time, ino uint64) []byte {
	v := binary.BigEndian.AppendUint64([]byte{stageGarbage}, uint64(now.UnixNano()))
	return binary.BigEndian.AppendUint64(v, ino)
}

// getMark reads the marker of chunk set id in t; nil if there is none.
func getMark(t backend.Txn, id uint64) (*stageMark, error) {
	v, err := t.Get(backend.StageKey(id))
	if errors.Is(err, backend.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m := decodeMark(id, v)
	return &m, nil
}

func (s *Store) stageMarks() ([]stageMark, error) {
	var marks []stageMark
	err := s.kv.View(func(t backend.Txn) error {
		return t.Scan(backend.StagePrefix(), nil, false, func(k, v []byte) bool {
			marks = append(marks, decodeMark(backend.KeyIno(k), v))
			return true
		})
	})
	return marks, err
}

// abandoned reports whether the marked chunk set may be collected now: it
// is garbage (on a shared store, older than garbageGrace), or a stage (or
// a collection) that nothing does any more: on a store of one host, none
// that an open state here writes; on a shared store, its host is gone, or
// it is this host's and no open state holds it.
func (s *Store) abandoned(m stageMark, seen hostsSeen) (bool, error) {
	if m.state == stageGarbage {
		return !s.shared || time.Since(m.since) > s.grace, nil
	}
	s.stageMu.Lock()
	live := s.stageLive[m.id]
	s.stageMu.Unlock()
	if live {
		return false, nil
	}
	if !s.shared || m.host == s.hostID || m.host == "" {
		return true, nil
	}
	up, err := s.up(m.host, seen)
	return !up, err
}

// errSkip: the marker changed under a collection, which leaves it.
var errSkip = errors.New("skip")

// collect deletes an abandoned chunk set. On a shared store its marker is
// first set to collecting, in a transaction that finds it unchanged and,
// for garbage, finds that its inode did not move back to it (then only the
// marker goes); a staged rewrite of another host copying from it then fails
// (errBaseGone) rather than commit what the collection deleted. It reports
// whether it deleted the chunk set.
func (s *Store) collect(m stageMark) (bool, error) {
	if s.shared {
		err := s.kv.Update(func(t backend.Txn) error {
			cur, err := getMark(t, m.id)
			if err != nil {
				return err
			}
			if cur == nil || cur.raw != m.raw {
				return errSkip
			}
			if m.state == stageGarbage {
				if i, err := storedInode(t, m.ino); err != nil {
					return err
				} else if i != nil && i.chunkID() == m.id {
					if err := t.Delete(backend.StageKey(m.id)); err != nil {
						return err
					}
					return errSkip
				}
			}
			return t.Set(backend.StageKey(m.id), append([]byte{stageCollecting}, s.hostID...))
		})
		if errors.Is(err, errSkip) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	return true, s.dropChunkSet(m.id)
}

// sweepStages collects garbage and the stages nothing writes any more.
func (s *Store) sweepStages() error {
	if s.opts.ReadOnly {
		return nil
	}
	marks, err := s.stageMarks()
	if err != nil {
		return err
	}
	alive := hostsSeen{}
	for _, m := range marks {
		gone, err := s.abandoned(m, alive)
		if err != nil {
			return err
		}
		if !gone {
			continue
		}
		done, err := s.collect(m)
		if err != nil {
			return fmt.Errorf("collecting the %v: %w", m, err)
		}
		if done && m.state == stageWriting {
			s.log.Printf("removed the %v: a rewrite that did not commit (the file kept the content it had before)", m)
		}
	}
	return nil
}
