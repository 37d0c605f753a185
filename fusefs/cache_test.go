package fusefs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/store"
)

// readUncached reads p after dropping the kernel's cached pages of it, so
// that the read reaches the filesystem (and so the store's content cache).
func readUncached(t *testing.T, p string) []byte {
	t.Helper()
	f, err := os.Open(p)
	must(t, err)
	defer f.Close()
	must(t, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED))
	var b bytes.Buffer
	_, err = b.ReadFrom(f)
	must(t, err)
	return b.Bytes()
}

// TestCacheFreshThroughMount: with the content and query caches on, every
// change made through the mount (write, same-size rewrite, append,
// truncate, rename over, restore from history/, unlink and create, a
// write still open) is what the next read returns, through the real path,
// through by-user/, and through search/.
func TestCacheFreshThroughMount(t *testing.T) {
	t.Parallel()
	for _, pad := range []int{0, 100 << 10} {
		t.Run(fmt.Sprintf("pad=%d", pad), func(t *testing.T) {
			tf := mountAt(t, t.TempDir(), store.Options{ScratchAge: -1, CacheBytes: 8 << 20})
			testCacheFresh(t, tf, pad)
		})
	}
}

func testCacheFresh(t *testing.T, tf *testFS, pad int) {
	must(t, os.MkdirAll(tf.path("semantic"), 0o755))
	real := tf.path("semantic/a.md")
	// version n: the same size for every n, with a word of its own.
	version := func(n int) []byte {
		return fmt.Appendf(nil, "---\nuser: alice\n---\nnote w%03d of the cache test\n%s", n, strings.Repeat("x", pad))
	}
	check := func(step string, want []byte, word string) {
		t.Helper()
		for _, p := range []string{real, tf.path("by-user/alice/semantic/a.md")} {
			for k := 0; k < 2; k++ { // the second from the cache
				if got := readUncached(t, p); !bytes.Equal(got, want) {
					t.Fatalf("%s: %s read %.60q…, want %.60q…", step, p, got, want)
				}
			}
		}
		if word == "" {
			return
		}
		q := tf.path("search/" + word)
		if names := strings.Join(lsNames(t, q), " "); names != ".results 01-a.md" {
			t.Fatalf("%s: search/%s lists %q", step, word, names)
		}
		if got := readUncached(t, filepath.Join(q, "01-a.md")); !bytes.Equal(got, want) {
			t.Fatalf("%s: search/%s/01-a.md read %.60q…", step, word, got)
		}
		// The snippet comes from the first 64 KiB: the appended line is
		// past it when padded.
		snip := "note " + word
		if word == "w777" {
			snip = "/semantic/a.md\t" + map[bool]string{true: "appended w777", false: "note w002 of the cache test"}[pad == 0]
		}
		if res := string(readUncached(t, filepath.Join(q, ".results"))); !strings.Contains(res, snip) {
			t.Fatalf("%s: search/%s/.results: %q", step, word, res)
		}
	}

	must(t, os.WriteFile(real, version(1), 0o644))
	check("write", version(1), "w001")
	must(t, os.WriteFile(real, version(2), 0o644))
	check("rewrite, same size", version(2), "w002")

	f, err := os.OpenFile(real, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString("appended w777\n")
	must(t, err)
	must(t, f.Close())
	check("append", append(version(2), "appended w777\n"...), "w777")

	must(t, os.Truncate(real, int64(len(version(2)))))
	check("truncate", version(2), "w002")

	// Restore: copy the version holding w001 back (semantic/ is versioned).
	hist := tf.path("history/semantic/a.md")
	restored := false
	for _, n := range lsNames(t, hist) {
		if b := readUncached(t, filepath.Join(hist, n)); bytes.Equal(b, version(1)) {
			must(t, os.WriteFile(real, b, 0o644))
			restored = true
		}
	}
	if !restored {
		t.Fatalf("no version with w001 in %s: %q", hist, lsNames(t, hist))
	}
	check("restore from history", version(1), "w001")

	must(t, os.WriteFile(tf.path("semantic/b.md"), version(3), 0o644))
	must(t, os.Rename(tf.path("semantic/b.md"), real))
	check("rename over", version(3), "w003")

	must(t, os.Remove(real))
	must(t, os.WriteFile(real, version(4), 0o644))
	check("unlink and create", version(4), "w004")

	// A write not yet closed is seen by another open (the open state is
	// shared), and after the close by everyone.
	w, err := os.OpenFile(real, os.O_WRONLY, 0)
	must(t, err)
	_, err = w.WriteAt([]byte("5"), int64(bytes.Index(version(4), []byte("w004"))+3))
	must(t, err)
	if got := readUncached(t, real); !bytes.Equal(got, version(5)) {
		t.Fatalf("open write: read %.60q…", got)
	}
	must(t, w.Close())
	check("write at an offset", version(5), "w005")

	if s := tf.st.CacheStats()["content"]; s.Hits == 0 {
		t.Errorf("reads through the mount never hit the content cache: %+v", s)
	}
}
