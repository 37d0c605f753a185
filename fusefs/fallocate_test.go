package fusefs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/store"
)

// fallocateAt runs fallocate(2) on p.
func fallocateAt(p string, mode uint32, off, n int64) error {
	fd, err := unix.Open(p, unix.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fallocate(fd, mode, off, n)
}

func seekData(t *testing.T, p string, off int64, whence int) (int64, error) {
	t.Helper()
	fd, err := unix.Open(p, unix.O_RDONLY, 0)
	must(t, err)
	defer unix.Close(fd)
	return unix.Seek(fd, off, whence)
}

// pattern is n bytes that are never zero.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i%251) + 1 + seed
		if b[i] == 0 {
			b[i] = 1
		}
	}
	return b
}

// TestFallocate: fallocate reserves and zeroes as on ext4 through the
// loopback (xfstests generic/008, 033, 213, 420, 439, 446, 539):
// reserving keeps or sets the size, punching a hole and zeroing a range
// read back as zeros and show as holes to SEEK_HOLE, in small files and
// large ones.
func TestFallocate(t *testing.T) {
	t.Parallel()
	for _, s := range sides(t) {
		t.Run(s.name, func(t *testing.T) {
			for _, n := range []int{3000, 3 << 16} { // KV chunks, a blob file
				p := filepath.Join(s.dir, fmt.Sprintf("f%d", n))
				want := pattern(n, 0)
				must(t, os.WriteFile(p, want, 0o644))

				// Reserve past the end, keeping the size; then setting it.
				must(t, fallocateAt(p, unix.FALLOC_FL_KEEP_SIZE, 0, int64(n)+1<<20))
				if fi, err := os.Stat(p); err != nil || fi.Size() != int64(n) {
					t.Errorf("%d: size after KEEP_SIZE: %v %v", n, fi.Size(), err)
				}
				must(t, fallocateAt(p, 0, int64(n), 5000))
				want = append(want, make([]byte, 5000)...)

				// A hole: block-aligned in the large file, anywhere in the small.
				off, ln := int64(1000), int64(500)
				if n > 1<<16 {
					off, ln = 1<<16, 1<<16
				}
				must(t, fallocateAt(p, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, ln))
				clear(want[off : off+ln])
				// Zeros over the end: the size grows, unless KEEP_SIZE.
				must(t, fallocateAt(p, unix.FALLOC_FL_ZERO_RANGE, int64(len(want))-10, 100))
				want = append(want, make([]byte, 90)...)
				for k := len(want) - 10; k < len(want); k++ {
					want[k] = 0
				}
				must(t, fallocateAt(p, unix.FALLOC_FL_ZERO_RANGE|unix.FALLOC_FL_KEEP_SIZE, 10, 20))
				clear(want[10:30])
				if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, want) {
					t.Errorf("%d: content differs (%d bytes read, %d wanted, %v)", n, len(b), len(want), err)
				}
				if n > 1<<16 && !(s.tf != nil && onEtcd()) { // (a shared store's content has no holes)
					if h, err := seekData(t, p, 0, unix.SEEK_HOLE); err != nil || h != off {
						t.Errorf("SEEK_HOLE from 0: %d, %v; want %d", h, err, off)
					}
					if d, err := seekData(t, p, off, unix.SEEK_DATA); err != nil || d != off+ln {
						t.Errorf("SEEK_DATA from the hole: %d, %v; want %d", d, err, off+ln)
					}
				}
				if _, err := seekData(t, p, int64(len(want)), unix.SEEK_DATA); err != syscall.ENXIO {
					t.Errorf("SEEK_DATA at the end: %v, want ENXIO", err)
				}
				if s.tf != nil {
					buf := make([]byte, 80)
					k, err := unix.Getxattr(p, "user.mnemofs.sha256", buf)
					if err != nil || string(buf[:k]) != shaHex(want) {
						t.Errorf("%d: sha256 %q, %v; want that of the content", n, buf[:k], err)
					}
				}
			}
			wantErrno(t, fallocateAt(filepath.Join(s.dir, "f3000"), unix.FALLOC_FL_COLLAPSE_RANGE, 0, 4096), syscall.EOPNOTSUPP)
		})
	}
}

