package e2e

// Hostile input against the real binary: names at and past the length
// limit and made of odd bytes, binary and large content, deep nesting, a
// huge directory listed while it changes, and search queries made of every
// odd byte. After each, the mount must still answer and the store must
// check clean. The full disk, an empty memory in the views and a sparse
// 1 TiB truncate are in hostile_disk_test.go.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func wantErrno(t *testing.T, what string, err error, want syscall.Errno) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got %v, want %v", what, err, want)
	}
}

// fsckClean runs `mnemofs fsck` (mounted or not) and fails unless clean.
func fsckClean(t *testing.T, data, when string) {
	t.Helper()
	if r := runMnemofs(t, "fsck", "--data", data); r.code != 0 || !strings.Contains(r.stdout, "consistent") {
		t.Errorf("%s: fsck not clean:\n%s", when, r)
	}
}

// alive checks the mount still answers: a stat, a write and a read back.
func alive(t *testing.T, m *mountProc, when string) {
	t.Helper()
	if m.exited() {
		t.Fatalf("%s: the mount process exited (%v)\nstderr: %s", when, m.state, m.stderr.String())
	}
	p := filepath.Join(m.mnt, "working", fmt.Sprintf("alive-%d", time.Now().UnixNano()))
	if err := os.WriteFile(p, []byte("still here"), 0o644); err != nil {
		t.Fatalf("%s: the mount does not answer: %v\nstderr: %s", when, err, m.stderr.String())
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "still here" {
		t.Fatalf("%s: reading back: %q, %v", when, b, err)
	}
}

func TestHostileNames(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	d := filepath.Join(mnt, "working", "names")
	check(t, os.Mkdir(d, 0o755))
	p := func(n string) string { return filepath.Join(d, n) }

	n255, n256 := strings.Repeat("n", 255), strings.Repeat("n", 256)
	cjk255, cjk258 := strings.Repeat("名", 85), strings.Repeat("名", 86) // 3 bytes each
	for _, n := range []string{n255, cjk255} {
		check(t, os.WriteFile(p(n), []byte("ok"), 0o644))
		check(t, os.Mkdir(p(n[:254]+"D"), 0o755))
		check(t, os.Symlink(n, p(n[:254]+"L")))
		check(t, os.Link(p(n), p(n[:254]+"H")))
		check(t, os.Rename(p(n[:254]+"H"), p(n[:254]+"R")))
		if b, err := os.ReadFile(p(n[:254] + "L")); err != nil || string(b) != "ok" {
			t.Errorf("%d-byte names: read through the symlink: %q, %v", len(n), b, err)
		}
	}
	for _, n := range []string{n256, cjk258} {
		what := fmt.Sprintf("%d-byte name", len(n))
		wantErrno(t, what+": create", os.WriteFile(p(n), nil, 0o644), syscall.ENAMETOOLONG)
		wantErrno(t, what+": mkdir", os.Mkdir(p(n), 0o755), syscall.ENAMETOOLONG)
		wantErrno(t, what+": symlink", os.Symlink("x", p(n)), syscall.ENAMETOOLONG)
		wantErrno(t, what+": link", os.Link(p(n255), p(n)), syscall.ENAMETOOLONG)
		wantErrno(t, what+": rename", os.Rename(p(n255), p(n)), syscall.ENAMETOOLONG)
		_, err := os.Lstat(p(n))
		wantErrno(t, what+": lstat", err, syscall.ENAMETOOLONG)
		wantErrno(t, what+": setxattr name", unix.Setxattr(p(n255), "user."+n, []byte("v"), 0), syscall.ERANGE)
	}
	// Every byte the kernel allows in a name: control bytes, DEL,
	// invalid UTF-8, a lone backslash, quotes, percent signs.
	var odd []string
	for b := 1; b < 256; b++ {
		if b == '/' || b == '.' {
			continue
		}
		odd = append(odd, fmt.Sprintf("x%cx", byte(b)))
	}
	odd = append(odd, "\xff\xfe", "\xc0\xaf", "%2F", "%00", "..%2F..", "-rf", " ", "\\", `"'`, "..x", "...")
	for _, n := range odd {
		if err := os.WriteFile(p(n), []byte(n), 0o644); err != nil {
			t.Errorf("create %q: %v", n, err)
		}
	}
	check(t, unix.Setxattr(p(n255), "user.odd\x01\xff", []byte{0, 0xff}, 0))
	checkNames := func(when string) {
		ents, err := os.ReadDir(d)
		check(t, err)
		got := map[string]bool{}
		for _, e := range ents {
			got[e.Name()] = true
		}
		for _, n := range append(odd, n255, cjk255, n255[:254]+"D", cjk255[:254]+"L", cjk255[:254]+"R") {
			if !got[n] {
				t.Errorf("%s: %q not listed", when, n)
			}
		}
		for _, n := range odd {
			if b, err := os.ReadFile(p(n)); err != nil || string(b) != n {
				t.Errorf("%s: %q holds %q, %v", when, n, b, err)
			}
		}
		if v, err := getxattr(p(n255), "user.odd\x01\xff"); err != nil || v != "\x00\xff" {
			t.Errorf("%s: xattr with odd bytes in its name: %q, %v", when, v, err)
		}
	}
	checkNames("mounted")
	for _, f := range []string{"meta/index.json", "meta/errors", "meta/stats.json"} {
		if _, err := os.ReadFile(filepath.Join(mnt, f)); err != nil {
			t.Errorf("%s with odd names in the store: %v", f, err)
		}
	}
	m.stop(t, syscall.SIGTERM)
	fsckClean(t, data, "after odd names")
	m = startMount(t, data, mnt)
	checkNames("after a remount")
	alive(t, m, "after odd names")
}

func TestHostileBinaryContent(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	r := rand.New(rand.NewPCG(3, 4))
	var all []byte
	for i := range 256 * 40 {
		all = append(all, byte(i)) // every byte value, in order, many times
	}
	files := map[string][]byte{
		"working/all-bytes.bin":    all,
		"semantic/all-bytes.md":    all, // a name that says Markdown
		"episodic/all-bytes.jsonl": append(slices.Clone(all), '\n'),
		"working/random.bin":       randBytes(r, 100<<10+3),
		"working/nul.bin":          make([]byte, 70<<10),
		"working/fm.md":            append([]byte("---\ntags: [\x00\xff]\n---\n"), all...),
	}
	for rel, b := range files {
		check(t, os.WriteFile(filepath.Join(mnt, rel), b, 0o644))
	}
	verify := func(when string) {
		for rel, want := range files {
			if got, err := os.ReadFile(filepath.Join(mnt, rel)); err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: %s: %d bytes (%v), want %d, first difference at %d", when, rel, len(got), err, len(want), firstDiff(got, want))
			}
			if v, err := getxattr(filepath.Join(mnt, rel), "user.mnemofs.sha256"); err != nil || v != sha(want) {
				t.Errorf("%s: %s: sha256 xattr %q, %v", when, rel, v, err)
			}
		}
		if _, err := os.ReadDir(filepath.Join(mnt, "search", "abc")); err != nil {
			t.Errorf("%s: search with binary memories: %v", when, err)
		}
	}
	verify("mounted")
	m.stop(t, syscall.SIGTERM)
	fsckClean(t, data, "after binary files")
	m = startMount(t, data, mnt)
	verify("after a remount")
	alive(t, m, "after binary files")
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// fileSHA streams p through sha256.
func fileSHA(t *testing.T, p string) (string, int64) {
	t.Helper()
	f, err := os.Open(p)
	check(t, err)
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	check(t, err)
	return hex.EncodeToString(h.Sum(nil)), n
}

func TestHostileLargeFile(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	p := filepath.Join(mnt, "working", "big.bin")
	const size = 64 << 20
	r := rand.New(rand.NewPCG(5, 6))
	f, err := os.Create(p)
	check(t, err)
	h := sha256.New()
	buf := make([]byte, 1<<20+13) // not aligned to anything
	for n := 0; n < size; {
		k := min(len(buf), size-n)
		for i := range buf[:k] {
			buf[i] = byte(r.Uint32())
		}
		if _, err := f.Write(buf[:k]); err != nil {
			f.Close()
			t.Fatalf("writing at %d: %v", n, err)
		}
		h.Write(buf[:k])
		n += k
	}
	check(t, f.Close())
	want := hex.EncodeToString(h.Sum(nil))
	if got, n := fileSHA(t, p); got != want || n != size {
		t.Errorf("read back: %d bytes, sha256 %s, want %s", n, got, want)
	}
	if v, err := getxattr(p, "user.mnemofs.sha256"); err != nil || v != want {
		t.Errorf("sha256 xattr %q, %v; want %s", v, err, want)
	}
	m.stop(t, syscall.SIGTERM)
	m = startMount(t, data, mnt)
	if got, n := fileSHA(t, p); got != want || n != size {
		t.Errorf("after a remount: %d bytes, sha256 %s, want %s", n, got, want)
	}
	alive(t, m, "after a 64 MiB file")
}

// crashHead returns the start of a Go crash report in a mount's stderr
// (the fatal error or panic and the crashing goroutine), or its tail.
func crashHead(s string) string {
	for _, mark := range []string{"\nunexpected fault", "\nfatal error", "\npanic:", "\nSIG"} {
		if i := strings.Index(s, mark); i >= 0 {
			return s[i:min(len(s), i+3000)]
		}
	}
	return s[max(0, len(s)-3000):]
}

func TestHostileLargeDirectory(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	n := 5000
	if onEtcd() {
		n = 2000 // each create is a quorum write: 5000 take most of the mount watchdog's 90 s on a loaded machine
	}
	d := filepath.Join(mnt, "working", "many")
	check(t, os.Mkdir(d, 0o755))
	want := map[string]bool{}
	for i := range n {
		name := fmt.Sprintf("entry-%05d.txt", i)
		// Not empty: empty memories are missing from the views
		// (TestBugEmptyFileMissingFromViews).
		check(t, os.WriteFile(filepath.Join(d, name), []byte(name), 0o644))
		want[name] = true
	}
	list := func(dir, when string) {
		t.Helper()
		f, err := os.Open(dir)
		check(t, err)
		defer f.Close()
		got := map[string]int{}
		for {
			names, err := f.Readdirnames(97) // small batches: many READDIR offsets
			for _, nm := range names {
				got[nm]++
			}
			if err == io.EOF || len(names) == 0 {
				break
			}
			check(t, err)
		}
		for nm := range want {
			if got[nm] != 1 {
				t.Errorf("%s: %s listed %d times", when, nm, got[nm])
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d names listed, want %d", when, len(got), len(want))
		}
	}
	list(d, "created")
	list(filepath.Join(mnt, "by-type/working/working/many"), "through by-type/")

	// Removing entries while a listing is under way: every entry not
	// removed is listed exactly once (POSIX leaves the removed ones open).
	f, err := os.Open(d)
	check(t, err)
	got := map[string]int{}
	first, err := f.Readdirnames(1000)
	check(t, err)
	for _, nm := range first {
		got[nm]++
	}
	removed := map[string]bool{}
	for i := 0; i < n; i += 7 {
		name := fmt.Sprintf("entry-%05d.txt", i)
		check(t, os.Remove(filepath.Join(d, name)))
		removed[name] = true
		delete(want, name)
	}
	for i := range 100 {
		name := fmt.Sprintf("added-%03d.txt", i)
		check(t, os.WriteFile(filepath.Join(d, name), nil, 0o644))
	}
	for {
		names, err := f.Readdirnames(97)
		for _, nm := range names {
			got[nm]++
		}
		if err == io.EOF || len(names) == 0 {
			break
		}
		check(t, err)
	}
	f.Close()
	bad := 0
	for nm := range want {
		if got[nm] != 1 {
			if bad++; bad <= 10 {
				t.Errorf("listing while removing: %s (never removed) listed %d times", nm, got[nm])
			}
		}
	}
	for nm, k := range got {
		if k > 1 && bad < 20 {
			bad++
			t.Errorf("listing while removing: %s listed %d times", nm, k)
		}
	}
	for i := range 100 {
		want[fmt.Sprintf("added-%03d.txt", i)] = true
	}
	m.stop(t, syscall.SIGTERM)
	fsckClean(t, data, "after a large directory")
	m = startMount(t, data, mnt)
	list(d, "after a remount")
	alive(t, m, "after a large directory")
}
