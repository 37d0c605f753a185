package store

import (
	"encoding/binary"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
)

// Reading every memory in key order, for the views' build (ScanMemories).
// The build reads each memory's inode, record and content. Read one at a
// time, that is three lookups a memory, each searching every level of
// the LSM tree: at a million memories a third of the build. Here a block
// of memories (ascending inode numbers) is read with three range scans
// (inodes, records, content chunks) in one read transaction, by a
// goroutine of its own one block ahead of the caller, which indexes the
// block before.
//
// What a scan read is the store's committed state; a file open for
// writing, or written meanwhile, sends its change events, which the
// caller applies after (as it does for the memories it read one at a
// time). A memory whose content is not plain chunks of its own (a blob
// file, a pack, a staged rewrite's chunks) or that is open, and on a store
// opened for a user a log of which the user sees only some lines, is left
// to the caller: Scanned.Own false. Of a file larger than the caller's
// limit, the scan reads up to the limit. A memory the store's user does not see is reported
// gone (syscall.ENOENT), as Info reports it. On a store shared by several
// hosts (etcd) a block is a few range reads, where one memory at a time
// was three round trips to the cluster; another host's change made
// meanwhile comes as an event, as on one host.

// Scanned is one memory as ScanMemories read it.
type Scanned struct {
	Ino uint64
	// Own: read here. False: read it the usual way (Info, Attr, ReadAt).
	Own bool
	// Err: what reading it here found (syscall.ENOENT: it is gone, or
	// the store's user does not see it).
	Err  error
	Info Info
	Attr Inode
	// Content: its first bytes, up to the caller's limit; the slice is
	// the caller's.
	Content []byte
	// Prepared is what ScanMemoriesPrepared's prep made of it.
	Prepared any
	// partial: a log the store's user sees only some lines of.
	partial bool
}

const (
	// scanBlock: memories a block; blockBytes: the content a block holds
	// at most (a block ends early rather than pass it).
	scanBlock  = 512
	blockBytes = 8 << 20
)

// ScanMemories calls fn for each of inos (ascending), in order, with what
// a block's scans read of it; fn returning false stops. limit is how
// many bytes of content fn wants at most. A block the KV fails to read
// (a shared store's outage) comes as memories not read (Own false): the
// caller reads each the usual way, which retries what fails.
func (s *Store) ScanMemories(inos []uint64, limit int, fn func(*Scanned) bool) {
	s.ScanMemoriesPrepared(inos, limit, nil, fn)
}

// ScanMemoriesPrepared is ScanMemories calling prep, when not nil, for
// each memory of a block on a goroutine of its own, between the one that
// reads the blocks and fn: work on what was read that need not wait for
// fn (the build makes a memory's index terms there while it adds the
// block before's, and the next block is read meanwhile).
func (s *Store) ScanMemoriesPrepared(inos []uint64, limit int, prep func(*Scanned), fn func(*Scanned) bool) {
	stop := make(chan struct{})
	send := func(to chan<- []Scanned, ms []Scanned) bool {
		select {
		case to <- ms:
			return true
		case <-stop:
			return false
		}
	}
	read := make(chan []Scanned, 1)
	go func() {
		defer close(read)
		for rest := inos; len(rest) > 0; {
			want := rest[:min(len(rest), scanBlock)]
			ms, err := s.scanBlock(want, limit)
			if err != nil {
				ms = make([]Scanned, len(want))
				for k, ino := range want {
					ms[k] = Scanned{Ino: ino}
				}
			}
			if !send(read, ms) {
				return
			}
			rest = rest[len(ms):]
		}
	}()
	blocks := read
	if prep != nil {
		prepared := make(chan []Scanned, 1)
		go func() {
			defer close(prepared)
			for ms := range read {
				for k := range ms {
					prep(&ms[k])
				}
				if !send(prepared, ms) {
					for range read { // until the reader has stopped
					}
					return
				}
			}
		}()
		blocks = prepared
	}
	defer func() {
		close(stop)
		for range blocks { // until the goroutines have stopped
		}
	}()
	for ms := range blocks {
		for k := range ms {
			if !fn(&ms[k]) {
				return
			}
		}
	}
}

