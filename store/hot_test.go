package store_test

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/internal/storetest"
	"github.com/mnemofs/mnemofs/lifecycle"
	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/transfer"
)

// The content cache (hot.go) must never serve bytes older than the last
// commit: each case below reads a file until it is cached, changes it one
// way, and reads it back by path, whole and from an offset.

// hotStore opens a store with the content cache on, its content in KV
// chunks only (blobs false, as an encrypted store) or in blob files past
// one chunk (as the binary does otherwise).
func hotStore(t *testing.T, blobs bool, clock *time.Time) *store.Store {
	t.Helper()
	dir := t.TempDir()
	kv, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
	storetest.Must(t, err)
	o := store.Options{ScratchAge: -1, CacheBytes: 8 << 20}
	if blobs {
		o.BlobDir = filepath.Join(dir, "blobs")
	}
	if clock != nil {
		o.Now = func() time.Time { return *clock }
	}
	s, err := store.Open(kv, o)
	storetest.Must(t, err)
	t.Cleanup(func() { s.Close(); kv.Close() })
	return s
}

// readPath reads the whole file at p, and again from offset 3 in a small
// buffer, and checks both against want.
func readPath(t *testing.T, s *store.Store, p string, want []byte) {
	t.Helper()
	ino, err := s.Resolve(p)
	storetest.Must(t, err)
	buf := make([]byte, len(want)+100)
	n, err := s.ReadAt(ino, buf, 0)
	storetest.Must(t, err)
	if !bytes.Equal(buf[:n], want) {
		t.Fatalf("%s: read %d bytes %.40q…, want %d bytes %.40q…", p, n, buf[:n], len(want), want)
	}
	if len(want) > 3 {
		part := make([]byte, min(len(want)-3, 1000))
		n, err = s.ReadAt(ino, part, 3)
		storetest.Must(t, err)
		if !bytes.Equal(part[:n], want[3:3+len(part)]) {
			t.Fatalf("%s: read at offset 3 gives %.40q…, want %.40q…", p, part[:n], want[3:])
		}
	}
}

// warm reads p until the cache serves it (files up to store.HotFileMax).
func warm(t *testing.T, s *store.Store, p string, want []byte) {
	t.Helper()
	readPath(t, s, p, want)
	before := s.CacheStats()["content"].Hits
	readPath(t, s, p, want)
	if len(want) > 0 && len(want) <= store.HotFileMax && s.CacheStats()["content"].Hits == before {
		t.Fatalf("%s: a second read did not hit the cache (%+v)", p, s.CacheStats()["content"])
	}
}

// fill is n bytes of one letter, so same-sized versions differ everywhere.
func fill(n int, c byte) []byte { return bytes.Repeat([]byte{c}, n) }

type hotCase struct {
	name string
	// change changes the file at p (content old) and returns its new
	// content and where it is now.
	change func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte)
}

