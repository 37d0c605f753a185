package fusefs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/store"
)

func getFlags(t *testing.T, p string) uint32 {
	t.Helper()
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	must(t, err)
	defer unix.Close(fd)
	v, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	must(t, err)
	return v
}

func setFlags(t *testing.T, p string, flags uint32) {
	t.Helper()
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	must(t, err)
	defer unix.Close(fd)
	v := int(flags)
	must(t, unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, v))
}

// fsxattr is struct fsxattr (FS_IOC_FSGETXATTR, as xfs_io chattr uses).
type fsxattr struct {
	Xflags, Extsize, Nextents, Projid, Cowextsize uint32
	Pad                                           [8]byte
}

func fsxattrIoctl(t *testing.T, p string, cmd uint32, x *fsxattr) {
	t.Helper()
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	must(t, err)
	defer unix.Close(fd)
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(cmd), uintptr(unsafe.Pointer(x))); e != 0 {
		t.Fatalf("ioctl %#x on %s: %v", cmd, p, e)
	}
}

// flagsKeep lists what an immutable (+i) or append-only (+a) file and
// directory refuse, each with EPERM, even to root.
func checkFlags(t *testing.T, dir string, report func(format string, args ...any)) {
	f := filepath.Join(dir, "f")
	must(t, os.WriteFile(f, []byte("one\n"), 0o644))
	early, err := os.OpenFile(f, os.O_WRONLY, 0) // open before the flag
	must(t, err)
	defer early.Close()

	setFlags(t, f, store.FlagImmutable)
	if got := getFlags(t, f); got&(store.FlagImmutable|store.FlagAppend) != store.FlagImmutable {
		report("flags after +i: %#x", got)
	}
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, syscall.EPERM) {
			report("%s: %v, want EPERM", what, err)
		}
	}
	_, err = os.OpenFile(f, os.O_WRONLY, 0)
	refused("+i open for writing", err)
	_, err = os.OpenFile(f, os.O_WRONLY|os.O_APPEND, 0)
	refused("+i open to append", err)
	_, err = early.Write([]byte("x"))
	refused("+i write through an earlier descriptor", err)
	refused("+i chmod", os.Chmod(f, 0o600))
	refused("+i truncate", os.Truncate(f, 0))
	refused("+i utimes (now)", unix.UtimesNano(f, nil))
	refused("+i setxattr", unix.Setxattr(f, "user.k", []byte("v"), 0))
	refused("+i unlink", os.Remove(f))
	refused("+i rename", os.Rename(f, f+".2"))
	refused("+i link", os.Link(f, f+".3"))
	if got := read(t, f); got != "one\n" {
		report("+i file reads %q", got)
	}

	setFlags(t, f, store.FlagAppend)
	_, err = os.OpenFile(f, os.O_WRONLY, 0)
	refused("+a open for writing", err)
	a, err := os.OpenFile(f, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		report("+a open to append: %v", err)
	} else {
		_, err = a.Write([]byte("two\n"))
		if err != nil {
			report("+a append: %v", err)
		}
		a.Close()
	}
	refused("+a truncate", os.Truncate(f, 0))
	refused("+a chmod", os.Chmod(f, 0o600))
	refused("+a unlink", os.Remove(f))
	refused("+a rename", os.Rename(f, f+".2"))
	if err := unix.UtimesNano(f, nil); err != nil {
		report("+a utimes (now): %v", err)
	}
	if got := read(t, f); got != "one\ntwo\n" {
		report("+a file reads %q", got)
	}

	// The xfs_io way: FS_IOC_FSSETXATTR.
	var x fsxattr
	fsxattrIoctl(t, f, iocFSGetXattr, &x)
	if x.Xflags&(xflagImmutable|xflagAppend) != xflagAppend {
		report("fsxattr flags %#x, want append", x.Xflags)
	}
	x.Xflags = x.Xflags&^xflagAppend | xflagImmutable
	fsxattrIoctl(t, f, iocFSSetXattr, &x)
	if got := getFlags(t, f); got&(store.FlagImmutable|store.FlagAppend) != store.FlagImmutable {
		report("flags after FSSETXATTR: %#x", got)
	}
	setFlags(t, f, 0)
	must(t, os.Chmod(f, 0o600))
	must(t, os.Remove(f))

	d := filepath.Join(dir, "d")
	must(t, os.Mkdir(d, 0o755))
	must(t, os.WriteFile(filepath.Join(d, "in"), nil, 0o644))
	setFlags(t, d, store.FlagImmutable)
	refused("+i dir: create", os.WriteFile(filepath.Join(d, "new"), nil, 0o644))
	refused("+i dir: mkdir", os.Mkdir(filepath.Join(d, "sub"), 0o755))
	refused("+i dir: unlink", os.Remove(filepath.Join(d, "in")))
	refused("+i dir: rename out", os.Rename(filepath.Join(d, "in"), filepath.Join(dir, "out")))
	setFlags(t, d, store.FlagAppend)
	must(t, os.WriteFile(filepath.Join(d, "new"), nil, 0o644))
	refused("+a dir: unlink", os.Remove(filepath.Join(d, "in")))
	refused("+a dir: rmdir", os.Remove(d))
	setFlags(t, d, 0)
	must(t, os.RemoveAll(d))
}

// TestChattr: chattr +i and +a hold on files and directories, for root
// too, as on ext4 through the loopback (xfstests generic/545, 553, 555),
// and the store keeps them across a remount.
func TestChattr(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("setting +i or +a needs CAP_LINUX_IMMUTABLE")
	}
	for _, s := range sides(t) {
		t.Run(s.name, func(t *testing.T) {
			report := t.Errorf
			if s.tf == nil {
				// Where go-fuse's loopback differs from ext4 (it drops
				// O_APPEND at open and sets "now" as given times).
				report = func(format string, args ...any) { t.Logf("loopback: "+format, args...) }
			}
			checkFlags(t, s.dir, report)
		})
	}
	t.Run("no-passthrough", func(t *testing.T) {
		tf := mountWith(t, t.TempDir(), store.Options{}, Config{NoPassthrough: true})
		checkFlags(t, tf.path("working"), t.Errorf)
	})
	t.Run("kept", func(t *testing.T) {
		data := t.TempDir()
		tf := mountAt(t, data, store.Options{})
		p := tf.path("episodic/log.md")
		must(t, os.WriteFile(p, []byte("a\n"), 0o644))
		setFlags(t, p, store.FlagAppend)
		tf.unmount()
		tf = mountAt(t, data, store.Options{})
		p = tf.path("episodic/log.md")
		if got := getFlags(t, p); got != store.FlagAppend {
			t.Errorf("flags after a remount: %#x", got)
		}
		if lsattr, err := exec.LookPath("lsattr"); err == nil {
			if out := runTool(t, lsattr, p); !strings.HasPrefix(out, "-----a") {
				t.Errorf("lsattr: %q", out)
			}
		}
		_, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
		if !errors.Is(err, syscall.EPERM) {
			t.Errorf("O_TRUNC of an append-only memory: %v", err)
		}
		setFlags(t, p, 0)
	})
}
