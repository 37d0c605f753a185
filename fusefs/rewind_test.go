package fusefs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/store"
)

// TestRewinddirListsAgain: reading an open directory again from its start
// (rewinddir: a seek to 0) lists it as it is now, as POSIX asks and ext4
// does, not as it was at opendir: a new entry shows, removed ones are gone.
func TestRewinddirListsAgain(t *testing.T) {
	t.Parallel()
	tf := mountAt(t, t.TempDir(), store.Options{})
	dir := tf.path("working/rw")
	must(t, os.MkdirAll(dir, 0o755))
	for i := range 50 {
		must(t, os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)), []byte("x\n"), 0o644))
	}
	for _, d := range []string{dir, tf.path("")} {
		f, err := os.Open(d)
		must(t, err)
		before, err := f.Readdirnames(-1)
		must(t, err)
		must(t, os.WriteFile(filepath.Join(d, "new.md"), []byte("new\n"), 0o644))
		_, err = f.Seek(0, io.SeekStart)
		must(t, err)
		after, err := f.Readdirnames(-1)
		must(t, err)
		if !slices.Contains(after, "new.md") || len(after) != len(before)+1 {
			t.Errorf("%s: after rewinddir %d entries (new.md listed: %v), want %d and new.md", d, len(after), slices.Contains(after, "new.md"), len(before)+1)
		}
		must(t, f.Close())
	}
	// Every entry removed while it is open: rewound, it lists nothing.
	f, err := os.Open(dir)
	must(t, err)
	names, err := f.Readdirnames(-1)
	must(t, err)
	for _, n := range names {
		must(t, os.Remove(filepath.Join(dir, n)))
	}
	_, err = f.Seek(0, io.SeekStart)
	must(t, err)
	if left, err := f.Readdirnames(-1); err != nil || len(left) != 0 {
		t.Errorf("after removing all %d entries and rewinding: %d listed (%v), want none", len(names), len(left), err)
	}
	must(t, f.Close())
}

// TestRemovedDirStillOpen: a directory removed while a handle to it is
// open (or it is a working directory) still answers fstat, with nlink 0,
// and lists nothing, as on ext4; creating in it fails with ENOENT.
func TestRemovedDirStillOpen(t *testing.T) {
	t.Parallel()
	tf := mountAt(t, t.TempDir(), store.Options{})
	dir := tf.path("working/g")
	must(t, os.MkdirAll(dir, 0o755))
	f, err := os.Open(dir)
	must(t, err)
	defer f.Close()
	must(t, os.Remove(dir))
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatalf("fstat of a removed directory: %v, want its attributes", err)
	}
	if st.Nlink != 0 || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		t.Errorf("fstat of a removed directory: nlink %d mode %o, want nlink 0, a directory", st.Nlink, st.Mode)
	}
	// (getdents gives ENOENT for a removed directory, on ext4 too: the
	// kernel's own answer, which glibc's readdir reads as the end.)
	if names, err := f.Readdirnames(-1); (err != nil && !errors.Is(err, unix.ENOENT)) || len(names) != 0 {
		t.Errorf("listing a removed directory: %v (%v), want nothing", names, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat of its old path: %v, want ENOENT", err)
	}
	fd, err := unix.Openat(int(f.Fd()), "x", unix.O_CREAT|unix.O_WRONLY, 0o644)
	if err == nil {
		unix.Close(fd)
	}
	if !errors.Is(err, unix.ENOENT) {
		t.Errorf("creating in a removed directory: %v, want ENOENT", err)
	}
}

// TestListingHasDots: a real directory's listing starts with "." and
// "..", as ext4's does (ls -a shows them; readdir(3) users count them).
func TestListingHasDots(t *testing.T) {
	t.Parallel()
	tf := mountAt(t, t.TempDir(), store.Options{})
	must(t, os.MkdirAll(tf.path("working/d"), 0o755))
	must(t, os.WriteFile(tf.path("working/d/a.md"), []byte("a\n"), 0o644))
	for dir, want := range map[string]string{"working/d": ". .. a.md", "": ". .. "} {
		out, err := exec.Command("ls", "-a", "-1", tf.path(dir)).Output()
		must(t, err)
		if got := strings.Join(strings.Fields(string(out)), " "); !strings.HasPrefix(got, want) {
			t.Errorf("ls -a %s: %q, want it to start %q", dir, got, want)
		}
	}
	// Go's own listing leaves them out, as it does on any disk.
	if names, err := os.ReadDir(tf.path("working/d")); err != nil || len(names) != 1 {
		t.Errorf("os.ReadDir: %v (%v)", names, err)
	}
}
