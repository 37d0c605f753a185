package pack

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// treeHost is a directory (inode 1) of small files whose only chunks are
// in the KV, as the store would present them; its transactions take at
// most maxFiles members (as etcd's take 128 operations).
type treeHost struct {
	kv       backend.KV
	files    map[uint64][]byte
	maxFiles int
	at       map[uint64][2]uint64 // ino: pack id, offset
}

func (h *treeHost) Kids(ino uint64) ([]uint64, bool, error) {
	if ino != 1 {
		return nil, false, nil
	}
	var kids []uint64
	for k := range h.files {
		kids = append(kids, k)
	}
	return kids, true, nil
}

func (h *treeHost) Candidate(ino uint64) (File, bool) {
	if _, packed := h.at[ino]; packed {
		return File{}, false
	}
	return File{Ino: ino, Size: uint64(len(h.files[ino])), ChunkID: ino}, true
}

func (h *treeHost) Content(t backend.Txn, f File) ([]byte, error) {
	return t.Get(backend.ChunkKey(f.ChunkID, 0))
}

func (h *treeHost) Write(files []File, write func(t backend.Txn, id uint64) error) error {
	if len(files) > h.maxFiles {
		return backend.ErrTxnTooBig
	}
	id, err := NextID(h.kv)
	if err != nil {
		return err
	}
	if err := h.kv.Update(func(t backend.Txn) error { return write(t, id) }); err != nil {
		return err
	}
	for _, f := range files {
		h.at[f.Ino] = [2]uint64{id, f.Off}
	}
	return nil
}

// TestPackTree packs a tree whose engine refuses big transactions: the
// packer halves its packs until they fit, every member reads back its
// bytes from its pack, and its chunk is gone.
func TestPackTree(t *testing.T) {
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	must(t, err)
	defer kv.Close()
	h := &treeHost{kv: kv, files: map[uint64][]byte{}, maxFiles: 5, at: map[uint64][2]uint64{}}
	must(t, kv.Update(func(t backend.Txn) error {
		for ino := uint64(10); ino < 30; ino++ {
			h.files[ino] = []byte(fmt.Sprintf("---\ntype: turn\n---\nturn %d of a session that says the same things\n", ino))
			if err := t.Set(backend.ChunkKey(ino, 0), h.files[ino]); err != nil {
				return err
			}
		}
		return nil
	}))
	var p Packer
	must(t, p.PackTree(kv, 1, h))
	if got := p.limit.Load(); got < 1 || got > 5 {
		t.Errorf("the packer's limit is %d after the engine refused more than 5", got)
	}
	var c Cache
	must(t, kv.View(func(t2 backend.Txn) error {
		for ino, want := range h.files {
			at, ok := h.at[ino]
			if !ok {
				t.Errorf("inode %d was not packed", ino)
				continue
			}
			got, err := c.Member(t2, ino, at[0], at[1], uint64(len(want)))
			if err != nil {
				return err
			}
			if !bytes.Equal(got, want) {
				t.Errorf("inode %d reads %q from its pack, want %q", ino, got, want)
			}
			if _, err := t2.Get(backend.ChunkKey(ino, 0)); !errors.Is(err, backend.ErrNotFound) {
				t.Errorf("inode %d's chunk is still there (%v)", ino, err)
			}
		}
		return nil
	}))
	st, err := Sum(kv)
	must(t, err)
	if st.Files != len(h.files) || st.Packs < 4 || st.Compressed >= st.RawBytes {
		t.Errorf("packs %+v: want %d files in at least 4 packs, compressed", st, len(h.files))
	}
	// A pack goes with its last member.
	for ino, at := range h.at {
		must(t, kv.Update(func(t backend.Txn) error { return t.Delete(backend.MemberKey(at[0], ino)) }))
		must(t, c.DropIfEmpty(kv, at[0]))
	}
	if st, err = Sum(kv); err != nil || st.Packs != 0 {
		t.Errorf("packs without members are left: %+v (%v)", st, err)
	}
}
