package store

import "github.com/mnemofs/mnemofs/backend"

// problemFunc records a problem fsck found, and its fix (nil: none).
type problemFunc func(fix func() error, f string, a ...any)

// fsckChunkSets checks the chunk sets no inode points at (stage.go). A
// stage being written and garbage within its grace are left alone (the
// sweeps collect garbage; it is no problem). A stage nothing writes any
// more (a rewrite cut off by a crash, on a host that is gone), chunks no
// marker names (of a missing inode, or left by a crash) and markers of
// abandoned stages with no chunks are problems, removed by repair.
func (s *Store) fsckChunkSets(r *FsckReport, inodes map[uint64]*Inode, chunks map[uint64][]uint32, problem problemFunc) error {
	refs := map[uint64]bool{}
	for _, i := range inodes {
		if i.IsReg() {
			refs[i.chunkID()] = true
		}
	}
	marks, err := s.stageMarks()
	if err != nil {
		return err
	}
	byID := make(map[uint64]stageMark, len(marks))
	for _, m := range marks {
		byID[m.id] = m
	}
	alive := hostsSeen{}
	for id, cs := range chunks {
		r.Chunks += len(cs)
		if refs[id] {
			continue
		}
		m, marked := byID[id]
		switch {
		case !marked && inodes[id] == nil:
			problem(func() error { return s.dropChunkSet(id) }, "%d chunks of missing inode %d", len(cs), id)
		case !marked:
			problem(func() error { return s.dropChunkSet(id) }, "%d chunks of inode %d, which holds its content in %d", len(cs), id, inodes[id].chunkID())
		case m.state != stageGarbage:
			gone, err := s.abandoned(m, alive)
			if err != nil {
				return err
			}
			if gone {
				problem(func() error { _, err := s.collect(m); return err }, "the %v: %d chunks of a rewrite that did not commit", m, len(cs))
			}
		}
	}
	for _, m := range marks {
		if _, has := chunks[m.id]; has || m.state == stageGarbage || refs[m.id] {
			continue
		}
		gone, err := s.abandoned(m, alive)
		if err != nil {
			return err
		}
		if gone {
			problem(func() error { return s.kvDelete(backend.StageKey(m.id)) }, "the %v has no chunks", m)
		}
	}
	return nil
}
