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
