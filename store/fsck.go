package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/mnemofs/mnemofs/backend"
)

// FsckReport is the outcome of Fsck.
type FsckReport struct {
	Inodes   int      `json:"inodes"`
	Entries  int      `json:"entries"`
	Chunks   int      `json:"chunks"`
	Problems []string `json:"problems"`
	Repaired int      `json:"repaired"`
	Clean    bool     `json:"clean"`
}

// Fsck checks that entries, inodes, content and metadata agree. With
// repair it fixes what it found: dangling entries are dropped, missing links
// re-added, unreferenced inodes moved to /archive/lost+found, stray chunks
// deleted, and stale metadata recomputed.
func (s *Store) Fsck(repair bool) (*FsckReport, error) {
	if err := s.flushAccess(); err != nil {
		return nil, err
	}
	// Passthrough sessions that ended settle first (passthrough.go);
	// one released less than ptLinger ago lingers on (the kernel may
	// still hand its backing file to the next open) and is skipped.
	s.endSessions(ptLinger)
	if err := s.settleLiveMarks(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.unlock()
	r := &FsckReport{Problems: []string{}}
	inodes := map[uint64]*Inode{}
	type ent struct {
		dir  uint64
		name string
		ino  uint64
		mode uint32
	}
	var ents []ent
	chunks := map[uint64][]uint32{}
	records := map[uint64]*Record{}
	orphans := map[uint64]bool{}
	var maxIno, hwm uint64
	err := s.kv.View(func(t backend.Txn) error {
		if v, err := t.Get(backend.StoreKey("nextino")); err == nil && len(v) == 8 {
			hwm = uint64(v[0])<<56 | uint64(v[1])<<48 | uint64(v[2])<<40 | uint64(v[3])<<32 |
				uint64(v[4])<<24 | uint64(v[5])<<16 | uint64(v[6])<<8 | uint64(v[7])
		}
		var derr error
		scan := func(p byte, fn func(k, v []byte)) {
			if derr == nil {
				derr = t.Scan([]byte{p}, nil, p == backend.PrefixChunk, func(k, v []byte) bool { fn(k, v); return true })
			}
		}
		scan(backend.PrefixInode, func(k, v []byte) {
			i, err := decodeInode(v)
			if err != nil {
				r.Problems = append(r.Problems, fmt.Sprintf("inode %d: %v", backend.KeyIno(k), err))
				return
			}
			inodes[i.Ino] = i
			maxIno = max(maxIno, i.Ino)
		})
		scan(backend.PrefixDirent, func(k, v []byte) {
			ino, mode, err := decodeDirent(v)
			if err != nil {
				r.Problems = append(r.Problems, fmt.Sprintf("entry %q: %v", backend.DirentName(k), err))
				return
			}
			ents = append(ents, ent{backend.DirentDir(k), backend.DirentName(k), ino, mode})
		})
		scan(backend.PrefixChunk, func(k, _ []byte) {
			chunks[backend.KeyIno(k)] = append(chunks[backend.KeyIno(k)], backend.ChunkIndex(k))
		})
		scan(backend.PrefixOrphan, func(k, _ []byte) {
			orphans[backend.KeyIno(k)] = true
		})
		scan(backend.PrefixMeta, func(k, v []byte) {
			rec, err := getRecord(t, backend.KeyIno(k))
			if err == nil {
				records[backend.KeyIno(k)] = rec
			}
		})
		return derr
	})
	if err != nil {
		return nil, err
	}
	r.Inodes, r.Entries = len(inodes), len(ents)
	var fixes []func() error
	problem := func(fix func() error, f string, a ...any) {
		r.Problems = append(r.Problems, fmt.Sprintf(f, a...))
		if fix != nil {
			fixes = append(fixes, fix)
		}
	}
	if maxIno >= hwm {
		problem(nil, "inode counter %d is not above the largest inode %d", hwm, maxIno)
	}
	linked := map[uint64]int{}
	subdirs := map[uint64]uint32{}
	byName := make(map[Link]uint64, len(ents))
	for _, e := range ents {
		byName[Link{e.dir, e.name}] = e.ino
	}
	for _, e := range ents {
		i := inodes[e.ino]
		p := inodes[e.dir]
		switch {
		case i == nil:
			problem(func() error { return s.kvDelete(backend.DirentKey(e.dir, e.name)) },
				"entry %q in directory %d points to missing inode %d", e.name, e.dir, e.ino)
			continue
		case p == nil || !p.IsDir():
			problem(func() error { return s.kvDelete(backend.DirentKey(e.dir, e.name)) },
				"entry %q is in %d, which is not a directory", e.name, e.dir)
			continue
		}
		linked[e.ino]++
		if i.IsDir() {
			subdirs[e.dir]++
		}
		if !hasLink(i, e.dir, e.name) {
			problem(func() error { i.addLink(e.dir, e.name); return s.update(nil, i) },
				"inode %d does not record its name %q in directory %d", e.ino, e.name, e.dir)
		}
	}
	inos := make([]uint64, 0, len(inodes))
	for ino := range inodes {
		inos = append(inos, ino)
	}
	sort.Slice(inos, func(a, b int) bool { return inos[a] < inos[b] })
	for _, ino := range inos {
		i := inodes[ino]
		if ino != RootIno && linked[ino] == 0 {
			if orphans[ino] && len(i.Links) == 0 {
				continue // unlinked while open: freed at its last close or next start
			}
			problem(func() error { return s.relink(i) }, "inode %d has no name", ino)
			continue
		}
		for _, l := range i.Links {
			if byName[Link{l.Parent, l.Name}] != ino && linked[ino] > 0 {
				problem(func() error { i.dropLink(l.Parent, l.Name); return s.update(nil, i) },
					"inode %d records a name %q with no entry", ino, l.Name)
			}
		}
		if i.IsDir() && i.Subdirs != subdirs[ino] {
			want := subdirs[ino]
			problem(func() error { i.Subdirs = want; return s.update(nil, i) },
				"directory %d counts %d subdirectories, has %d", ino, i.Subdirs, want)
		}
		if i.IsReg() {
			s.fsckContent(r, i, chunks[i.chunkID()], records[ino], problem)
		}
	}
	if err := s.fsckChunkSets(r, inodes, chunks, problem); err != nil {
		return nil, err
	}
	if err := s.fsckPacks(inodes, problem); err != nil {
		return nil, err
	}
	for ino := range records {
		if inodes[ino] == nil {
			problem(func() error { s.recs.Forget(ino); return s.kvDelete(backend.MetaKey(ino)) }, "metadata of missing inode %d", ino)
		}
	}
	if repair {
		for _, fix := range fixes {
			if err := fix(); err != nil {
				return r, fmt.Errorf("repair: %w", err)
			}
			r.Repaired++
		}
		s.dcReset()
		s.tails.Purge()
	}
	r.Clean = len(r.Problems) == 0
	return r, nil
}

func hasLink(i *Inode, dir uint64, name string) bool {
	for _, l := range i.Links {
		if l.Parent == dir && l.Name == name {
			return true
		}
	}
	return false
}

func (s *Store) fsckContent(r *FsckReport, i *Inode, chunks []uint32, rec *Record, problem problemFunc) {
	ino, id := i.Ino, i.chunkID()
	nchunks := uint32((i.Size + ChunkSize - 1) / ChunkSize)
	if i.Blob != 0 {
		nchunks = 0 // the content is in a blob: no chunk belongs to it
	}
	for _, c := range chunks {
		if c >= nchunks {
			problem(func() error { return s.kvDelete(backend.ChunkKey(id, c)) }, "inode %d has chunk %d past its size %d", ino, c, i.Size)
		}
	}
	if s.openState(ino) != nil || s.lingers(ino) {
		return // being written: metadata is brought up to date at close
	}
	if i.Size > HashMax && (rec == nil || rec.SHA256 == "") {
		return // too large to be hashed (see HashMax)
	}
	h := sha256.New()
	var err error
	if i.Blob != 0 {
		err = s.hashBlob(h, i)
	} else {
		err = s.kv.View(func(t backend.Txn) error {
			for c := uint32(0); c < nchunks; c++ {
				data, err := s.chunk(t, nil, ino, id, c)
				if err != nil {
					return err
				}
				n := int(min(ChunkSize, i.Size-uint64(c)*ChunkSize))
				h.Write(data[:min(len(data), n)])
				if len(data) < n {
					h.Write(make([]byte, n-len(data)))
				}
			}
			return nil
		})
	}
	if err != nil {
		problem(nil, "inode %d: reading content: %v", ino, err)
		return
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if rec == nil || rec.SHA256 != sum {
		problem(func() error {
			s.unlock()
			defer s.mu.Lock()
			release := s.enterEnding(ino) // no open state meanwhile (passthrough_end.go)
			if release == nil {
				return fmt.Errorf("inode %d is open: run fsck again once it is closed", ino)
			}
			defer release()
			f := &openFile{ino: ino, truncFloor: ^uint64(0)}
			f.modified = true
			return s.commit(f)
		}, "inode %d: stored sha256 does not match its content", ino)
	}
}

func (s *Store) kvDelete(k []byte) error {
	return s.kv.Update(func(t backend.Txn) error { return t.Delete(k) })
}

// relink gives a nameless inode a name under /archive/lost+found.
func (s *Store) relink(i *Inode) error {
	dir, err := s.mkdirAll("/archive/lost+found", Owner{i.Uid, i.Gid})
	if err != nil {
		return err
	}
	name := fmt.Sprintf("inode-%d", i.Ino)
	i.Links = []Link{{dir, name}}
	p, err := s.editable(dir)
	if err != nil {
		return err
	}
	if i.IsDir() {
		p.Subdirs++
	}
	return s.update(func(t backend.Txn) error {
		return t.Set(backend.DirentKey(dir, name), encodeDirent(i.Ino, i.Mode))
	}, i, p)
}
