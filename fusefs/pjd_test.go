package fusefs

// Ports of pjdfstest checks (tests/<syscall>/NN.t): the errno every
// system call returns for bad paths, and which timestamps an operation
// changes, on the node and on its parent directories.
//
// Every case runs twice: on a native directory (t.TempDir, a local disk)
// and on the mount. The native run guards the expectation itself — a case
// the local disk does not pass is a wrong case, not a mnemofs bug — and
// the mount must give the same answer.
//
// Left out of the port: the EACCES/EPERM permission cases (the tests run
// as root, and without --allow-other the mount does not check permissions:
// POSIX modes are enforced only with default_permissions), EROFS,
// EXDEV, ETXTBSY, EFAULT and the whole-path ENAMETOOLONG cases (the
// kernel answers those before FUSE sees them).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

var (
	name255 = strings.Repeat("x", 255)
	name256 = strings.Repeat("y", 256)
)

// pjdFixture makes the entries of specs in dir, in order:
//
//	"d/"       a directory (0755)
//	"f"        a regular file holding "data\n" (0644)
//	"l->t"     a symbolic link to t
//	"h=f"      a hard link h to f
//	"p|"       a FIFO
func pjdFixture(t testing.TB, dir string, specs []string) {
	t.Helper()
	for _, s := range specs {
		var err error
		switch {
		case strings.HasSuffix(s, "/"):
			err = unix.Mkdir(filepath.Join(dir, s), 0o755)
		case strings.HasSuffix(s, "|"):
			err = unix.Mkfifo(filepath.Join(dir, strings.TrimSuffix(s, "|")), 0o644)
		case strings.Contains(s, "->"):
			name, target, _ := strings.Cut(s, "->")
			err = unix.Symlink(target, filepath.Join(dir, name))
		case strings.Contains(s, "="):
			name, src, _ := strings.Cut(s, "=")
			err = unix.Link(filepath.Join(dir, src), filepath.Join(dir, name))
		default:
			err = os.WriteFile(filepath.Join(dir, s), []byte("data\n"), 0o644)
		}
		if err != nil {
			t.Fatalf("fixture %q: %v", s, err)
		}
	}
}

// pjdSide is one of the two directories a case runs in.
type pjdSide struct {
	name string
	tf   *testFS // nil for the native disk
	root string  // a fresh directory per case is made below it
	n    int
}

func (s *pjdSide) fresh(t testing.TB) string {
	s.n++
	d := filepath.Join(s.root, fmt.Sprintf("c%03d", s.n))
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func pjdSides(t *testing.T) []*pjdSide {
	tf := testMount(t)
	root := tf.path("working/pjd")
	must(t, os.Mkdir(root, 0o755))
	return []*pjdSide{{name: "native", root: t.TempDir()}, {name: "mnemofs", tf: tf, root: root}}
}

func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.Errno(0xFFFF) // not a system call error
}

func errName(e syscall.Errno) string {
	if e == 0 {
		return "success"
	}
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return e.Error()
}

type pathFn func(rel string) string

// pjdErrCase is one system call on a fixture, and the errno it must give;
// post (optional) checks the tree afterwards.
type pjdErrCase struct {
	name  string
	setup []string
	op    func(p pathFn) error
	want  syscall.Errno
	post  func(p pathFn) error
}

func open(p string, flags int) error {
	fd, err := unix.Open(p, flags|unix.O_CLOEXEC, 0o644)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

func nlinkOf(p string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return 0, err
	}
	return st.Nlink, nil
}

func wantNlink(p string, n uint64) error {
	got, err := nlinkOf(p)
	if err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("%s: nlink %d, want %d", filepath.Base(p), got, n)
	}
	return nil
}

func wantContent(p, want string) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if string(b) != want {
		return fmt.Errorf("%s holds %q, want %q", filepath.Base(p), b, want)
	}
	return nil
}

func wantMissing(p string) error {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("%s: lstat gives %v, want ENOENT", filepath.Base(p), err)
	}
	return nil
}

func wantMode(p string, mode uint32) error {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return err
	}
	if st.Mode != mode {
		return fmt.Errorf("%s: mode %o, want %o", filepath.Base(p), st.Mode, mode)
	}
	return nil
}

func all(errs ...error) error { return errors.Join(errs...) }

// umask returns the process umask (set and restored at once).
func umask() int {
	m := unix.Umask(0)
	unix.Umask(m)
	return m
}

func wantOwner(p string, uid, gid uint32) error {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return err
	}
	if st.Uid != uid || st.Gid != gid {
		return fmt.Errorf("%s: owner %d:%d, want %d:%d", filepath.Base(p), st.Uid, st.Gid, uid, gid)
	}
	return nil
}

func ts(sec float64, nsec int64) unix.Timespec { return unix.Timespec{Sec: int64(sec), Nsec: nsec} }

func utimes(p string, atime, mtime unix.Timespec, flags int) error {
	return unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{atime, mtime}, flags)
}

func wantTimes(p string, atime, mtime unix.Timespec) error {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return err
	}
	if st.Atim != atime || st.Mtim != mtime {
		return fmt.Errorf("%s: atime %v mtime %v, want %v %v", filepath.Base(p), st.Atim, st.Mtim, atime, mtime)
	}
	return nil
}

func TestPjdErrno(t *testing.T) { runPjdErrCases(t, pjdErrCases) }

func runPjdErrCases(t *testing.T, cases []pjdErrCase) {
	sides := pjdSides(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, s := range sides {
				dir := s.fresh(t)
				pjdFixture(t, dir, c.setup)
				// Not filepath.Join: "d/." must reach the kernel as is.
				p := func(rel string) string { return dir + "/" + rel }
				got := errnoOf(c.op(p))
				what := "mnemofs differs from the local disk"
				if s.tf == nil {
					what = "the case is wrong: the local disk disagrees"
				}
				if got != c.want {
					t.Errorf("%s: got %s, want %s (%s)", s.name, errName(got), errName(c.want), what)
					continue
				}
				if c.post != nil {
					if err := c.post(p); err != nil {
						t.Errorf("%s: after the call: %v (%s)", s.name, err, what)
					}
				}
			}
		})
	}
}
