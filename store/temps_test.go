package store

import (
	"os"
	"strconv"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// delalloc reports whether the first extent of f is still delayed
// allocation (ext4: written to the page cache, no writeback started yet).
func delalloc(t *testing.T, f *os.File) bool {
	t.Helper()
	// struct fiemap with room for one struct fiemap_extent.
	var buf [32 + 56]byte
	*(*uint64)(unsafe.Pointer(&buf[8])) = ^uint64(0) // fm_length
	*(*uint32)(unsafe.Pointer(&buf[24])) = 1         // fm_extent_count
	const fsIocFiemap = 0xC020660B
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&buf[0]))); e != 0 {
		t.Fatalf("FIEMAP: %v", e)
	}
	if n := *(*uint32)(unsafe.Pointer(&buf[20])); n != 1 {
		t.Fatalf("FIEMAP: %d extents", n)
	}
	const extentDelalloc = 0x4
	return *(*uint32)(unsafe.Pointer(&buf[32+40]))&extentDelalloc != 0
}

// openScratchBlobStore opens a blob store in a temporary directory, closed
// at the end of the test, and says whether that directory is on ext4
// (where FIEMAP shows delayed allocation).
func openScratchBlobStore(t *testing.T) (*Store, bool) {
	t.Helper()
	dir := t.TempDir()
	var sfs unix.Statfs_t
	must(t, unix.Statfs(dir, &sfs))
	s, kv := openBlobStore(t, dir)
	t.Cleanup(func() { s.Close(); kv.Close() })
	return s, sfs.Type == unix.EXT4_SUPER_MAGIC
}

// writeLikeKernel writes through a second open of f and closes it, as the
// kernel does with a passthrough session's backing file.
func writeLikeKernel(t *testing.T, f *os.File, data []byte) {
	t.Helper()
	g, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), os.O_RDWR, 0)
	must(t, err)
	_, err = g.WriteAt(data, 0)
	must(t, err)
	must(t, g.Close())
}

// TestReusedTempStartsNoWriteback: a pooled unnamed file comes back empty,
// and closing what was written to it after reuse does not start writeback
// (ext4's auto_da_alloc would, after the truncation to zero, in the
// writer's close(2)).
func TestReusedTempStartsNoWriteback(t *testing.T) {
	t.Parallel()
	s, ext4 := openScratchBlobStore(t)
	f, err := s.blobs.TakeTemp()
	must(t, err)
	data := pattern(64<<10, 3)
	writeLikeKernel(t, f, data)
	s.blobs.GiveTemp(f)
	g, err := s.blobs.TakeTemp()
	must(t, err)
	if g != f {
		t.Fatal("the pool did not hand back the file it took")
	}
	st, err := g.Stat()
	must(t, err)
	if st.Size() != 0 {
		t.Fatalf("reused temp has %d bytes", st.Size())
	}
	writeLikeKernel(t, g, data)
	got := make([]byte, len(data))
	_, err = g.ReadAt(got, 0)
	must(t, err)
	if string(got) != string(data) {
		t.Fatal("reused temp reads back other bytes")
	}
	if !ext4 {
		t.Log("scratch is not ext4: the writeback check is ext4's")
		return
	}
	if !delalloc(t, g) {
		t.Fatal("closing the reused temp started writeback (truncation mark left set)")
	}
	s.blobs.GiveTemp(g)
}
