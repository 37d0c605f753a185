package transfer

import (
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fileReader reads the small regular files of an import: opened by name
// relative to their directory, which it keeps open while the files it
// reads are in it (the walk gives a directory's files one after another),
// with the system calls themselves rather than an os.File. At 1M files
// reading the source was a quarter of an import's CPU, and most of that
// the kernel's: a lookup of the whole path for every open, and os.File's
// try at the poller (epoll_ctl) and its finaliser. Files are opened
// without updating their access time where the caller may (O_NOATIME:
// its owner, or root), so that reading a tree writes nothing to it.
// A directory swapped for another by rename while the import is in it is
// read on from the one held open, as a walk already under way would.
// A fileReader is used by one goroutine.
type fileReader struct {
	dir     string // the directory open at dirfd, with its trailing slash
	dirfd   int
	started bool
}

// read stats the regular file name and reads it when it holds at most max
// bytes: fi and ok for a file over max, with nil data. The bytes are those
// the file holds when it is opened. ok is false when name cannot be read
// so, or is not a regular file (a symlink, a FIFO, a directory): the
// caller looks again.
func (r *fileReader) read(name string, max int64) (_ fs.FileInfo, _ []byte, ok bool) {
	fd, err := r.open(name)
	if err != nil {
		return nil, nil, false
	}
	defer unix.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, nil, false
	}
	fi := &statInfo{name: filepath.Base(name), st: st}
	switch {
	case st.Size > max:
		return fi, nil, true
	case st.Size == 0: // empty, or a file whose size says nothing (/proc)
		data, err := readUpTo(fd, make([]byte, 0, 512), max+1)
		return fi, data, err == nil && int64(len(data)) <= max
	}
	data, err := readUpTo(fd, make([]byte, 0, st.Size), st.Size)
	// Short: it shrank since the stat, and is read again by the caller.
	return fi, data, err == nil && int64(len(data)) == st.Size
}

// open opens name for reading, relative to its directory's descriptor
// when that can be had, without following a symlink or blocking on a
// FIFO.
func (r *fileReader) open(name string) (int, error) {
	dir, base := filepath.Split(name)
	if !r.started || dir != r.dir {
		r.close()
		r.started, r.dir = true, dir
		r.dirfd = -1
		if fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			r.dirfd = fd
		}
	}
	at, rel := r.dirfd, base
	if at < 0 {
		at, rel = unix.AT_FDCWD, name
	}
	flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	noatime := unix.O_NOATIME
	for {
		fd, err := unix.Openat(at, rel, flags|noatime, 0)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EPERM) && noatime != 0:
			noatime = 0 // not this file's owner: its access time is updated
			continue
		}
		return -1, err
	}
}

// close closes the directory held open.
func (r *fileReader) close() {
	if r.started && r.dirfd >= 0 {
		unix.Close(r.dirfd)
	}
	r.started = false
}

// readUpTo appends to buf what fd holds, up to limit bytes, until its end.
func readUpTo(fd int, buf []byte, limit int64) ([]byte, error) {
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		end := min(int64(cap(buf)), limit)
		n, err := unix.Read(fd, buf[len(buf):end])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return nil, err
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
	return buf, nil
}

// statInfo is fs.FileInfo for a regular file's stat; Sys gives the
// *syscall.Stat_t, as os.Stat's does.
type statInfo struct {
	name string
	st   syscall.Stat_t
}

func (i *statInfo) Name() string { return i.name }
func (i *statInfo) Size() int64  { return i.st.Size }
func (i *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	if i.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if i.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if i.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m // regular: no type bits
}
func (i *statInfo) ModTime() time.Time {
	return time.Unix(i.st.Mtim.Sec, i.st.Mtim.Nsec)
}
func (i *statInfo) IsDir() bool { return false }
func (i *statInfo) Sys() any    { return &i.st }
