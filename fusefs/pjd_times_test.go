package fusefs

// pjdfstest ports, timestamps: which of atime, mtime and ctime each
// operation changes, on the node and its parents (see pjd_test.go).

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pjdTimeCase is an operation and which timestamps it changes: for each
// path, the letters of the times that must move forward ("m" mtime, "c"
// ctime); a time not named must stay exactly as it was. born names nodes
// the operation creates, whose atime, mtime and ctime must be equal and
// no older than the parent's before the call.
type pjdTimeCase struct {
	name   string
	setup  []string
	op     func(p pathFn) error
	change map[string]string
	born   []string
	from   map[string]string // a renamed node: its path before the call
}

var pjdTimeCases = []pjdTimeCase{
	// open/00.t
	{"create", nil, func(p pathFn) error { return open(p("n"), unix.O_CREAT|unix.O_WRONLY) },
		map[string]string{".": "mc"}, []string{"n"}, nil},
	{"open O_TRUNC", []string{"f"}, func(p pathFn) error { return open(p("f"), unix.O_WRONLY|unix.O_TRUNC) },
		map[string]string{".": "", "f": "mc"}, nil, nil},
	{"open existing, no O_TRUNC", []string{"f"}, func(p pathFn) error { return open(p("f"), unix.O_RDWR) },
		map[string]string{".": "", "f": ""}, nil, nil},
	{"write", []string{"f"}, func(p pathFn) error {
		f, err := os.OpenFile(p("f"), os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteAt([]byte("x"), 2)
		return errors.Join(err, f.Close())
	}, map[string]string{".": "", "f": "mc"}, nil, nil},
	{"read", []string{"f"}, func(p pathFn) error { _, err := os.ReadFile(p("f")); return err },
		map[string]string{".": "", "f": ""}, nil, nil},
	// mkdir/00.t, mkfifo/00.t, symlink/00.t
	{"mkdir", nil, func(p pathFn) error { return unix.Mkdir(p("n"), 0o755) },
		map[string]string{".": "mc"}, []string{"n"}, nil},
	{"mkfifo", nil, func(p pathFn) error { return unix.Mkfifo(p("n"), 0o644) },
		map[string]string{".": "mc"}, []string{"n"}, nil},
	{"symlink", nil, func(p pathFn) error { return unix.Symlink("t", p("n")) },
		map[string]string{".": "mc"}, []string{"n"}, nil},
	// link/00.t
	{"link same dir", []string{"f"}, func(p pathFn) error { return unix.Link(p("f"), p("h")) },
		map[string]string{".": "mc", "f": "c"}, nil, nil},
	{"link across dirs", []string{"a/", "b/", "a/f"}, func(p pathFn) error { return unix.Link(p("a/f"), p("b/h")) },
		map[string]string{"a": "", "b": "mc", "a/f": "c"}, nil, nil},
	// unlink/00.t. mnemofs moves a removed memory to archive/trash (the
	// mount here keeps every removal): the name still leaves the
	// directory, whose times move as on a disk.
	{"unlink last link", []string{"d/", "d/f"}, func(p pathFn) error { return unix.Unlink(p("d/f")) },
		map[string]string{"d": "mc", ".": ""}, nil, nil},
	{"unlink one of two links", []string{"f", "h=f"}, func(p pathFn) error { return unix.Unlink(p("h")) },
		map[string]string{".": "mc", "f": "c"}, nil, nil},
	{"unlink symlink", []string{"f", "l->f"}, func(p pathFn) error { return unix.Unlink(p("l")) },
		map[string]string{".": "mc", "f": ""}, nil, nil},
	// rmdir/00.t
	{"rmdir", []string{"d/", "d/s/"}, func(p pathFn) error { return unix.Rmdir(p("d/s")) },
		map[string]string{"d": "mc", ".": ""}, nil, nil},
	// rename/00.t
	{"rename file in dir", []string{"f"}, func(p pathFn) error { return unix.Rename(p("f"), p("g")) },
		map[string]string{".": "mc", "g": "c"}, nil, map[string]string{"g": "f"}},
	{"rename file across dirs", []string{"a/", "b/", "a/f"}, func(p pathFn) error { return unix.Rename(p("a/f"), p("b/f")) },
		map[string]string{"a": "mc", "b": "mc", "b/f": "c", ".": ""}, nil, map[string]string{"b/f": "a/f"}},
	{"rename over a file", []string{"a/", "b/", "a/f", "b/g", "b/h=b/g"}, func(p pathFn) error { return unix.Rename(p("a/f"), p("b/g")) },
		map[string]string{"a": "mc", "b": "mc", "b/g": "c", "b/h": "c"}, nil, map[string]string{"b/g": "a/f", "b/h": "b/g"}},
	{"rename dir across dirs", []string{"a/", "b/", "a/d/", "a/d/f"}, func(p pathFn) error { return unix.Rename(p("a/d"), p("b/d")) },
		map[string]string{"a": "mc", "b": "mc", "b/d": "c", "b/d/f": "", ".": ""}, nil, map[string]string{"b/d": "a/d", "b/d/f": "a/d/f"}},
	{"rename symlink", []string{"l->x"}, func(p pathFn) error { return unix.Rename(p("l"), p("m")) },
		map[string]string{".": "mc", "m": "c"}, nil, map[string]string{"m": "l"}},
	// truncate/00.t, ftruncate/00.t
	{"truncate shorter", []string{"f"}, func(p pathFn) error { return unix.Truncate(p("f"), 1) },
		map[string]string{".": "", "f": "mc"}, nil, nil},
	{"truncate longer", []string{"f"}, func(p pathFn) error { return unix.Truncate(p("f"), 100) },
		map[string]string{".": "", "f": "mc"}, nil, nil},
	{"truncate to the same size", []string{"f"}, func(p pathFn) error { return unix.Truncate(p("f"), 5) },
		map[string]string{".": "", "f": "mc"}, nil, nil},
	// chmod/00.t, chown/00.t
	{"chmod", []string{"f"}, func(p pathFn) error { return unix.Chmod(p("f"), 0o600) },
		map[string]string{".": "", "f": "c"}, nil, nil},
	{"chmod dir", []string{"d/"}, func(p pathFn) error { return unix.Chmod(p("d"), 0o700) },
		map[string]string{".": "", "d": "c"}, nil, nil},
	{"chown", []string{"f"}, func(p pathFn) error { return unix.Chown(p("f"), 65534, 65533) },
		map[string]string{".": "", "f": "c"}, nil, nil},
	{"lchown symlink", []string{"f", "l->f"}, func(p pathFn) error { return unix.Lchown(p("l"), 65534, 65533) },
		map[string]string{"f": "", "l": "c"}, nil, nil},
	// utimensat/00.t: the times given, and ctime now.
	{"utimensat", []string{"f"}, func(p pathFn) error { return utimes(p("f"), ts(3e9, 0), ts(3e9, 0), 0) },
		map[string]string{".": "", "f": "mc"}, nil, nil},
	{"utimensat UTIME_NOW", []string{"f"}, func(p pathFn) error {
		return utimes(p("f"), ts(0, unix.UTIME_NOW), ts(0, unix.UTIME_NOW), 0)
	}, map[string]string{".": "", "f": "mc"}, nil, nil},
	{"setxattr", []string{"f"}, func(p pathFn) error { return unix.Setxattr(p("f"), "user.pjd", []byte("v"), 0) },
		map[string]string{".": "", "f": "c"}, nil, nil},
}

// pjdStamp is the mtime and ctime of a node as seen through stat(2), and,
// on the mount, as the store holds them (what the next GETATTR returns
// once the kernel's attribute cache expires).
type pjdStamp struct {
	stat, store [2]int64 // mtime, ctime in ns
	ino         uint64
}

func stamp(s *pjdSide, p string) (pjdStamp, error) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return pjdStamp{}, err
	}
	out := pjdStamp{stat: [2]int64{st.Mtim.Nano(), st.Ctim.Nano()}, ino: st.Ino}
	if s.tf != nil {
		i, err := s.tf.st.Attr(st.Ino)
		if err != nil {
			return out, err
		}
		out.store = [2]int64{i.Mtime, i.Ctime}
	}
	return out, nil
}

