package e2e

// Hostile-input tests that first failed (found by hostile_test.go's
// author): a full disk, an empty memory in the views, a sparse 1 TiB
// truncate.

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestHostileFullDisk puts the data directory on a 64 MiB tmpfs and
// writes until it is full: the writer must get ENOSPC (from write, fsync
// or close), the mount must keep answering, and once space is freed the
// store must check clean and the files written before must be intact.
//
// It once killed the mount: SIGBUS in Badger's memtable (writes into the
// mmapped .mem file, which the full tmpfs cannot back). The store now keeps
// a reserve free (store/space.go). Should the mount still die, the test
// gives the tmpfs more room, as an administrator would, and checks what a
// crash on a full disk leaves behind.
func TestHostileFullDisk(t *testing.T) {
	t.Parallel()
	needLocalStore(t) // the data directory's disk and kdf.json
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	small := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", small).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	// Registered before startMount's cleanup, so it runs after it.
	t.Cleanup(func() { exec.Command("umount", "-l", small).Run() })
	data, mnt := filepath.Join(small, "data"), t.TempDir()
	m := startMount(t, data, mnt)
	p := func(rel string) string { return filepath.Join(mnt, rel) }

	r := rand.New(rand.NewPCG(7, 8))
	before := map[string][]byte{}
	for i := range 20 {
		rel := fmt.Sprintf("semantic/before-%02d.md", i)
		b := append([]byte(fmt.Sprintf("memory %d written before the disk filled\n", i)), randBytes(r, r.IntN(50<<10))...)
		check(t, os.WriteFile(p(rel), b, 0o644))
		before[rel] = b
	}
	f, err := os.Open(p("semantic"))
	check(t, err)
	check(t, f.Sync())
	f.Close()

	// Fill: 1 MiB writes, an fsync every 8, until something fails.
	big := p("working/filler.bin")
	fh, err := os.Create(big)
	check(t, err)
	chunk := randBytes(r, 1<<20)
	var werr error
	written := 0
	for written < 256<<20 && werr == nil {
		if _, werr = fh.Write(chunk); werr == nil {
			written += len(chunk)
			if written%(8<<20) == 0 {
				werr = fh.Sync()
			}
		}
	}
	if werr == nil {
		werr = fh.Sync()
	}
	cerr := fh.Close()
	if !errors.Is(werr, syscall.ENOSPC) && !errors.Is(cerr, syscall.ENOSPC) {
		t.Errorf("after %d MiB on a 64 MiB disk: write/fsync gave %v, close %v; want ENOSPC", written>>20, werr, cerr)
	}
	crashed := false
	died := func(when string) bool {
		t.Helper()
		if !crashed && m.waitExit(500*time.Millisecond) {
			crashed = true
			t.Errorf("the mount died %s (%v)\nstderr: %s", when, m.state, crashHead(m.stderr.String()))
		}
		return crashed
	}
	died("filling the disk")
	// Small operations on the full disk fail cleanly or succeed.
	for i := 0; i < 5 && !crashed; i++ {
		err := os.WriteFile(p(fmt.Sprintf("working/small-%d", i)), []byte("x"), 0o644)
		if err != nil && !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("small write %d on a full disk: %v, want ENOSPC or success", i, err)
			died("on small writes to a full disk")
		}
	}
	var after []byte
	if !crashed {
		if _, err := os.ReadDir(p("working")); err != nil {
			t.Errorf("listing on a full disk: %v", err)
		}
		// Free the space: rm, and rm again in the trash if it went there.
		if err := os.Remove(big); err != nil {
			t.Errorf("rm of the filler on a full disk: %v", err)
		}
		if _, err := os.Lstat(p("archive/trash/working/filler.bin")); err == nil {
			check(t, os.Remove(p("archive/trash/working/filler.bin")))
		}
		deadline := time.Now().Add(20 * time.Second)
		for !died("freeing space") {
			err := os.WriteFile(p("working/after.txt"), []byte("written once space was freed\n"), 0o644)
			if err == nil {
				after = []byte("written once space was freed\n")
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("20 s after freeing the space, a small write still fails: %v", err)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if crashed {
		// The administrator's way out: more room, then unmount what
		// is left of the mount.
		if out, err := exec.Command("mount", "-o", "remount,size=256m", small).CombinedOutput(); err != nil {
			t.Fatalf("growing the tmpfs: %v %s", err, out)
		}
		lazyUnmount(mnt)
	} else {
		for rel, want := range before {
			if got, err := os.ReadFile(p(rel)); err != nil || !bytes.Equal(got, want) {
				t.Errorf("mounted, after the disk filled: %s: %d bytes (%v), want %d", rel, len(got), err, len(want))
			}
		}
		m.stop(t, syscall.SIGTERM)
	}
	fsckClean(t, data, "after the disk filled")
	m = startMount(t, data, mnt)
	for rel, want := range before {
		if got, err := os.ReadFile(p(rel)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("after a remount: %s: %d bytes (%v), want %d", rel, len(got), err, len(want))
		}
	}
	if after != nil {
		if got, err := os.ReadFile(p("working/after.txt")); err != nil || !bytes.Equal(got, after) {
			t.Errorf("after a remount: working/after.txt: %q, %v", got, err)
		}
	}
	alive(t, m, "after a full disk")
}

// TestEmptyFileInViews: a memory created empty (touch, or
// open O_CREAT and close) is listed in meta/index.json and counted in
// meta/stats.json, and every view shows it too (it once did not: creating
// a file told the views nothing). A view mirrors the real tree.
func TestEmptyFileInViews(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	startMount(t, data, mnt)
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	check(t, os.WriteFile(p("working/touched.txt"), nil, 0o644))
	check(t, os.WriteFile(p("working/emptied.txt"), []byte("x"), 0o644))
	check(t, os.Truncate(p("working/emptied.txt"), 0))
	time.Sleep(1500 * time.Millisecond) // past every cache and settle time
	if idx, err := os.ReadFile(p("meta/index.json")); err != nil || !bytes.Contains(idx, []byte("/working/touched.txt")) {
		t.Fatalf("meta/index.json lacks the empty memory: %v", err)
	}
	for _, view := range []string{"by-type/working/working", "recent/working"} {
		for _, n := range []string{"emptied.txt", "touched.txt"} {
			var st unix.Stat_t
			if err := unix.Lstat(p(filepath.Join(view, n)), &st); err != nil {
				t.Errorf("%s/%s: %v (the memory is in meta/index.json)", view, n, err)
			}
		}
	}
}

// TestSparseTruncateReturnsAtOnce: truncate(2) of a file to 1 TiB (the
// store's largest size, store.MaxFileSize) must return at once, as on a
// local disk (a sparse file). The commit once hashed the whole size (some
// 13 minutes); files over store.HashMax are no longer read back. The test
// gives it 10 s, then kills the mount.
func TestSparseTruncateReturnsAtOnce(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	p := filepath.Join(mnt, "working", "sparse.bin")
	check(t, os.WriteFile(p, []byte("head"), 0o644))
	done := make(chan error, 1)
	go func() { done <- unix.Truncate(p, 1<<40) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("truncate to 1 TiB: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("truncate to 1 TiB still running after 10 s")
		other := make(chan error, 1)
		go func() { other <- os.WriteFile(filepath.Join(mnt, "working", "other.txt"), []byte("x"), 0o644) }()
		select {
		case err := <-other:
			t.Logf("meanwhile a write to another file: %v", err)
		case <-time.After(5 * time.Second):
			t.Errorf("meanwhile a write to another file blocks too (the whole mount is stuck)")
		}
		m.cmd.Process.Kill()
		m.waitExit(10 * time.Second)
		lazyUnmount(mnt)
		<-done
	}
}
