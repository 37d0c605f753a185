package store

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/internal/testetcd"
)

// content returns n bytes that differ from another seed's at every chunk.
func content(seed byte, n int) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = seed + byte(k%251)
	}
	return b
}

// rewriteBig replaces the content of ino with data (open, truncate, write in
// 1 MiB writes, release) and returns the release's error.
func rewriteBig(t testing.TB, s *Store, ino uint64, data []byte) error {
	t.Helper()
	must(t, s.Open(ino, false))
	must(t, s.Truncate(ino, 0))
	for off := 0; off < len(data); off += 1 << 20 {
		if _, err := s.WriteAt(ino, data[off:min(len(data), off+1<<20)], int64(off)); err != nil {
			s.Release(ino)
			return err
		}
	}
	return s.Release(ino)
}

// chunkSets counts the chunk keys of each chunk id, and the stage markers.
func chunkSets(t testing.TB, kv backend.KV) (map[uint64]int, int) {
	t.Helper()
	sets, marks := map[uint64]int{}, 0
	must(t, kv.View(func(tx backend.Txn) error {
		if err := tx.Scan([]byte{backend.PrefixChunk}, nil, true, func(k, _ []byte) bool {
			sets[backend.KeyIno(k)]++
			return true
		}); err != nil {
			return err
		}
		return tx.Scan(backend.StagePrefix(), nil, true, func(k, _ []byte) bool { marks++; return true })
	}))
	return sets, marks
}

// TestStagedRewrite: a rewrite of a file larger than spillBytes goes to a
// new chunk set, the old one is deleted, and what is left is the new
// content, under the one chunk id the inode names.
func TestStagedRewrite(t *testing.T) {
	t.Parallel()
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	must(t, err)
	s, err := Open(kv, Options{})
	must(t, err)
	t.Cleanup(func() { s.Close(); kv.Close() })
	v1, v2 := content(1, 3*spillBytes/2), content(2, spillBytes+5*ChunkSize+77)
	ino := writeFile(t, s, RootIno, "big.md", v1)
	must(t, rewriteBig(t, s, ino, v2))
	if !bytes.Equal(readAll(t, s, ino), v2) {
		t.Fatal("the rewrite does not read back")
	}
	id, err := s.chunkIDOf(ino)
	must(t, err)
	if id == ino {
		t.Fatal("the rewrite was not staged")
	}
	sets, marks := chunkSets(t, kv)
	if want := (len(v2) + ChunkSize - 1) / ChunkSize; len(sets) != 1 || sets[id] != want || marks != 0 {
		t.Fatalf("chunk sets %v and %d markers, want %d chunks of %d only", sets, marks, want, id)
	}
	fsckClean(t, s)
}

// crashBeforeSwitch is a KV that fails (as a crash would cut off) every
// transaction that deletes a stage marker while on: a staged rewrite's
// chunks are written, its inode never points at them.
type crashBeforeSwitch struct {
	backend.KV
	on atomic.Bool
}

var errCut = errors.New("cut off before the switch")

type noteStage struct {
	backend.Txn
	stage bool
}

func (t *noteStage) Delete(k []byte) error {
	t.stage = t.stage || k[0] == backend.PrefixStage
	return t.Txn.Delete(k)
}

func (k *crashBeforeSwitch) Update(fn func(backend.Txn) error) error {
	return k.KV.Update(func(t backend.Txn) error {
		n := &noteStage{Txn: t}
		if err := fn(n); err != nil {
			return err
		}
		if n.stage && k.on.Load() {
			return errCut
		}
		return nil
	})
}

func (k *crashBeforeSwitch) Watch(fn func([]backend.Event)) func() {
	return k.KV.(backend.Watcher).Watch(fn)
}

func openEtcdStore(t testing.TB, endpoints []string, prefix string) (*Store, backend.KV) {
	t.Helper()
	kv, err := backend.OpenEtcd(backend.EtcdOptions{Endpoints: endpoints, Prefix: prefix})
	must(t, err)
	s, err := Open(kv, Options{ScratchAge: -1})
	must(t, err)
	t.Cleanup(func() { s.Close(); kv.Close() })
	return s, kv
}

// TestStagedRewriteCutOff: on etcd, a rewrite larger than one transaction
// whose switch never commits leaves the file as it was, on every host; its
// chunks are a stage that fsck leaves alone while its host is there, and
// reports and removes once it is gone.
func TestStagedRewriteCutOff(t *testing.T) {
	t.Parallel()
	c := testetcd.Shared(t)
	prefix := testetcd.Prefix(t)
	inner, err := backend.OpenEtcd(backend.EtcdOptions{Endpoints: c, Prefix: prefix})
	must(t, err)
	kvA := &crashBeforeSwitch{KV: inner}
	a, err := Open(kvA, Options{ScratchAge: -1})
	must(t, err)
	b, _ := openEtcdStore(t, c, prefix)

	v1, v2 := content(1, 2*spillBytes), content(2, 2*spillBytes)
	ino := writeFile(t, a, RootIno, "big.md", v1)
	kvA.on.Store(true)
	if err := rewriteBig(t, a, ino, v2); !errors.Is(err, errCut) {
		t.Fatalf("the cut-off rewrite's release: %v", err)
	}
	if got := readAll(t, b, ino); !bytes.Equal(got, v1) {
		t.Fatalf("host B reads %d bytes, not the content before the rewrite", len(got))
	}
	fsckClean(t, b) // A is there: its stage is being written
	must(t, a.Close())
	inner.Close()

	r, err := b.Fsck(false)
	must(t, err)
	if len(r.Problems) != 1 {
		t.Fatalf("fsck after A is gone: %v, want the stage it left", r.Problems)
	}
	t.Log(r.Problems[0])
	r, err = b.Fsck(true)
	must(t, err)
	if r.Repaired != 1 {
		t.Fatalf("repair: %+v", r)
	}
	fsckClean(t, b)
	b.grace = 0 // the (empty) chunk set A's first write replaced goes too
	must(t, b.sweepStages())
	sets, marks := chunkSets(t, b.kv)
	if id, _ := b.chunkIDOf(ino); len(sets) != 1 || sets[id] == 0 || marks != 0 {
		t.Fatalf("after repair: chunk sets %v, %d markers", sets, marks)
	}
	if got := readAll(t, b, ino); !bytes.Equal(got, v1) {
		t.Fatal("the content changed in the repair")
	}
}

