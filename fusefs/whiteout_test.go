package fusefs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRenameWhiteout: renameat2 with RENAME_WHITEOUT (overlayfs uses it
// on its upper layer) moves the file and leaves a whiteout, a character
// device 0:0 with mode 0000, at the old name, as on the loopback (ext4);
// with RENAME_EXCHANGE it is EINVAL.
func TestRenameWhiteout(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("a whiteout needs CAP_MKNOD")
	}
	for _, s := range sides(t) {
		t.Run(s.name, func(t *testing.T) {
			a, b := filepath.Join(s.dir, "a"), filepath.Join(s.dir, "b")
			must(t, os.WriteFile(a, []byte("content\n"), 0o644))
			must(t, unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_WHITEOUT))
			if got := read(t, b); got != "content\n" {
				t.Errorf("moved file reads %q", got)
			}
			var st syscall.Stat_t
			must(t, syscall.Lstat(a, &st))
			if st.Mode != syscall.S_IFCHR || st.Rdev != 0 {
				t.Errorf("whiteout: mode %o rdev %d, want %o and 0", st.Mode, st.Rdev, syscall.S_IFCHR)
			}
			ents, err := os.ReadDir(s.dir)
			must(t, err)
			names := ""
			for _, e := range ents {
				names += e.Name() + " "
			}
			if names != "a b " {
				t.Errorf("listing %q", names)
			}
			// Over an existing name, and refused with RENAME_NOREPLACE.
			must(t, os.WriteFile(a+"2", []byte("two\n"), 0o644))
			must(t, unix.Renameat2(unix.AT_FDCWD, a+"2", unix.AT_FDCWD, b, unix.RENAME_WHITEOUT))
			if got := read(t, b); got != "two\n" {
				t.Errorf("renamed over: %q", got)
			}
			must(t, os.WriteFile(a+"3", []byte("three\n"), 0o644))
			wantErrno(t, unix.Renameat2(unix.AT_FDCWD, a+"3", unix.AT_FDCWD, b, unix.RENAME_WHITEOUT|unix.RENAME_NOREPLACE), syscall.EEXIST)
			wantErrno(t, unix.Renameat2(unix.AT_FDCWD, a+"3", unix.AT_FDCWD, b, unix.RENAME_WHITEOUT|unix.RENAME_EXCHANGE), syscall.EINVAL)
			// A directory too.
			d := filepath.Join(s.dir, "d")
			must(t, os.Mkdir(d, 0o755))
			must(t, unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, d+"2", unix.RENAME_WHITEOUT))
			must(t, syscall.Lstat(d, &st))
			if st.Mode != syscall.S_IFCHR {
				t.Errorf("directory's whiteout: mode %o", st.Mode)
			}
			must(t, os.Remove(a)) // a whiteout is removed as any node is
		})
	}
}

// TestOverlayUpper: overlayfs takes a directory of the mount as its upper
// layer (-o userxattr: its attributes as user.overlay.*), as it takes one
// on the loopback: files written go up, a lower file removed leaves a
// whiteout there, and the merged view shows what it should.
func TestOverlayUpper(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting an overlay needs root")
	}
	for _, s := range sides(t) {
		t.Run(s.name, func(t *testing.T) {
			lower, merged := t.TempDir(), t.TempDir()
			must(t, os.WriteFile(filepath.Join(lower, "l.txt"), []byte("lower\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(lower, "keep.txt"), []byte("keep\n"), 0o644))
			up, work := filepath.Join(s.dir, "up"), filepath.Join(s.dir, "work")
			must(t, os.Mkdir(up, 0o755))
			must(t, os.Mkdir(work, 0o755))
			opts := "lowerdir=" + lower + ",upperdir=" + up + ",workdir=" + work + ",userxattr"
			if err := unix.Mount("overlay", merged, "overlay", 0, opts); err != nil {
				t.Skipf("no overlayfs here: %v", err)
			}
			defer unix.Unmount(merged, unix.MNT_DETACH)
			must(t, os.WriteFile(filepath.Join(merged, "n.txt"), []byte("new\n"), 0o644))
			must(t, os.Remove(filepath.Join(merged, "l.txt")))
			// A copy-up: overlayfs makes it with O_TMPFILE and linkat,
			// which go-fuse's loopback cannot name (TestTmpfile).
			if err := os.WriteFile(filepath.Join(merged, "keep.txt"), []byte("changed\n"), 0o644); err != nil {
				if s.tf == nil {
					t.Skipf("loopback: copy-up: %v (its limit)", err)
				}
				t.Fatalf("copy-up: %v", err)
			}
			ents, err := os.ReadDir(merged)
			must(t, err)
			names := ""
			for _, e := range ents {
				names += e.Name() + " "
			}
			if names != "keep.txt n.txt " {
				t.Errorf("merged lists %q", names)
			}
			if got := read(t, filepath.Join(up, "keep.txt")); got != "changed\n" {
				t.Errorf("upper keep.txt: %q", got)
			}
			var st syscall.Stat_t
			must(t, syscall.Lstat(filepath.Join(up, "l.txt"), &st))
			if st.Mode&syscall.S_IFMT != syscall.S_IFCHR || st.Rdev != 0 {
				t.Errorf("upper l.txt: mode %o rdev %d, want a whiteout", st.Mode, st.Rdev)
			}
		})
	}
}