// scanBlock reads a block of inos, or fewer when their content would pass
// blockBytes (at least one).
func (s *Store) scanBlock(inos []uint64, limit int) ([]Scanned, error) {
	ms := make([]Scanned, len(inos))
	for k, ino := range inos {
		ms[k] = Scanned{Ino: ino, Err: syscall.ENOENT}
	}
	recs := make([]*Record, len(ms))
	err := s.kv.View(func(t backend.Txn) error {
		// Inodes first: their sizes say where the block ends.
		if err := scanRange(t, backend.PrefixInode, inos, func(k int, v []byte) {
			i, err := decodeInode(v)
			switch {
			case err != nil:
				ms[k].Err = err
			default:
				ms[k].Attr, ms[k].Err = *i, nil
			}
		}); err != nil {
			return err
		}
		total := 0
		for k := range ms {
			if m := &ms[k]; m.Err == nil {
				total += int(min(m.Attr.Size, uint64(limit)))
			}
			if total > blockBytes && k > 0 {
				ms, inos = ms[:k], inos[:k]
				break
			}
		}
		if err := scanRange(t, backend.PrefixMeta, inos, func(k int, v []byte) {
			var err error
			if recs[k], err = decodeRecord(inos[k], v); err != nil {
				ms[k].Err = err
			}
		}); err != nil {
			return err
		}
		for k := range ms {
			m := &ms[k]
			if m.Err != nil {
				continue
			}
			if recs[k] == nil {
				recs[k] = &Record{} // none stored (as getRecord)
			}
			switch r := recs[k]; {
			case m.Attr.IsReg() && !s.visibleRecord(r):
				m.Err = syscall.ENOENT // not the store's user's (as Info)
			case r.partial(s.opts.User):
				m.partial = true // a shared log: the user sees some lines
			}
		}
		return s.scanContent(t, ms, limit)
	})
	if err != nil {
		return nil, err
	}
	for k := range ms {
		m := &ms[k]
		if m.Err != nil || !m.Own {
			continue
		}
		m.Info, m.Err = s.infoOf(&m.Attr, s.withAccess(m.Ino, recs[k]))
	}
	return ms, nil
}

// scanRange scans the keys of prefix for the inodes inos (ascending),
// calling fn with the index in inos of each found and its value.
func scanRange(t backend.Txn, prefix byte, inos []uint64, fn func(k int, v []byte)) error {
	last := inos[len(inos)-1]
	k := 0
	start := binary.BigEndian.AppendUint64([]byte{prefix}, inos[0])
	return backend.ScanRefTo(t, []byte{prefix}, start, afterIno(prefix, last), func(key, val []byte) bool {
		if len(key) != 9 {
			return true
		}
		ino := backend.KeyIno(key)
		for k < len(inos) && inos[k] < ino {
			k++
		}
		if k < len(inos) && inos[k] == ino {
			fn(k, val)
		}
		return ino < last
	})
}

// afterIno is the first key of prefix past those of ino (nil: none).
func afterIno(prefix byte, ino uint64) []byte {
	if ino == ^uint64(0) {
		return nil
	}
	return binary.BigEndian.AppendUint64([]byte{prefix}, ino+1)
}

// scanContent reads the chunks of the memories of ms that keep their
// content in chunks of their own, marking them Own. A scan meeting chunks
// it does not want (another file's, or a file's past limit) starts again
// at the next memory's.
func (s *Store) scanContent(t backend.Txn, ms []Scanned, limit int) error {
	var own []*Scanned
	for k := range ms {
		if s.scanOwn(&ms[k], limit) {
			own = append(own, &ms[k])
		}
	}
	for k := 0; k < len(own); {
		again := false
		end := afterIno(backend.PrefixChunk, own[len(own)-1].Ino)
		err := backend.ScanRefTo(t, []byte{backend.PrefixChunk}, backend.ChunkKey(own[k].Ino, 0), end, func(key, val []byte) bool {
			if len(key) != 13 {
				return true
			}
			ino, idx := backend.KeyIno(key), binary.BigEndian.Uint32(key[9:])
			for k < len(own) && own[k].Ino < ino {
				k++
			}
			if k == len(own) {
				return false
			}
			m := own[k]
			off := uint64(idx) * ChunkSize
			if m.Ino != ino || off >= uint64(len(m.Content)) {
				if m.Ino == ino {
					k++ // the rest of a big file is not wanted
				}
				again = true
				return false
			}
			copy(m.Content[off:], val)
			return true
		})
		if err != nil || !again {
			return err
		}
	}
	return nil
}

// scanOwn decides whether a scan reads m's content (and makes its
// buffer): a regular file with its content in its own chunks, not open.
func (s *Store) scanOwn(m *Scanned, limit int) bool {
	i := &m.Attr
	if m.Err != nil || m.partial || !i.IsReg() || i.legacy || i.Blob != 0 || i.Pack != 0 || (i.Content != 0 && i.Content != i.Ino) ||
		len(i.Links) == 0 || s.openState(m.Ino) != nil {
		return false
	}
	m.Own = true
	m.Content = make([]byte, min(i.Size, uint64(limit)))
	return true
}