var hotCases = []hotCase{
	{"WriteAt in place", func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte) {
		ino := storetest.Resolve(t, s, p)
		storetest.Must(t, s.Open(ino, false))
		_, err := s.WriteAt(ino, []byte("XY"), 1)
		storetest.Must(t, err)
		storetest.Must(t, s.Release(ino))
		want := append([]byte(nil), old...)
		copy(want[1:], "XY")
		return p, want
	}},
	{"WriteAt past the end", func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte) {
		ino := storetest.Resolve(t, s, p)
		storetest.Must(t, s.Open(ino, false))
		_, err := s.WriteAt(ino, []byte("tail"), int64(len(old)+5))
		storetest.Must(t, err)
		storetest.Must(t, s.Release(ino))
		return p, append(append(append([]byte(nil), old...), make([]byte, 5)...), "tail"...)
	}},
	{"Append", func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte) {
		storetest.AppendBytes(t, s, storetest.Resolve(t, s, p), []byte("appended\n"))
		return p, append(append([]byte(nil), old...), "appended\n"...)
	}},
	{"rewrite with the same size", func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte) {
		want := fill(len(old), 'z')
		storetest.Rewrite(t, s, storetest.Resolve(t, s, p), want)
		return p, want
	}},
	{"Truncate shorter", func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte) {
		storetest.Must(t, s.Truncate(storetest.Resolve(t, s, p), uint64(len(old)/2)))
		return p, old[:len(old)/2]
	}},
	{"Truncate longer", func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte) {
		size := uint64(len(old) + 10)
		_, err := s.SetAttr(storetest.Resolve(t, s, p), store.AttrChange{Size: &size})
		storetest.Must(t, err)
		return p, append(append([]byte(nil), old...), make([]byte, 10)...)
	}},
	{"rename over", func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte) {
		dir := storetest.Resolve(t, s, path.Dir(p))
		want := fill(len(old), 'r')
		storetest.WriteFile(t, s, dir, "other", want)
		storetest.Must(t, s.Rename(dir, "other", dir, path.Base(p), 0))
		return p, want
	}},
	{"unlink and create again", func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte) {
		dir := storetest.Resolve(t, s, path.Dir(p))
		_, err := s.Remove(dir, path.Base(p))
		storetest.Must(t, err)
		want := fill(len(old), 'n')
		storetest.WriteFile(t, s, dir, path.Base(p), want)
		return p, want
	}},
	{"import over it", func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte) {
		src := t.TempDir()
		want := fill(len(old), 'i')
		storetest.Must(t, os.WriteFile(filepath.Join(src, path.Base(p)), want, 0o644))
		_, err := transfer.Import(s, src, path.Dir(p), nil)
		storetest.Must(t, err)
		return p, want
	}},
	{"restore from history", func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte) {
		ino := storetest.Resolve(t, s, p)
		storetest.Rewrite(t, s, ino, fill(len(old), 'v'))
		readPath(t, s, p, fill(len(old), 'v'))
		vs, err := s.Versions(ino)
		storetest.Must(t, err)
		if len(vs) == 0 {
			t.Fatal("no version kept")
		}
		b, err := s.VersionContent(ino, vs[len(vs)-1].N)
		storetest.Must(t, err)
		storetest.Rewrite(t, s, ino, b) // as cp history/<path>/vN <path> does
		return p, old
	}},
	{"maintenance move, then a write", func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte) {
		*hotClock = hotClock.Add(30 * 24 * time.Hour)
		r, err := lifecycle.Maintain(s, lifecycle.Options{})
		storetest.Must(t, err)
		if len(r.Actions) != 1 || r.Actions[0].Kind != "archive" {
			t.Fatalf("not archived: %+v", r)
		}
		np := r.Actions[0].To
		ino := storetest.Resolve(t, s, np)
		readPath(t, s, np, old)
		want := fill(len(old), 'm')
		storetest.Rewrite(t, s, ino, want)
		return np, want
	}},
	{"read while open for writing", func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte) {
		ino := storetest.Resolve(t, s, p)
		storetest.Must(t, s.Open(ino, false))
		_, err := s.WriteAt(ino, []byte("dirty"), 0)
		storetest.Must(t, err)
		want := append([]byte("dirty"), old[min(5, len(old)):]...)
		readPath(t, s, p, want) // uncommitted: from the open state
		readPath(t, s, p, want)
		storetest.Must(t, s.Release(ino))
		return p, want
	}},
	{"the first bytes again", func(t *testing.T, s *store.Store, p string, old []byte) (string, []byte) {
		ino := storetest.Resolve(t, s, p)
		storetest.Rewrite(t, s, ino, fill(len(old), 'b'))
		readPath(t, s, p, fill(len(old), 'b'))
		readPath(t, s, p, fill(len(old), 'b'))
		storetest.Rewrite(t, s, ino, old)
		return p, old
	}},
}

// hotClock is the clock of the maintenance case (the tests using it are
// not parallel).
var hotClock *time.Time

func TestHotCacheNeverStale(t *testing.T) {
	sizes := []int{100, store.ChunkSize + 100, 200 << 10, store.HotFileMax + 1000}
	for _, blobs := range []bool{false, true} {
		for _, size := range sizes {
			for _, c := range hotCases {
				t.Run(fmt.Sprintf("blobs=%v/%d/%s", blobs, size, c.name), func(t *testing.T) {
					clock := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
					hotClock = &clock
					s := hotStore(t, blobs, &clock)
					// semantic/ keeps versions; working/task/ is archived
					// by maintenance.
					dir := "/semantic/kb"
					if c.name == "maintenance move, then a write" {
						dir = "/working/task"
					}
					d := storetest.MkdirAll(t, s, dir)
					old := storetest.Pattern(size, 7)
					storetest.WriteFile(t, s, d, "f.md", old)
					p := dir + "/f.md"
					warm(t, s, p, old)
					np, want := c.change(t, s, p, old)
					readPath(t, s, np, want)
					warm(t, s, np, want)
				})
			}
		}
	}
}