// TestFallocateSpace: a reservation is real (the blob file's blocks are
// allocated, so statfs counts them), one beyond the free space fails with
// ENOSPC before anything is allocated, and statfs leaves out the reserve
// the store keeps for itself. (Not run on the loopback: ext4 allocates
// what it can of such a reservation before it fails, filling the shared
// disk for a moment.)
func TestFallocateSpace(t *testing.T) {
	t.Parallel()
	needLocalFiles(t)
	data := t.TempDir()
	tf := mountAt(t, data, store.Options{ScratchAge: -1, SpaceDir: data}) // the free-space guard, as the binary's
	p := tf.path("working/big")
	must(t, os.WriteFile(p, nil, 0o644))
	must(t, fallocateAt(p, 0, 0, 64<<20))
	var st syscall.Stat_t
	must(t, syscall.Stat(p, &st))
	if st.Size != 64<<20 {
		t.Errorf("size %d after fallocate 64 MiB", st.Size)
	}
	blobs, _ := filepath.Glob(filepath.Join(tf.data, "blobs", fmt.Sprintf("%02x", st.Ino%256), fmt.Sprintf("%d-*", st.Ino)))
	var allocated int64
	for _, b := range blobs {
		var bst syscall.Stat_t
		if syscall.Stat(b, &bst) == nil {
			allocated = max(allocated, bst.Blocks*512)
		}
	}
	if allocated < 64<<20 {
		t.Errorf("the content file has %d bytes allocated, want 64 MiB (%v)", allocated, blobs)
	}

	var fs, disk syscall.Statfs_t
	must(t, syscall.Statfs(tf.dir, &fs))
	must(t, syscall.Statfs(tf.data, &disk))
	keep := store.Reserve(int64(disk.Blocks) * disk.Bsize)
	if got, max := int64(fs.Bavail)*fs.Bsize, int64(disk.Bavail)*disk.Bsize-keep; got > max+64<<20 {
		t.Errorf("statfs says %d bytes available, the disk %d less the reserve %d", got, disk.Bavail, keep)
	}
	avail := int64(fs.Bavail) * fs.Bsize
	q := tf.path("working/toobig")
	must(t, os.WriteFile(q, nil, 0o644))
	wantErrno(t, fallocateAt(q, 0, 0, 2*avail), syscall.ENOSPC)
	wantErrno(t, fallocateAt(q, unix.FALLOC_FL_KEEP_SIZE, 0, 2*avail), syscall.ENOSPC)
	if fi, err := os.Stat(q); err != nil || fi.Size() != 0 {
		t.Errorf("after ENOSPC: size %v, %v", fi.Size(), err)
	}
}

// TestFallocateVersions: a hole punched in a memory of a versioned tree
// is a new version, with the old content kept in history/.
func TestFallocateVersions(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("semantic/notes.md")
	old := []byte("# notes\nfirst line\nsecond line\n")
	must(t, os.WriteFile(p, old, 0o644))
	must(t, fallocateAt(p, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 8, 10))
	buf := make([]byte, 16)
	n, err := unix.Getxattr(p, "user.mnemofs.version", buf)
	if err != nil || string(buf[:n]) != "2" {
		t.Errorf("version %q, %v; want 2", buf[:n], err)
	}
	if got := read(t, tf.path("history/semantic/notes.md/v1.md")); got != string(old) {
		t.Errorf("history keeps %q", got)
	}
	want := append([]byte(nil), old...)
	clear(want[8:18])
	if got := read(t, p); got != string(want) {
		t.Errorf("reads %q", got)
	}
}
