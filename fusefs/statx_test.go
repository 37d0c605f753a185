package fusefs

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func statxBtime(t *testing.T, p string) (time.Time, bool) {
	t.Helper()
	var st unix.Statx_t
	must(t, unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS|unix.STATX_BTIME, &st))
	return time.Unix(st.Btime.Sec, int64(st.Btime.Nsec)), st.Mask&unix.STATX_BTIME != 0
}

// TestStatxBtime: statx gives a birth time, as ext4 does (through the
// loopback): for a memory, its created time (user.mnemofs.created: the
// front matter's, or when it was first written).
func TestStatxBtime(t *testing.T) {
	t.Parallel()
	for _, s := range sides(t) {
		t.Run(s.name, func(t *testing.T) {
			start := time.Now().Add(-time.Second)
			f, d := filepath.Join(s.dir, "f"), filepath.Join(s.dir, "d")
			must(t, os.WriteFile(f, []byte("x\n"), 0o644))
			must(t, os.Mkdir(d, 0o755))
			for _, p := range []string{f, d} {
				bt, ok := statxBtime(t, p)
				if !ok {
					t.Errorf("%s: statx gives no birth time", filepath.Base(p))
				} else if bt.Before(start) || bt.After(time.Now()) {
					t.Errorf("%s: birth time %v, not between %v and now", filepath.Base(p), bt, start)
				}
			}
		})
	}
	t.Run("created", func(t *testing.T) {
		tf := testMount(t)
		p := tf.path("semantic/old.md")
		must(t, os.WriteFile(p, []byte("---\ncreated: 2020-01-02T03:04:05Z\n---\nbody\n"), 0o644))
		bt, ok := statxBtime(t, p)
		if want := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC); !ok || !bt.Equal(want) {
			t.Errorf("birth time %v (given: %v), want %v", bt, ok, want)
		}
	})
}
