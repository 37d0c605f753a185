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

// tmpfileNamed writes content to an unnamed file in dir (O_TMPFILE),
// fsyncs it if asked, and names it name with linkat.
func tmpfileNamed(dir, name string, content []byte, sync bool) error {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR, 0o640)
	if err != nil {
		return fmt.Errorf("open O_TMPFILE: %w", err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, content); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Nlink != 0 || st.Size != int64(len(content)) || st.Mode&0o777 != 0o640 {
		return fmt.Errorf("unnamed: nlink %d size %d mode %o", st.Nlink, st.Size, st.Mode)
	}
	if sync {
		if err := unix.Fsync(fd); err != nil {
			return err
		}
	}
	if err := unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, filepath.Join(dir, name), unix.AT_SYMLINK_FOLLOW); err != nil {
		return fmt.Errorf("linkat: %w", err)
	}
	if err := unix.Fstat(fd, &st); err != nil || st.Nlink != 1 {
		return fmt.Errorf("named: nlink %d, %v", st.Nlink, err)
	}
	return nil
}

// TestTmpfile: open with O_TMPFILE makes an unnamed file, linkat names
// it with what was written (small or large, fsynced or not), O_EXCL
// forbids that, and one never named leaves nothing: as on the local disk
// (xfstests generic/004). go-fuse's loopback makes the file but cannot
// name it (its linkat fails), which the test only reports.
func TestTmpfile(t *testing.T) {
	t.Parallel()
	lo, _ := loopbackMount(t)
	data := t.TempDir()
	tf := mountAt(t, data, store.Options{})
	big := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KiB: a blob file
	contents := [][]byte{[]byte("small\n"), big}
	for _, s := range []side{{name: "disk", dir: t.TempDir()}, {name: "loopback", dir: lo}, {name: "mnemofs", dir: tf.path("working"), tf: tf}} {
		t.Run(s.name, func(t *testing.T) {
			named := 0
			for k, content := range contents {
				for _, sync := range []bool{false, true} {
					name := fmt.Sprintf("named%d-%v", k, sync)
					if err := tmpfileNamed(s.dir, name, content, sync); err != nil {
						if s.name == "loopback" {
							t.Logf("loopback: %s: %v (its limit)", name, err)
							continue
						}
						t.Errorf("%s: %v", name, err)
						continue
					}
					named++
					if b, err := os.ReadFile(filepath.Join(s.dir, name)); err != nil || !bytes.Equal(b, content) {
						t.Errorf("%s reads %d bytes, %v; want %d", name, len(b), err, len(content))
					}
				}
			}
			// O_EXCL: it may never be named.
			fd, err := unix.Open(s.dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_EXCL, 0o600)
			must(t, err)
			err = unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, filepath.Join(s.dir, "never"), unix.AT_SYMLINK_FOLLOW)
			unix.Close(fd)
			wantErrno(t, err, syscall.ENOENT)
			// Never named: gone at its close.
			fd, err = unix.Open(s.dir, unix.O_TMPFILE|unix.O_WRONLY, 0o600)
			must(t, err)
			_, err = unix.Write(fd, []byte("scratch"))
			unix.Close(fd)
			must(t, err)
			ents, err := os.ReadDir(s.dir)
			must(t, err)
			if len(ents) != named {
				t.Errorf("%d entries, want the %d named", len(ents), named)
			}
		})
	}
	// The named files are the store's: after a remount, with their
	// metadata.
	tf.unmount()
	tf = mountAt(t, data, store.Options{})
	for k, content := range contents {
		for _, sync := range []string{"false", "true"} {
			p := tf.path(fmt.Sprintf("working/named%d-%s", k, sync))
			if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, content) {
				t.Errorf("after a remount %s reads %d bytes, %v", p, len(b), err)
			}
			buf := make([]byte, 80)
			n, err := unix.Getxattr(p, "user.mnemofs.sha256", buf)
			if err != nil || string(buf[:n]) != shaHex(content) {
				t.Errorf("%s: sha256 %q, %v", p, buf[:n], err)
			}
		}
	}
}