// TestHotCacheAfterFsckRepair: content changed behind the store's back
// (a damaged chunk) is what reads return once fsck --repair has recorded
// its hash, though the cache held the old bytes.
func TestHotCacheAfterFsckRepair(t *testing.T) {
	t.Parallel()
	s := hotStore(t, false, nil)
	ino := storetest.WriteFile(t, s, store.RootIno, "a", []byte("hello"))
	warm(t, s, "/a", []byte("hello"))
	storetest.Must(t, s.KV().Update(func(tx backend.Txn) error { return tx.Set(backend.ChunkKey(ino, 0), []byte("HELLO")) }))
	_, err := s.Fsck(true)
	storetest.Must(t, err)
	readPath(t, s, "/a", []byte("HELLO"))

	// A fill is kept only when the bytes read hash to the record's
	// SHA-256: here the record says "ok" while the chunk holds "OK" (as a
	// reader sees when a commit lands between its record and its read).
	ino = storetest.WriteFile(t, s, store.RootIno, "b", []byte("ok"))
	setChunk := func(b string) {
		storetest.Must(t, s.KV().Update(func(tx backend.Txn) error { return tx.Set(backend.ChunkKey(ino, 0), []byte(b)) }))
	}
	setChunk("OK")
	readPath(t, s, "/b", []byte("OK"))
	readPath(t, s, "/b", []byte("OK")) // admitted: read again, filled
	// Content and record agree again.
	setChunk("ok")
	readPath(t, s, "/b", []byte("ok"))
}

// TestHotCacheConcurrentRewrites: readers racing a writer only ever see a
// whole committed (or open) version, and after the last commit the last.
func TestHotCacheConcurrentRewrites(t *testing.T) {
	t.Parallel()
	for _, blobs := range []bool{false, true} {
		t.Run(fmt.Sprintf("blobs=%v", blobs), func(t *testing.T) {
			s := hotStore(t, blobs, nil)
			size := 40 << 10
			ino := storetest.WriteFile(t, s, store.RootIno, "f", fill(size, 'a'))
			var wg sync.WaitGroup
			stop := make(chan struct{})
			errs := make(chan error, 4)
			for r := 0; r < 3; r++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					buf := make([]byte, size)
					for {
						select {
						case <-stop:
							return
						default:
						}
						n, err := s.ReadAt(ino, buf, 0)
						if err != nil || n != size || !bytes.Equal(buf[:n], fill(size, buf[0])) {
							errs <- fmt.Errorf("read %d bytes (%v), not one version: %q…%q", n, err, buf[:4], buf[n-4:n])
							return
						}
					}
				}()
			}
			for v := 0; v < 200; v++ {
				storetest.Must(t, s.Open(ino, false))
				_, err := s.WriteAt(ino, fill(size, 'a'+byte(v%26)), 0)
				storetest.Must(t, err)
				storetest.Must(t, s.Release(ino))
				buf := make([]byte, size)
				n, err := s.ReadAt(ino, buf, 0)
				storetest.Must(t, err)
				if !bytes.Equal(buf[:n], fill(size, 'a'+byte(v%26))) {
					t.Fatalf("version %d: read %q…", v, buf[:4])
				}
			}
			close(stop)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			// After the last commit the cache serves the file again (the
			// racing readers may all have come while it was open, on a
			// loaded machine): two reads, the second a hit.
			before := s.CacheStats()["content"].Hits
			buf := make([]byte, size)
			for range 2 {
				_, err := s.ReadAt(ino, buf, 0)
				storetest.Must(t, err)
			}
			if st := s.CacheStats()["content"]; st.Hits == before {
				t.Errorf("the cache is not used after the rewrites: %+v", st)
			}
		})
	}
}

// TestHotCacheBoundsAndStats: the cache stays within its bound, frees the
// entry of a removed file, shows in Stats, and can be turned off.
func TestHotCacheBoundsAndStats(t *testing.T) {
	t.Parallel()
	s := hotStore(t, true, nil)
	for k := 0; k < 60; k++ {
		data := fill(200<<10, byte('a'+k%26))
		storetest.WriteFile(t, s, store.RootIno, fmt.Sprintf("f%d", k), data)
		warm(t, s, fmt.Sprintf("/f%d", k), data)
	}
	st, err := s.Stats()
	storetest.Must(t, err)
	c := st.Cache["content"]
	if c.Bytes > c.MaxBytes || c.MaxBytes != 8<<20 || c.Evictions == 0 || c.Entries == 0 {
		t.Fatalf("content cache %+v", c)
	}
	if _, ok := st.Cache["records"]; !ok {
		t.Fatal("no record cache stats")
	}
	before := s.CacheStats()["content"].Entries
	s.SetScratchAge(time.Hour) // young: really deleted, so purged
	_, err = s.Remove(store.RootIno, "f59")
	storetest.Must(t, err)
	if after := s.CacheStats()["content"].Entries; after != before-1 {
		t.Fatalf("entries %d after removing a cached file, %d before", after, before)
	}

	off := storetest.NewStore(t, store.Options{CacheBytes: -1})
	storetest.WriteFile(t, off, store.RootIno, "a", []byte("hello"))
	readPath(t, off, "/a", []byte("hello"))
	readPath(t, off, "/a", []byte("hello"))
	if off.HotOn() || off.CacheStats()["content"].Hits != 0 {
		t.Fatal("CacheBytes -1 did not turn the cache off")
	}
}
