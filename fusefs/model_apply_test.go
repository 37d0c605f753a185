package fusefs

// The two sides of the model test (model_test.go): applying one operation.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// modelSide is one of the two trees: its directory and the descriptors
// the sequence holds (-1: none).
type modelSide struct {
	dir string
	fds [modelSlots]int
}

func newModelSide(dir string) *modelSide {
	s := &modelSide{dir: dir}
	for i := range s.fds {
		s.fds[i] = -1
	}
	return s
}

func (s *modelSide) closeAll() {
	for i, fd := range s.fds {
		if fd >= 0 {
			unix.Close(fd)
			s.fds[i] = -1
		}
	}
}

func statString(st *unix.Stat_t) string {
	size := st.Size
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		size = 0 // directory sizes are the file system's own
	}
	return fmt.Sprintf("mode %o size %d nlink %d", st.Mode, size, st.Nlink)
}

// apply runs o on side s and returns what it read (read, stat, readdir
// and their descriptor forms) and its error.
func (s *modelSide) apply(o modelOp) (string, error) {
	p := func(rel string) string { return filepath.Join(s.dir, rel) }
	fd := s.fds[o.slot]
	switch o.kind {
	case "open":
		if fd >= 0 {
			unix.Close(fd)
			s.fds[o.slot] = -1
		}
		fd, err := unix.Open(p(o.path), unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err == nil {
			s.fds[o.slot] = fd
		}
		return "", err
	case "close":
		s.fds[o.slot] = -1
		if fd < 0 {
			return "", unix.EBADF
		}
		return "", unix.Close(fd)
	case "fdwrite":
		if fd < 0 {
			return "", unix.EBADF
		}
		_, err := unix.Pwrite(fd, o.data(), o.off)
		return "", err
	case "fdtruncate":
		if fd < 0 {
			return "", unix.EBADF
		}
		return "", unix.Ftruncate(fd, o.off)
	case "fdread":
		if fd < 0 {
			return "", unix.EBADF
		}
		b := make([]byte, 4*32<<10)
		n, err := unix.Pread(fd, b, 0)
		if err != nil {
			return "", err
		}
		return string(b[:n]), nil
	case "fdstat":
		if fd < 0 {
			return "", unix.EBADF
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return "", err
		}
		return statString(&st), nil
	}
	switch o.kind {
	case "create", "write", "append":
		flags := unix.O_WRONLY | unix.O_CLOEXEC
		switch o.kind {
		case "create":
			flags |= unix.O_CREAT | o.flags
		case "append":
			flags |= unix.O_APPEND
		}
		fd, err := unix.Open(p(o.path), flags, 0o644)
		if err != nil {
			return "", err
		}
		if o.kind == "write" {
			_, err = unix.Pwrite(fd, o.data(), o.off)
		} else {
			_, err = unix.Write(fd, o.data())
		}
		return "", errors.Join(err, unix.Close(fd))
	case "truncate":
		return "", unix.Truncate(p(o.path), o.off)
	case "rename":
		return "", unix.Renameat2(unix.AT_FDCWD, p(o.path), unix.AT_FDCWD, p(o.path2), uint(o.flags))
	case "unlink":
		return "", unix.Unlink(p(o.path))
	case "mkdir":
		return "", unix.Mkdir(p(o.path), 0o755)
	case "rmdir":
		return "", unix.Rmdir(p(o.path))
	case "link":
		return "", unix.Link(p(o.path), p(o.path2))
	case "symlink":
		return "", unix.Symlink(o.target, p(o.path))
	case "chmod":
		return "", unix.Chmod(p(o.path), o.mode)
	case "read":
		b, err := os.ReadFile(p(o.path))
		return string(b), err
	case "stat":
		var st unix.Stat_t
		if err := unix.Stat(p(o.path), &st); err != nil {
			return "", err
		}
		return statString(&st), nil
	case "readdir":
		ents, err := os.ReadDir(p(o.path))
		var names []string
		for _, e := range ents {
			names = append(names, e.Name()+":"+e.Type().String())
		}
		return fmt.Sprint(names), err
	}
	panic("unknown op " + o.kind)
}
