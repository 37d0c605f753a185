package fusefs

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/store"
)

// TestFileHandles: name_to_handle_at and open_by_handle_at work for
// linked files, hard links and directories, also once the kernel has
// forgotten them (a cycle mount: xfstests generic/426, 467, 477), and a
// removed file's handle is stale. Side by side with the loopback, whose
// node ids do not survive its remount.
func TestFileHandles(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("open_by_handle_at needs CAP_DAC_READ_SEARCH")
	}
	loMnt, loOrig := loopbackMount(t)
	data := t.TempDir()
	tf := mountAt(t, data, store.Options{})
	for _, s := range []side{{name: "loopback", dir: loMnt, orig: loOrig}, {name: "mnemofs", dir: tf.path("working"), tf: tf}} {
		t.Run(s.name, func(t *testing.T) {
			dir := filepath.Join(s.dir, "h")
			must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
			paths := map[string]string{} // name -> content ("" for a directory)
			for k := 0; k < 5; k++ {
				name := fmt.Sprintf("f%d", k)
				paths[name] = fmt.Sprintf("content %d\n", k)
				must(t, os.WriteFile(filepath.Join(dir, name), []byte(paths[name]), 0o644))
			}
			must(t, os.WriteFile(filepath.Join(dir, "sub/g"), []byte("below\n"), 0o644))
			paths["sub/g"] = "below\n"
			must(t, os.Link(filepath.Join(dir, "f0"), filepath.Join(dir, "hard")))
			paths["hard"] = paths["f0"]
			paths["sub"], paths["."] = "", ""
			must(t, os.WriteFile(filepath.Join(dir, "gone"), []byte("x"), 0o644))

			handles := map[string]unix.FileHandle{}
			for name := range paths {
				h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, filepath.Join(dir, name), 0)
				if err != nil {
					t.Fatalf("name_to_handle_at %s: %v", name, err)
				}
				handles[name] = h
			}
			gone, _, err := unix.NameToHandleAt(unix.AT_FDCWD, filepath.Join(dir, "gone"), 0)
			must(t, err)
			must(t, os.Remove(filepath.Join(dir, "gone"))) // seconds old: deleted

			// The kernel forgets every node: mount again.
			var mnt string
			if s.tf != nil {
				s.tf.unmount()
				tf = mountAt(t, data, store.Options{})
				mnt = tf.dir
			} else {
				mnt = loopbackOver(t, s.orig) // the first stays mounted: its nodes are not this one's
			}
			mfd, err := unix.Open(mnt, unix.O_RDONLY|unix.O_DIRECTORY, 0)
			must(t, err)
			defer unix.Close(mfd)
			stale := 0
			for name, want := range paths {
				fd, err := unix.OpenByHandleAt(mfd, handles[name], unix.O_RDONLY)
				if err != nil {
					stale++
					if s.tf != nil {
						t.Errorf("open_by_handle_at %s: %v", name, err)
					}
					continue
				}
				if want != "" {
					buf := make([]byte, 64)
					n, err := unix.Pread(fd, buf, 0)
					if err != nil || string(buf[:n]) != want {
						t.Errorf("%s by handle reads %q, %v; want %q", name, buf[:n], err, want)
					}
				} else {
					var st unix.Stat_t
					must(t, unix.Fstat(fd, &st))
					if st.Mode&unix.S_IFMT != unix.S_IFDIR {
						t.Errorf("%s by handle: mode %o, want a directory", name, st.Mode)
					}
				}
				unix.Close(fd)
			}
			if stale > 0 {
				t.Logf("%s: %d of %d handles stale after the remount", s.name, stale, len(paths))
			}
			if fd, err := unix.OpenByHandleAt(mfd, gone, unix.O_RDONLY); err == nil {
				unix.Close(fd)
				t.Errorf("the removed file's handle opens")
			} else if err != syscall.ESTALE {
				t.Errorf("the removed file's handle: %v, want ESTALE", err)
			}
		})
	}
}
