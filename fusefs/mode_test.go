package fusefs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mnemofs/mnemofs/store"
)

// TestModeZero: chmod 000 sticks, for a file and a directory, in every
// kind of mount (passthrough or not, --allow-other, --user), as on the
// loopback: go-fuse would show a mode with no permission bits as 0644
// (0755 for a directory) unless told not to.
func TestModeZero(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, dir string, again func() string) {
		t.Helper()
		f, d := filepath.Join(dir, "f"), filepath.Join(dir, "d")
		must(t, os.WriteFile(f, []byte("secret\n"), 0o644))
		must(t, os.Mkdir(d, 0o755))
		for _, p := range []string{f, d} {
			must(t, os.Chmod(p, 0))
		}
		for _, when := range []string{"after chmod", "looked up again"} {
			if when != "after chmod" {
				dir = again()
				f, d = filepath.Join(dir, "f"), filepath.Join(dir, "d")
			}
			for _, p := range []string{f, d} {
				var st syscall.Stat_t
				must(t, syscall.Stat(p, &st))
				if perm := st.Mode & 0o7777; perm != 0 {
					t.Errorf("%s %s: mode %04o, want 0000", filepath.Base(p), when, perm)
				}
			}
		}
		// And back: other modes are kept too.
		must(t, syscall.Chmod(f, 0o4200))
		var st syscall.Stat_t
		must(t, syscall.Stat(f, &st))
		if st.Mode&0o7777 != 0o4200 {
			t.Errorf("f: mode %04o after chmod 4200", st.Mode&0o7777)
		}
	}
	t.Run("loopback", func(t *testing.T) {
		lo, _ := loopbackMount(t)
		check(t, lo, func() string { return lo })
	})
	for _, k := range []struct {
		name string
		o    store.Options
		cfg  Config
	}{
		{"passthrough", store.Options{}, Config{}},
		{"no-passthrough", store.Options{}, Config{NoPassthrough: true}},
		{"allow-other", store.Options{}, Config{AllowOther: true}},
		{"user", store.Options{User: "alice"}, Config{}},
	} {
		t.Run(k.name, func(t *testing.T) {
			data := t.TempDir()
			tf := mountWith(t, data, k.o, k.cfg)
			dir := tf.path("working")
			// Mounted again: every name is looked up anew, and the modes
			// come from the store.
			check(t, dir, func() string {
				tf.unmount()
				tf = mountWith(t, data, k.o, k.cfg)
				return tf.path("working")
			})
		})
	}
}