// TestStagedRewritersOnTwoHosts: two hosts rewrite one large file at once,
// again and again; it ends as one whole version, and once the replaced
// chunk sets are collected only its own is left.
func TestStagedRewritersOnTwoHosts(t *testing.T) {
	t.Parallel()
	c := testetcd.Shared(t)
	prefix := testetcd.Prefix(t)
	a, _ := openEtcdStore(t, c, prefix)
	b, kv := openEtcdStore(t, c, prefix)
	size := spillBytes + 3*ChunkSize + 5
	ino := writeFile(t, a, RootIno, "big.md", content(0, size))
	versions := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for h, s := range []*Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 4 {
				v := content(byte(10*h+k+1), size)
				mu.Lock()
				versions[string(v)] = true
				mu.Unlock()
				if err := rewriteBig(t, s, ino, v); err != nil {
					t.Errorf("host %d, rewrite %d: %v", h, k, err)
				}
			}
		}()
	}
	wg.Wait()
	for h, s := range []*Store{a, b} {
		got, err := waitRead(s, ino, size)
		if err != nil || !versions[string(got)] {
			t.Fatalf("host %d reads %d bytes, not one whole version (%v)", h, len(got), err)
		}
	}
	a.grace = 0 // no reader is left on the replaced ones
	must(t, a.sweepStages())
	fsckClean(t, b)
	sets, marks := chunkSets(t, kv)
	if id, _ := b.chunkIDOf(ino); len(sets) != 1 || sets[id] == 0 || marks != 0 {
		t.Fatalf("after the sweep: chunk sets %v, %d markers", sets, marks)
	}
}

// waitRead reads ino whole once it has size bytes (the watch may still be
// bringing this host up to date).
func waitRead(s *Store, ino uint64, size int) ([]byte, error) {
	for range 200 {
		buf := make([]byte, size+1)
		n, err := s.ReadAt(ino, buf, 0)
		if err == nil && n == size {
			return buf[:n], nil
		}
	}
	return nil, fmt.Errorf("never %d bytes", size)
}

// TestStagedRewriteOverAnotherHosts: host A has a rewrite open while host
// B's staged rewrite commits. A's close wins with the whole of its own
// version: a large rewrite (its stage), a small change (staged then too,
// since B moved the content: errRestage), copying what it did not change
// from the content B replaced, which is kept for the grace. Once that is
// collected, A's close fails and the file stays B's.
func TestStagedRewriteOverAnotherHosts(t *testing.T) {
	t.Parallel()
	c := testetcd.Shared(t)
	size := spillBytes + 7*ChunkSize
	for _, tc := range []struct {
		name      string
		collected bool
		write     func(s *Store, ino uint64) []byte // A's change; returns A's version
	}{
		{"large", false, func(s *Store, ino uint64) []byte {
			v := content(7, size)
			must(t, s.Truncate(ino, 0))
			_, err := s.WriteAt(ino, v, 0)
			must(t, err)
			return v
		}},
		{"small", false, func(s *Store, ino uint64) []byte {
			v := content(0, size)
			copy(v[ChunkSize+3:], "A's change")
			_, err := s.WriteAt(ino, []byte("A's change"), ChunkSize+3)
			must(t, err)
			return v
		}},
		{"collected", true, func(s *Store, ino uint64) []byte {
			_, err := s.WriteAt(ino, []byte("A's change"), ChunkSize+3)
			must(t, err)
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := testetcd.Prefix(t)
			a, _ := openEtcdStore(t, c, prefix)
			b, kv := openEtcdStore(t, c, prefix)
			ino := writeFile(t, a, RootIno, "big.md", content(0, size))
			if _, err := waitRead(b, ino, size); err != nil {
				t.Fatal(err)
			}
			must(t, a.Open(ino, false))
			want := tc.write(a, ino)
			vb := content(9, size)
			must(t, rewriteBig(t, b, ino, vb))
			if tc.collected {
				b.grace = 0
				must(t, b.sweepStages())
				want = vb
			}
			err := a.Release(ino)
			switch {
			case tc.collected && !errors.Is(err, errBaseGone):
				t.Fatalf("A's close after its base was collected: %v", err)
			case !tc.collected && err != nil:
				t.Fatalf("A's close: %v", err)
			}
			for h, s := range []*Store{a, b} {
				got, err := waitRead(s, ino, size)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("host %d does not read the version that won (%v)", h, err)
				}
			}
			a.grace, b.grace = 0, 0
			must(t, a.sweepStages())
			fsckClean(t, b)
			if sets, marks := chunkSets(t, kv); len(sets) != 1 || marks != 0 {
				t.Fatalf("after the sweep: chunk sets %v, %d markers", sets, marks)
			}
		})
	}
}
