package fusefs

// pjdfstest ports, errno cases: the table run by TestPjdErrno (see
// pjd_test.go for the harness).

import (
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

var pjdErrCases = []pjdErrCase{
	// Times before 1970 (negative unix ns) keep their nanoseconds.
	{"utimensat/before 1970", []string{"f"}, func(p pathFn) error { return utimes(p("f"), ts(-2, 5e8), ts(-86400*365, 1), 0) }, 0,
		func(p pathFn) error { return wantTimes(p("f"), ts(-2, 5e8), ts(-86400*365, 1)) }},
	// open(2): open/01.t ... open/24.t
	{"open/ENOTDIR component", []string{"f"}, func(p pathFn) error { return open(p("f/x"), unix.O_RDONLY) }, unix.ENOTDIR, nil},
	{"open/ENOTDIR O_CREAT under a file", []string{"f"}, func(p pathFn) error { return open(p("f/x"), unix.O_CREAT|unix.O_WRONLY) }, unix.ENOTDIR, nil},
	{"open/ENOTDIR O_DIRECTORY on a file", []string{"f"}, func(p pathFn) error { return open(p("f"), unix.O_RDONLY|unix.O_DIRECTORY) }, unix.ENOTDIR, nil},
	{"open/ENAMETOOLONG create", nil, func(p pathFn) error { return open(p(name256), unix.O_CREAT|unix.O_WRONLY) }, unix.ENAMETOOLONG, nil},
	{"open/ENAMETOOLONG lookup", nil, func(p pathFn) error { return open(p(name256), unix.O_RDONLY) }, unix.ENAMETOOLONG, nil},
	{"open/255-byte name", nil, func(p pathFn) error { return open(p(name255), unix.O_CREAT|unix.O_WRONLY) }, 0,
		func(p pathFn) error { return wantContent(p(name255), "") }},
	{"open/ENOENT missing file", nil, func(p pathFn) error { return open(p("nope"), unix.O_RDONLY) }, unix.ENOENT, nil},
	{"open/ENOENT O_CREAT in missing dir", nil, func(p pathFn) error { return open(p("nodir/f"), unix.O_CREAT|unix.O_WRONLY) }, unix.ENOENT, nil},
	{"open/ENOENT dangling symlink", []string{"l->nope"}, func(p pathFn) error { return open(p("l"), unix.O_RDONLY) }, unix.ENOENT, nil},
	{"open/O_CREAT through dangling symlink creates the target", []string{"l->t"}, func(p pathFn) error { return open(p("l"), unix.O_CREAT|unix.O_WRONLY) }, 0,
		func(p pathFn) error { return wantContent(p("t"), "") }},
	{"open/ELOOP symlink loop", []string{"a->b", "b->a"}, func(p pathFn) error { return open(p("a"), unix.O_RDONLY) }, unix.ELOOP, nil},
	{"open/ELOOP loop in a component", []string{"a->b", "b->a"}, func(p pathFn) error { return open(p("a/x"), unix.O_CREAT|unix.O_WRONLY) }, unix.ELOOP, nil},
	{"open/ELOOP O_NOFOLLOW on a symlink", []string{"f", "l->f"}, func(p pathFn) error { return open(p("l"), unix.O_RDONLY|unix.O_NOFOLLOW) }, unix.ELOOP, nil},
	{"open/EISDIR O_WRONLY on a dir", []string{"d/"}, func(p pathFn) error { return open(p("d"), unix.O_WRONLY) }, unix.EISDIR, nil},
	{"open/EISDIR O_RDWR on a dir", []string{"d/"}, func(p pathFn) error { return open(p("d"), unix.O_RDWR) }, unix.EISDIR, nil},
	{"open/EISDIR O_CREAT on a dir", []string{"d/"}, func(p pathFn) error { return open(p("d"), unix.O_CREAT|unix.O_RDONLY) }, unix.EISDIR, nil},
	{"open/EEXIST O_EXCL on a file", []string{"f"}, func(p pathFn) error { return open(p("f"), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY) }, unix.EEXIST, nil},
	{"open/EEXIST O_EXCL on a dir", []string{"d/"}, func(p pathFn) error { return open(p("d"), unix.O_CREAT|unix.O_EXCL|unix.O_RDONLY) }, unix.EEXIST, nil},
	{"open/EEXIST O_EXCL on a dangling symlink", []string{"l->nope"}, func(p pathFn) error { return open(p("l"), unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY) }, unix.EEXIST,
		func(p pathFn) error { return wantMissing(p("nope")) }},
	{"open/ENXIO FIFO O_WRONLY|O_NONBLOCK without reader", []string{"p|"}, func(p pathFn) error { return open(p("p"), unix.O_WRONLY|unix.O_NONBLOCK) }, unix.ENXIO, nil},
	{"open/FIFO O_RDONLY|O_NONBLOCK", []string{"p|"}, func(p pathFn) error { return open(p("p"), unix.O_RDONLY|unix.O_NONBLOCK) }, 0, nil},
	{"open/O_TRUNC empties", []string{"f"}, func(p pathFn) error { return open(p("f"), unix.O_WRONLY|unix.O_TRUNC) }, 0,
		func(p pathFn) error { return wantContent(p("f"), "") }},

	{"open/new file: mode less umask, owner the caller", nil, func(p pathFn) error {
		fd, err := unix.Open(p("n"), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o4777)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}, 0, func(p pathFn) error {
		return all(wantMode(p("n"), unix.S_IFREG|0o4777&^uint32(umask())), wantOwner(p("n"), uint32(os.Geteuid()), uint32(os.Getegid())))
	}},

	// mknod(2): mknod/00.t ... mknod/11.t
	{"mknod/char device keeps rdev", nil, func(p pathFn) error { return unix.Mknod(p("c"), unix.S_IFCHR|0o640, int(unix.Mkdev(1, 3))) }, 0,
		func(p pathFn) error {
			var st unix.Stat_t
			if err := unix.Lstat(p("c"), &st); err != nil {
				return err
			}
			if st.Mode != unix.S_IFCHR|0o640&^uint32(umask()) || st.Rdev != unix.Mkdev(1, 3) {
				return fmt.Errorf("c: mode %o rdev %x", st.Mode, st.Rdev)
			}
			return nil
		}},
	{"mknod/EEXIST", []string{"f"}, func(p pathFn) error { return unix.Mkfifo(p("f"), 0o644) }, unix.EEXIST, nil},
	{"mknod/ENOENT parent", nil, func(p pathFn) error { return unix.Mkfifo(p("nodir/p"), 0o644) }, unix.ENOENT, nil},
	{"mknod/ENAMETOOLONG", nil, func(p pathFn) error { return unix.Mkfifo(p(name256), 0o644) }, unix.ENAMETOOLONG, nil},

	// rename(2): rename/01.t ... rename/24.t
	{"rename/ENOENT source", nil, func(p pathFn) error { return unix.Rename(p("nope"), p("x")) }, unix.ENOENT, nil},
	{"rename/ENOENT target dir", []string{"f"}, func(p pathFn) error { return unix.Rename(p("f"), p("nodir/x")) }, unix.ENOENT,
		func(p pathFn) error { return wantContent(p("f"), "data\n") }},
	{"rename/ENOTDIR source component", []string{"f"}, func(p pathFn) error { return unix.Rename(p("f/x"), p("y")) }, unix.ENOTDIR, nil},
	{"rename/ENOTDIR target component", []string{"f", "g"}, func(p pathFn) error { return unix.Rename(p("g"), p("f/x")) }, unix.ENOTDIR, nil},
	{"rename/ENOTDIR dir over file", []string{"d/", "f"}, func(p pathFn) error { return unix.Rename(p("d"), p("f")) }, unix.ENOTDIR,
		func(p pathFn) error { return wantContent(p("f"), "data\n") }},
	{"rename/EISDIR file over dir", []string{"d/", "f"}, func(p pathFn) error { return unix.Rename(p("f"), p("d")) }, unix.EISDIR, nil},
	{"rename/ENOTEMPTY dir over non-empty dir", []string{"a/", "b/", "b/f"}, func(p pathFn) error { return unix.Rename(p("a"), p("b")) }, unix.ENOTEMPTY,
		func(p pathFn) error { return wantContent(p("b/f"), "data\n") }},
	{"rename/dir over empty dir", []string{"a/", "a/f", "b/"}, func(p pathFn) error { return unix.Rename(p("a"), p("b")) }, 0,
		func(p pathFn) error {
			return all(wantContent(p("b/f"), "data\n"), wantMissing(p("a")), wantNlink(p("."), 3))
		}},
	{"rename/EINVAL dir into itself", []string{"d/", "d/s/"}, func(p pathFn) error { return unix.Rename(p("d"), p("d/s/x")) }, unix.EINVAL, nil},
	{"rename/EINVAL dir onto its child", []string{"d/", "d/s/"}, func(p pathFn) error { return unix.Rename(p("d"), p("d/s")) }, unix.EINVAL, nil},
	{"rename/EBUSY dot", []string{"d/"}, func(p pathFn) error { return unix.Rename(p("d/."), p("x")) }, unix.EBUSY, nil},
	{"rename/ENAMETOOLONG target", []string{"f"}, func(p pathFn) error { return unix.Rename(p("f"), p(name256)) }, unix.ENAMETOOLONG,
		func(p pathFn) error { return wantContent(p("f"), "data\n") }},
	{"rename/ENAMETOOLONG source", nil, func(p pathFn) error { return unix.Rename(p(name256), p("x")) }, unix.ENAMETOOLONG, nil},
	{"rename/255-byte target", []string{"f"}, func(p pathFn) error { return unix.Rename(p("f"), p(name255)) }, 0,
		func(p pathFn) error { return all(wantContent(p(name255), "data\n"), wantMissing(p("f"))) }},
	{"rename/hard links of one file: no-op", []string{"f", "h=f"}, func(p pathFn) error { return unix.Rename(p("f"), p("h")) }, 0,
		func(p pathFn) error { return all(wantNlink(p("f"), 2), wantNlink(p("h"), 2)) }},
	{"rename/onto itself", []string{"f"}, func(p pathFn) error { return unix.Rename(p("f"), p("f")) }, 0,
		func(p pathFn) error { return wantContent(p("f"), "data\n") }},
	{"rename/over a file", []string{"f", "g"}, func(p pathFn) error {
		if err := os.WriteFile(p("g"), []byte("other"), 0o644); err != nil {
			return err
		}
		return unix.Rename(p("g"), p("f"))
	}, 0, func(p pathFn) error { return all(wantContent(p("f"), "other"), wantMissing(p("g"))) }},
	{"rename/over one of two hard links", []string{"f", "h=f", "g"}, func(p pathFn) error { return unix.Rename(p("g"), p("h")) }, 0,
		func(p pathFn) error { return all(wantNlink(p("f"), 1), wantNlink(p("h"), 1)) }},
	{"rename/over a symlink replaces the link", []string{"f", "t", "l->t"}, func(p pathFn) error { return unix.Rename(p("f"), p("l")) }, 0,
		func(p pathFn) error { return all(wantMode(p("l"), unix.S_IFREG|0o644), wantContent(p("t"), "data\n")) }},
	{"rename/a symlink moves the link", []string{"d/", "t", "l->../t"}, func(p pathFn) error { return unix.Rename(p("l"), p("d/l")) }, 0,
		func(p pathFn) error { return wantContent(p("d/l"), "data\n") }},
	{"rename/NOREPLACE EEXIST", []string{"f", "g"}, func(p pathFn) error {
		return unix.Renameat2(unix.AT_FDCWD, p("f"), unix.AT_FDCWD, p("g"), unix.RENAME_NOREPLACE)
	}, unix.EEXIST, nil},
	{"rename/EXCHANGE ENOENT", []string{"f"}, func(p pathFn) error {
		return unix.Renameat2(unix.AT_FDCWD, p("f"), unix.AT_FDCWD, p("g"), unix.RENAME_EXCHANGE)
	}, unix.ENOENT, nil},
	{"rename/EXCHANGE dir and file", []string{"d/", "d/x", "f"}, func(p pathFn) error {
		return unix.Renameat2(unix.AT_FDCWD, p("f"), unix.AT_FDCWD, p("d"), unix.RENAME_EXCHANGE)
	}, 0, func(p pathFn) error { return all(wantContent(p("f/x"), "data\n"), wantContent(p("d"), "data\n")) }},

	// unlink(2): unlink/01.t ... unlink/14.t
	{"unlink/ENOENT", nil, func(p pathFn) error { return unix.Unlink(p("nope")) }, unix.ENOENT, nil},
	{"unlink/ENOTDIR component", []string{"f"}, func(p pathFn) error { return unix.Unlink(p("f/x")) }, unix.ENOTDIR, nil},
	{"unlink/EISDIR on a dir", []string{"d/"}, func(p pathFn) error { return unix.Unlink(p("d")) }, unix.EISDIR, nil},
	{"unlink/ENAMETOOLONG", nil, func(p pathFn) error { return unix.Unlink(p(name256)) }, unix.ENAMETOOLONG, nil},
	{"unlink/one hard link leaves the other", []string{"f", "h=f"}, func(p pathFn) error { return unix.Unlink(p("f")) }, 0,
		func(p pathFn) error {
			return all(wantMissing(p("f")), wantNlink(p("h"), 1), wantContent(p("h"), "data\n"))
		}},
	{"unlink/a symlink leaves its target", []string{"f", "l->f"}, func(p pathFn) error { return unix.Unlink(p("l")) }, 0,
		func(p pathFn) error { return all(wantMissing(p("l")), wantContent(p("f"), "data\n")) }},
	{"unlink/a FIFO", []string{"p|"}, func(p pathFn) error { return unix.Unlink(p("p")) }, 0,
		func(p pathFn) error { return wantMissing(p("p")) }},

	// mkdir(2): mkdir/01.t ... mkdir/12.t
	{"mkdir/EEXIST file", []string{"f"}, func(p pathFn) error { return unix.Mkdir(p("f"), 0o755) }, unix.EEXIST, nil},
	{"mkdir/EEXIST dir", []string{"d/"}, func(p pathFn) error { return unix.Mkdir(p("d"), 0o755) }, unix.EEXIST, nil},
	{"mkdir/EEXIST dangling symlink", []string{"l->nope"}, func(p pathFn) error { return unix.Mkdir(p("l"), 0o755) }, unix.EEXIST, nil},
	{"mkdir/ENOENT parent", nil, func(p pathFn) error { return unix.Mkdir(p("nodir/d"), 0o755) }, unix.ENOENT, nil},
	{"mkdir/ENOTDIR component", []string{"f"}, func(p pathFn) error { return unix.Mkdir(p("f/d"), 0o755) }, unix.ENOTDIR, nil},
	{"mkdir/ENAMETOOLONG", nil, func(p pathFn) error { return unix.Mkdir(p(name256), 0o755) }, unix.ENAMETOOLONG, nil},
	{"mkdir/parent nlink", []string{"d/"}, func(p pathFn) error { return unix.Mkdir(p("e"), 0o755) }, 0,
		func(p pathFn) error { return all(wantNlink(p("."), 4), wantNlink(p("e"), 2)) }},
	{"mkdir/mode bits", nil, func(p pathFn) error {
		if err := unix.Mkdir(p("d"), 0o755); err != nil {
			return err
		}
		return unix.Chmod(p("d"), 0o1777)
	}, 0, func(p pathFn) error { return wantMode(p("d"), unix.S_IFDIR|0o1777) }},

	// rmdir(2): rmdir/01.t ... rmdir/15.t
	{"rmdir/ENOTEMPTY", []string{"d/", "d/f"}, func(p pathFn) error { return unix.Rmdir(p("d")) }, unix.ENOTEMPTY, nil},
	{"rmdir/ENOTEMPTY subdir", []string{"d/", "d/s/"}, func(p pathFn) error { return unix.Rmdir(p("d")) }, unix.ENOTEMPTY, nil},
	{"rmdir/ENOTEMPTY dotdot", []string{"d/"}, func(p pathFn) error { return unix.Rmdir(p("d/..")) }, unix.ENOTEMPTY, nil},
	{"rmdir/ENOTDIR file", []string{"f"}, func(p pathFn) error { return unix.Rmdir(p("f")) }, unix.ENOTDIR, nil},
	{"rmdir/ENOTDIR symlink to dir", []string{"d/", "l->d"}, func(p pathFn) error { return unix.Rmdir(p("l")) }, unix.ENOTDIR, nil},
	{"rmdir/ENOTDIR component", []string{"f"}, func(p pathFn) error { return unix.Rmdir(p("f/d")) }, unix.ENOTDIR, nil},
	{"rmdir/ENOENT", nil, func(p pathFn) error { return unix.Rmdir(p("nope")) }, unix.ENOENT, nil},
	{"rmdir/EINVAL dot", []string{"d/"}, func(p pathFn) error { return unix.Rmdir(p("d/.")) }, unix.EINVAL, nil},
	{"rmdir/ENAMETOOLONG", nil, func(p pathFn) error { return unix.Rmdir(p(name256)) }, unix.ENAMETOOLONG, nil},
	{"rmdir/parent nlink", []string{"d/", "e/"}, func(p pathFn) error { return unix.Rmdir(p("e")) }, 0,
		func(p pathFn) error { return all(wantNlink(p("."), 3), wantMissing(p("e"))) }},

	// link(2): link/01.t ... link/17.t
	{"link/EEXIST file", []string{"f", "g"}, func(p pathFn) error { return unix.Link(p("f"), p("g")) }, unix.EEXIST, nil},
	{"link/EEXIST dir", []string{"f", "d/"}, func(p pathFn) error { return unix.Link(p("f"), p("d")) }, unix.EEXIST, nil},
	{"link/EEXIST symlink", []string{"f", "l->nope"}, func(p pathFn) error { return unix.Link(p("f"), p("l")) }, unix.EEXIST, nil},
	{"link/ENOENT source", nil, func(p pathFn) error { return unix.Link(p("nope"), p("x")) }, unix.ENOENT, nil},
	{"link/ENOENT target dir", []string{"f"}, func(p pathFn) error { return unix.Link(p("f"), p("nodir/x")) }, unix.ENOENT,
		func(p pathFn) error { return wantNlink(p("f"), 1) }},
	{"link/ENOTDIR component", []string{"f", "g"}, func(p pathFn) error { return unix.Link(p("f"), p("g/x")) }, unix.ENOTDIR, nil},
	{"link/EPERM directory", []string{"d/"}, func(p pathFn) error { return unix.Link(p("d"), p("x")) }, unix.EPERM, nil},
	{"link/ENAMETOOLONG", []string{"f"}, func(p pathFn) error { return unix.Link(p("f"), p(name256)) }, unix.ENAMETOOLONG,
		func(p pathFn) error { return wantNlink(p("f"), 1) }},
	{"link/nlink and shared content", []string{"d/", "f"}, func(p pathFn) error { return unix.Link(p("f"), p("d/h")) }, 0,
		func(p pathFn) error {
			if err := os.WriteFile(p("d/h"), []byte("new"), 0o644); err != nil {
				return err
			}
			return all(wantNlink(p("f"), 2), wantContent(p("f"), "new"))
		}},
	{"link/to a symlink links the symlink", []string{"f", "l->f"}, func(p pathFn) error { return unix.Link(p("l"), p("m")) }, 0,
		func(p pathFn) error {
			return all(wantMode(p("m"), unix.S_IFLNK|0o777), wantNlink(p("l"), 2), wantNlink(p("f"), 1))
		}},
	{"link/a FIFO", []string{"p|"}, func(p pathFn) error { return unix.Link(p("p"), p("q")) }, 0,
		func(p pathFn) error { return wantNlink(p("q"), 2) }},

	// symlink(2): symlink/01.t ... symlink/12.t
	{"symlink/EEXIST file", []string{"f"}, func(p pathFn) error { return unix.Symlink("x", p("f")) }, unix.EEXIST, nil},
	{"symlink/EEXIST dir", []string{"d/"}, func(p pathFn) error { return unix.Symlink("x", p("d")) }, unix.EEXIST, nil},
	{"symlink/EEXIST symlink", []string{"l->x"}, func(p pathFn) error { return unix.Symlink("y", p("l")) }, unix.EEXIST, nil},
	{"symlink/ENOENT parent", nil, func(p pathFn) error { return unix.Symlink("x", p("nodir/l")) }, unix.ENOENT, nil},
	{"symlink/ENOTDIR component", []string{"f"}, func(p pathFn) error { return unix.Symlink("x", p("f/l")) }, unix.ENOTDIR, nil},
	{"symlink/ENAMETOOLONG name", nil, func(p pathFn) error { return unix.Symlink("x", p(name256)) }, unix.ENAMETOOLONG, nil},
	{"symlink/ENAMETOOLONG target past PATH_MAX", nil, func(p pathFn) error { return unix.Symlink(strings.Repeat("t", 4096), p("l")) }, unix.ENAMETOOLONG, nil},
	{"symlink/long target round-trips", nil, func(p pathFn) error { return unix.Symlink(strings.Repeat("a/", 1000)+"end", p("l")) }, 0,
		func(p pathFn) error {
			got, err := os.Readlink(p("l"))
			if err == nil && got != strings.Repeat("a/", 1000)+"end" {
				err = fmt.Errorf("readlink gives %d bytes", len(got))
			}
			return err
		}},
	{"symlink/ENOENT empty target", nil, func(p pathFn) error { return unix.Symlink("", p("l")) }, unix.ENOENT, nil},

	// truncate(2): truncate/01.t ... truncate/14.t
	{"truncate/EISDIR", []string{"d/"}, func(p pathFn) error { return unix.Truncate(p("d"), 0) }, unix.EISDIR, nil},
	{"truncate/ENOENT", nil, func(p pathFn) error { return unix.Truncate(p("nope"), 0) }, unix.ENOENT, nil},
	{"truncate/ENOTDIR component", []string{"f"}, func(p pathFn) error { return unix.Truncate(p("f/x"), 0) }, unix.ENOTDIR, nil},
	{"truncate/ENAMETOOLONG", nil, func(p pathFn) error { return unix.Truncate(p(name256), 0) }, unix.ENAMETOOLONG, nil},
	{"truncate/EINVAL negative", []string{"f"}, func(p pathFn) error { return unix.Truncate(p("f"), -1) }, unix.EINVAL,
		func(p pathFn) error { return wantContent(p("f"), "data\n") }},
	{"truncate/EFBIG past the largest file", []string{"f"}, func(p pathFn) error { return unix.Truncate(p("f"), 1<<62) }, unix.EFBIG, nil},
	{"truncate/extends with zeros through a symlink", []string{"f", "l->f"}, func(p pathFn) error { return unix.Truncate(p("l"), 8) }, 0,
		func(p pathFn) error { return wantContent(p("f"), "data\n\x00\x00\x00") }},
	{"truncate/shrinks", []string{"f"}, func(p pathFn) error { return unix.Truncate(p("f"), 2) }, 0,
		func(p pathFn) error { return wantContent(p("f"), "da") }},
	{"truncate/ftruncate EINVAL on O_RDONLY", []string{"f"}, func(p pathFn) error {
		fd, err := unix.Open(p("f"), unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return unix.Ftruncate(fd, 0)
	}, unix.EINVAL, func(p pathFn) error { return wantContent(p("f"), "data\n") }},

	// chmod(2): chmod/01.t ... chmod/12.t
	{"chmod/ENOENT", nil, func(p pathFn) error { return unix.Chmod(p("nope"), 0o644) }, unix.ENOENT, nil},
	{"chmod/ENOTDIR component", []string{"f"}, func(p pathFn) error { return unix.Chmod(p("f/x"), 0o644) }, unix.ENOTDIR, nil},
	{"chmod/ENAMETOOLONG", nil, func(p pathFn) error { return unix.Chmod(p(name256), 0o644) }, unix.ENAMETOOLONG, nil},
	{"chmod/all bits on a file", []string{"f"}, func(p pathFn) error { return unix.Chmod(p("f"), 0o7777) }, 0,
		func(p pathFn) error { return wantMode(p("f"), unix.S_IFREG|0o7777) }},
	{"chmod/all bits on a dir", []string{"d/"}, func(p pathFn) error { return unix.Chmod(p("d"), 0o7777) }, 0,
		func(p pathFn) error { return wantMode(p("d"), unix.S_IFDIR|0o7777) }},
	{"chmod/follows a symlink", []string{"f", "l->f"}, func(p pathFn) error { return unix.Chmod(p("l"), 0o600) }, 0,
		func(p pathFn) error {
			return all(wantMode(p("f"), unix.S_IFREG|0o600), wantMode(p("l"), unix.S_IFLNK|0o777))
		}},
	{"chmod/a FIFO", []string{"p|"}, func(p pathFn) error { return unix.Chmod(p("p"), 0o640) }, 0,
		func(p pathFn) error { return wantMode(p("p"), unix.S_IFIFO|0o640) }},

	// chown(2): chown/01.t ... chown/12.t
	{"chown/ENOENT", nil, func(p pathFn) error { return unix.Chown(p("nope"), 1, 1) }, unix.ENOENT, nil},
	{"chown/ENOTDIR component", []string{"f"}, func(p pathFn) error { return unix.Chown(p("f/x"), 1, 1) }, unix.ENOTDIR, nil},
	{"chown/ENAMETOOLONG", nil, func(p pathFn) error { return unix.Chown(p(name256), 1, 1) }, unix.ENAMETOOLONG, nil},
	{"chown/sets owner, -1 leaves it", []string{"f"}, func(p pathFn) error {
		if err := unix.Chown(p("f"), 65534, 65533); err != nil {
			return err
		}
		return unix.Chown(p("f"), -1, 1234)
	}, 0, func(p pathFn) error { return wantOwner(p("f"), 65534, 1234) }},
	{"chown/follows a symlink, lchown does not", []string{"f", "l->f"}, func(p pathFn) error {
		if err := unix.Chown(p("l"), 100, 101); err != nil {
			return err
		}
		return unix.Lchown(p("l"), 200, 201)
	}, 0, func(p pathFn) error { return all(wantOwner(p("f"), 100, 101), wantOwner(p("l"), 200, 201)) }},
	{"chown/clears set-id bits of a file", []string{"f"}, func(p pathFn) error {
		if err := unix.Chmod(p("f"), 0o6555); err != nil {
			return err
		}
		return unix.Chown(p("f"), 65534, 65533)
	}, 0, func(p pathFn) error { return wantMode(p("f"), unix.S_IFREG|0o555) }},
	{"chown/keeps set-id bits of a dir", []string{"d/"}, func(p pathFn) error {
		if err := unix.Chmod(p("d"), 0o6755); err != nil {
			return err
		}
		return unix.Chown(p("d"), 65534, 65533)
	}, 0, func(p pathFn) error { return wantMode(p("d"), unix.S_IFDIR|0o6755) }},

	// utimensat(2): utimensat/01.t ... utimensat/09.t
	{"utimensat/ENOENT", nil, func(p pathFn) error { return utimes(p("nope"), ts(1, 0), ts(1, 0), 0) }, unix.ENOENT, nil},
	{"utimensat/ENOTDIR component", []string{"f"}, func(p pathFn) error { return utimes(p("f/x"), ts(1, 0), ts(1, 0), 0) }, unix.ENOTDIR, nil},
	{"utimensat/ENAMETOOLONG", nil, func(p pathFn) error { return utimes(p(name256), ts(1, 0), ts(1, 0), 0) }, unix.ENAMETOOLONG, nil},
	{"utimensat/EINVAL nsec out of range", []string{"f"}, func(p pathFn) error { return utimes(p("f"), ts(1, 1e9), ts(1, 0), 0) }, unix.EINVAL, nil},
	{"utimensat/ns precision", []string{"f"}, func(p pathFn) error { return utimes(p("f"), ts(1e9, 123456789), ts(1.5e9, 987654321), 0) }, 0,
		func(p pathFn) error { return wantTimes(p("f"), ts(1e9, 123456789), ts(1.5e9, 987654321)) }},
	{"utimensat/past 2^32 seconds", []string{"f"}, func(p pathFn) error { return utimes(p("f"), ts(1<<32+1, 5), ts(1<<32+2, 7), 0) }, 0,
		func(p pathFn) error { return wantTimes(p("f"), ts(1<<32+1, 5), ts(1<<32+2, 7)) }},
	{"utimensat/UTIME_OMIT keeps, UTIME_NOW sets", []string{"f"}, func(p pathFn) error {
		if err := utimes(p("f"), ts(1e9, 1), ts(1e9, 2), 0); err != nil {
			return err
		}
		return utimes(p("f"), ts(0, unix.UTIME_OMIT), ts(0, unix.UTIME_NOW), 0)
	}, 0, func(p pathFn) error {
		var st unix.Stat_t
		if err := unix.Lstat(p("f"), &st); err != nil {
			return err
		}
		if st.Atim != ts(1e9, 1) || time.Since(time.Unix(st.Mtim.Unix())) > time.Minute {
			return fmt.Errorf("atime %v (want 1e9.1), mtime %v (want now)", st.Atim, st.Mtim)
		}
		return nil
	}},
	{"utimensat/AT_SYMLINK_NOFOLLOW sets the link's times", []string{"f", "l->f"}, func(p pathFn) error {
		if err := utimes(p("f"), ts(1e9, 0), ts(1e9, 0), 0); err != nil {
			return err
		}
		return utimes(p("l"), ts(2e9, 0), ts(2e9, 0), unix.AT_SYMLINK_NOFOLLOW)
	}, 0, func(p pathFn) error {
		return all(wantTimes(p("l"), ts(2e9, 0), ts(2e9, 0)), wantTimes(p("f"), ts(1e9, 0), ts(1e9, 0)))
	}},
}
