package fusefs

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

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
