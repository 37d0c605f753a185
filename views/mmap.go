package views

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapSegment maps size bytes of f at off (a multiple of the page size)
// read-only. The mapping is never unmapped (snapshot.go says why).
func mapSegment(f *os.File, off, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	return unix.Mmap(int(f.Fd()), off, int(size), unix.PROT_READ, unix.MAP_SHARED)
}

// dropResident lets the kernel take back the pages of a mapping that
// were read (they are read again from the file when used).
func dropResident(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED)
	}
}