func TestPjdTimestamps(t *testing.T) {
	t.Parallel()
	sides := pjdSides(t)
	for _, c := range pjdTimeCases {
		t.Run(c.name, func(t *testing.T) {
			for _, s := range sides {
				dir := s.fresh(t)
				pjdFixture(t, dir, c.setup)
				// Not filepath.Join: "d/." must reach the kernel as is.
				p := func(rel string) string { return dir + "/" + rel }
				before := map[string]pjdStamp{}
				for rel := range c.change {
					src := rel
					if c.from[rel] != "" {
						src = c.from[rel]
					}
					if st, err := stamp(s, p(src)); err == nil {
						before[rel] = st
					}
				}
				parent, err := stamp(s, dir)
				must(t, err)
				// Past the granularity of the local disk's clock.
				time.Sleep(20 * time.Millisecond)
				if err := c.op(p); err != nil {
					t.Errorf("%s: %v", s.name, err)
					continue
				}
				for rel, letters := range c.change {
					b, ok := before[rel]
					a, err := stamp(s, p(rel))
					if err != nil || !ok {
						t.Errorf("%s: %s: %v (no stamp before: %v)", s.name, rel, err, !ok)
						continue
					}
					checkStamps(t, s, rel, "stat", letters, b.stat, a.stat)
					if s.tf != nil {
						checkStamps(t, s, rel, "store", letters, b.store, a.store)
					}
				}
				for _, rel := range c.born {
					var st unix.Stat_t
					if err := unix.Lstat(p(rel), &st); err != nil {
						t.Errorf("%s: %s: %v", s.name, rel, err)
						continue
					}
					if st.Mtim != st.Ctim || (st.Mode&unix.S_IFMT != unix.S_IFLNK && st.Atim != st.Mtim) {
						t.Errorf("%s: new %s: atime %v mtime %v ctime %v, want all equal", s.name, rel, st.Atim, st.Mtim, st.Ctim)
					}
					if st.Mtim.Nano() < parent.stat[0] {
						t.Errorf("%s: new %s: mtime %v before its parent's mtime before the call", s.name, rel, st.Mtim)
					}
				}
			}
		})
	}
}

func checkStamps(t *testing.T, s *pjdSide, rel, via, letters string, b, a [2]int64) {
	t.Helper()
	for k, l := range []string{"m", "c"} {
		moved := a[k] > b[k]
		switch {
		case strings.Contains(letters, l) && !moved:
			t.Errorf("%s (%s): %s: %stime did not move forward (%d → %d)", s.name, via, rel, l, b[k], a[k])
		case !strings.Contains(letters, l) && a[k] != b[k]:
			t.Errorf("%s (%s): %s: %stime changed (%d → %d), want unchanged", s.name, via, rel, l, b[k], a[k])
		}
	}
}
