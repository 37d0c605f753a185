package store

import (
	"fmt"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
)

// TestUnpackPersistsUncommittedSize (a regression test): import's
// overwrite (import over an existing file) truncates before write() unpacks:
// unpack then persists the cached, uncommitted size 0 next to the old chunk.
func TestUnpackPersistsUncommittedSize(t *testing.T) {
	t.Parallel()
	s := newStore(t, Options{ScratchAge: -1})
	d, err := s.mkdirAllLocked("/archive/sessions/2026-01/x")
	must(t, err)
	var ino uint64
	for k := range 10 {
		ino = writeFile(t, s, d, fmt.Sprintf("t%02d.md", k), packBody(k))
	}
	must(t, s.PackTree(d))
	must(t, s.Open(ino, false))
	f := s.openState(ino)
	i, _ := s.inode(ino)
	f.mu.Lock()
	must(t, s.truncateLocked(f, i, 0))
	f.mu.Unlock()
	must(t, s.unpack(ino)) // what WriteAt does first
	// "crash" here: what is durable?
	var size uint64
	var chunk []byte
	must(t, s.kv.View(func(tx backend.Txn) error {
		v, err := tx.Get(backend.InodeKey(ino))
		if err != nil {
			return err
		}
		in, err := decodeInode(v)
		if err != nil {
			return err
		}
		size = in.Size
		chunk, err = tx.Get(backend.ChunkKey(ino, 0))
		return err
	}))
	rec, _ := s.storedRecord(ino)
	t.Logf("durable inode size %d, chunk 0 %d bytes, record sha %s (of %d bytes)", size, len(chunk), rec.SHA256[:8], len(packBody(9)))
	if size != uint64(len(packBody(9))) {
		t.Errorf("unpack persisted an uncommitted size %d", size)
	}
	must(t, s.Release(ino))
}
