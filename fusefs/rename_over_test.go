package fusefs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mnemofs/mnemofs/store"
)

// TestRenameOverOpen: a file or directory open when another is renamed
// over its name stays usable through the descriptor, as on a disk: fstat
// answers with st_nlink 0 and a file's content reads back (xfstests
// generic/035 checks the nlink). Side by side with the loopback, which
// answers the directory's fstat with ENOENT.
func TestRenameOverOpen(t *testing.T) {
	t.Parallel()
	lo, _ := loopbackMount(t)
	// Default options: the files are seconds old, so the one replaced is
	// deleted, not kept in the trash (see TestRenameOverTrashed).
	tf := mountAt(t, t.TempDir(), store.Options{})
	for _, s := range []side{{name: "loopback", dir: lo}, {name: "mnemofs", dir: tf.path("working"), tf: tf}} {
		t.Run(s.name, func(t *testing.T) {
			f1, f2 := filepath.Join(s.dir, "file1"), filepath.Join(s.dir, "file2")
			must(t, os.WriteFile(f1, []byte("new\n"), 0o644))
			must(t, os.WriteFile(f2, []byte("old content\n"), 0o644))
			fd, err := syscall.Open(f2, syscall.O_RDONLY, 0)
			must(t, err)
			defer syscall.Close(fd)
			must(t, os.Rename(f1, f2))
			var st syscall.Stat_t
			if err := syscall.Fstat(fd, &st); err != nil {
				t.Errorf("fstat of the replaced file: %v", err)
			} else if st.Nlink != 0 || st.Size != 12 {
				t.Errorf("replaced file: nlink %d size %d, want 0 and 12", st.Nlink, st.Size)
			}
			buf := make([]byte, 64)
			if n, err := syscall.Pread(fd, buf, 0); err != nil || string(buf[:n]) != "old content\n" {
				t.Errorf("read of the replaced file: %q, %v", buf[:n], err)
			}

			d1, d2 := filepath.Join(s.dir, "dir1"), filepath.Join(s.dir, "dir2")
			must(t, os.Mkdir(d1, 0o755))
			must(t, os.Mkdir(d2, 0o755))
			dfd, err := syscall.Open(d2, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
			must(t, err)
			defer syscall.Close(dfd)
			must(t, syscall.Rename(d1, d2))
			err = syscall.Fstat(dfd, &st)
			switch {
			case s.tf == nil && err != nil:
				t.Logf("loopback: fstat of the replaced directory: %v (a limit of the loopback)", err)
			case err != nil:
				t.Errorf("fstat of the replaced directory: %v", err)
			case st.Nlink != 0:
				t.Errorf("replaced directory: nlink %d, want 0", st.Nlink)
			}
		})
	}
}

// TestRenameOverTrashed: a memory renamed over is kept in the trash; a
// descriptor open on it reads its content, and fstat counts the link it
// has there.
func TestRenameOverTrashed(t *testing.T) {
	t.Parallel()
	tf := testMount(t) // every replaced memory goes to the trash
	f1, f2 := tf.path("semantic/new.md"), tf.path("semantic/old.md")
	must(t, os.WriteFile(f2, []byte("old content\n"), 0o644))
	must(t, os.WriteFile(f1, []byte("new\n"), 0o644))
	fd, err := syscall.Open(f2, syscall.O_RDONLY, 0)
	must(t, err)
	defer syscall.Close(fd)
	must(t, os.Rename(f1, f2))
	var st syscall.Stat_t
	must(t, syscall.Fstat(fd, &st))
	if st.Nlink != 1 {
		t.Errorf("trashed memory: nlink %d, want 1 (its name in archive/trash/)", st.Nlink)
	}
	buf := make([]byte, 64)
	if n, err := syscall.Pread(fd, buf, 0); err != nil || string(buf[:n]) != "old content\n" {
		t.Errorf("read of the trashed memory: %q, %v", buf[:n], err)
	}
	if got := read(t, tf.path("archive/trash/semantic/old.md")); got != "old content\n" {
		t.Errorf("trash holds %q", got)
	}
}
