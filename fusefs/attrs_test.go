package fusefs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestAttrsXattrsStatfs(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("semantic/x.md")
	must(t, os.WriteFile(p, []byte("x"), 0o644))
	must(t, os.Chmod(p, 0o600))
	must(t, os.Chown(p, 1234, 5678))
	mt := time.Date(2020, 1, 2, 3, 4, 5, 6000, time.UTC)
	must(t, os.Chtimes(p, mt, mt))
	var st syscall.Stat_t
	must(t, syscall.Stat(p, &st))
	if st.Mode&0o7777 != 0o600 || st.Uid != 1234 || st.Gid != 5678 || st.Mtim.Sec != mt.Unix() || st.Mtim.Nsec != 6000 {
		t.Fatalf("attrs not applied: %+v", st)
	}
	must(t, unix.Setxattr(p, "user.color", []byte("blue"), 0))
	buf := make([]byte, 64)
	n, err := unix.Getxattr(p, "user.color", buf)
	must(t, err)
	if string(buf[:n]) != "blue" {
		t.Fatalf("xattr %q", buf[:n])
	}
	wantErrno(t, unix.Setxattr(p, "user.color", []byte("red"), unix.XATTR_CREATE), syscall.EEXIST)
	wantErrno(t, unix.Setxattr(p, "user.mnemofs.sha256", []byte("x"), 0), syscall.EPERM)
	n, err = unix.Getxattr(p, "user.mnemofs.sha256", buf)
	must(t, err)
	if string(buf[:n]) != "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881" {
		t.Fatalf("sha256 xattr %q", buf[:n])
	}
	sz, err := unix.Listxattr(p, make([]byte, 4096))
	must(t, err)
	if sz == 0 {
		t.Fatal("no xattrs listed")
	}
	must(t, unix.Removexattr(p, "user.color"))
	_, err = unix.Getxattr(p, "user.color", buf)
	wantErrno(t, err, syscall.ENODATA)
	// Other namespaces hold nothing (the kernel asks for
	// security.capability before writes) and take nothing.
	_, err = unix.Getxattr(p, "security.capability", buf)
	wantErrno(t, err, syscall.ENODATA)
	_, err = unix.Getxattr(p, "trusted.x", buf)
	wantErrno(t, err, syscall.ENODATA)
	wantErrno(t, unix.Setxattr(p, "trusted.x", []byte("1"), 0), syscall.EOPNOTSUPP)
	var sf syscall.Statfs_t
	must(t, syscall.Statfs(tf.dir, &sf))
	if sf.Namelen != 255 || sf.Blocks == 0 {
		t.Fatalf("statfs %+v", sf)
	}
}

func TestNamesAndExcl(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	long := strings.Repeat("n", 255)
	must(t, os.WriteFile(tf.path("working/"+long), []byte("ok"), 0o644))
	if read(t, tf.path("working/"+long)) != "ok" {
		t.Fatal("255-byte name")
	}
	err := os.WriteFile(tf.path("working/"+long+"x"), nil, 0o644)
	wantErrno(t, err, syscall.ENAMETOOLONG)
	odd := "spaces and ünïcödé 名前 \t tab"
	must(t, os.WriteFile(tf.path("working/"+odd), []byte("odd"), 0o644))
	if read(t, tf.path("working/"+odd)) != "odd" {
		t.Fatal("odd name")
	}
	_, err = os.OpenFile(tf.path("working/"+odd), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	wantErrno(t, err, syscall.EEXIST)
}

func TestLocks(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("working/lock")
	must(t, os.WriteFile(p, nil, 0o644))
	f1, err := os.OpenFile(p, os.O_RDWR, 0)
	must(t, err)
	defer f1.Close()
	f2, err := os.OpenFile(p, os.O_RDWR, 0)
	must(t, err)
	defer f2.Close()
	must(t, syscall.Flock(int(f1.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	wantErrno(t, syscall.Flock(int(f2.Fd()), syscall.LOCK_EX|syscall.LOCK_NB), syscall.EWOULDBLOCK)
	must(t, syscall.Flock(int(f1.Fd()), syscall.LOCK_UN))
	must(t, syscall.Flock(int(f2.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	// Open file description locks conflict between descriptors.
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	must(t, unix.FcntlFlock(f1.Fd(), unix.F_OFD_SETLK, &lk))
	wantErrno(t, unix.FcntlFlock(f2.Fd(), unix.F_OFD_SETLK, &lk), syscall.EAGAIN)
}

func TestSetgidDirectory(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	d := tf.path("working/shared")
	must(t, os.Mkdir(d, 0o775))
	must(t, os.Chown(d, 0, 4242))
	must(t, syscall.Chmod(d, 0o2775)) // os.Chmod would drop the setgid bit
	must(t, os.WriteFile(filepath.Join(d, "f"), nil, 0o644))
	must(t, os.Mkdir(filepath.Join(d, "sub"), 0o755))
	var st syscall.Stat_t
	must(t, syscall.Stat(filepath.Join(d, "f"), &st))
	if st.Gid != 4242 {
		t.Fatalf("file gid %d, want 4242", st.Gid)
	}
	must(t, syscall.Stat(filepath.Join(d, "sub"), &st))
	if st.Gid != 4242 || st.Mode&syscall.S_ISGID == 0 {
		t.Fatalf("dir gid %d mode %o", st.Gid, st.Mode)
	}
}

func TestConcurrentAppendsLoseNothing(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("episodic/log.jsonl")
	must(t, os.WriteFile(p, nil, 0o644))
	const writers, lines = 8, 200
	done := make(chan error, writers)
	for w := 0; w < writers; w++ {
		go func(w int) {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				done <- err
				return
			}
			defer f.Close()
			for k := 0; k < lines; k++ {
				if _, err := fmt.Fprintf(f, "{\"w\": %d, \"k\": %d}\n", w, k); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}(w)
	}
	for w := 0; w < writers; w++ {
		must(t, <-done)
	}
	got := strings.Split(strings.TrimSpace(read(t, p)), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines, want %d", len(got), writers*lines)
	}
	seen := map[string]bool{}
	for _, l := range got {
		seen[l] = true
	}
	if len(seen) != writers*lines {
		t.Fatalf("%d distinct lines, want %d (torn or overwritten appends)", len(seen), writers*lines)
	}
}
