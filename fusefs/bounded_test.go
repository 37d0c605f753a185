package fusefs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/memory"
	"github.com/mnemofs/mnemofs/views"
)

// Views in bounded time. Every lookup of a READDIRPLUS of by-tag/ used to
// scan and sort the whole catalog: `ls by-tag` over one memory with 16,000
// tags took 205 s, and 380,000 tags hung an unkillable ls for minutes.

// guard is far above what these listings take (well under a second) and
// far below what they took (minutes): only a guard, the counts of catalog
// walks are the real check.
const guard = 10 * time.Second

// tagList is a front matter list of n distinct tags.
func tagList(prefix string, n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s%05d", prefix, i)
	}
	return b.String() + "]"
}

// lsL lists dir as ls -l does: a READDIRPLUS (a lookup per entry), then an
// lstat of every entry. It returns the names.
func lsL(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	must(t, err)
	var names []string
	for _, e := range ents {
		_, err := os.Lstat(filepath.Join(dir, e.Name()))
		must(t, err)
		names = append(names, e.Name())
	}
	return names
}

func TestByTagOfOneMemoryWithManyTags(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("semantic/tags.md")
	content := []byte("---\ntags: " + tagList("t", 20000) + "\n---\nA memory with too many tags.\n")
	must(t, os.WriteFile(p, content, 0o644))
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, content) {
		t.Fatalf("the write was not kept as written (%d bytes, %v)", len(got), err)
	}
	tf.eng.Ready()
	scans := tf.eng.CatalogScans()
	t0 := time.Now()
	names := lsL(t, tf.path("by-tag"))
	d := time.Since(t0)
	out, err := exec.Command("ls", "-l", tf.path("by-tag")).CombinedOutput()
	must(t, err)
	d2 := time.Since(t0) - d
	t.Logf("ls by-tag: %d names in %v; ls -l in %v", len(names), d, d2)
	if len(names) != memory.MaxValues || names[0] != "t00000" || names[len(names)-1] != "t00255" {
		t.Fatalf("by-tag lists %d names (%q…), want the first %d tags", len(names), names[:min(3, len(names))], memory.MaxValues)
	}
	if n := strings.Count(string(out), "\n"); n != memory.MaxValues+1 {
		t.Fatalf("ls -l printed %d lines", n)
	}
	if d+d2 > guard {
		t.Fatalf("listing by-tag took %v", d+d2)
	}
	if n := tf.eng.CatalogScans() - scans; n > 0 {
		t.Fatalf("listing by-tag walked the catalog %d times", n)
	}
	// The excess is reported, in meta/errors and in the xattr.
	want := "tags: 20000 values, only the first 256 are kept"
	if errs := read(t, tf.path("meta/errors")); !strings.Contains(errs, "/semantic/tags.md\t") || !strings.Contains(errs, want) {
		t.Fatalf("meta/errors:\n%s", errs)
	}
	buf := make([]byte, 4096)
	n, err := unix.Getxattr(p, "user.mnemofs.error", buf)
	must(t, err)
	if !strings.Contains(string(buf[:n]), want) {
		t.Fatalf("user.mnemofs.error: %q", buf[:n])
	}
	// The kept tags work as views.
	if got := strings.Join(lsNames(t, tf.path("by-tag/t00255/semantic")), " "); got != "tags.md" {
		t.Fatalf("by-tag/t00255/semantic lists %q", got)
	}
	if _, err := os.Stat(tf.path("by-tag/t00256")); !os.IsNotExist(err) {
		t.Fatalf("a dropped tag has a view: %v", err)
	}
}

func TestByTagOfManyMemories(t *testing.T) {
	// Not parallel: it compares two listings' times, which tests beside
	// it would skew (CI under load saw 3.7 s against 10 × 0.22 s + 1 s).
	tf := testMount(t)
	const n = 2000
	must(t, os.MkdirAll(tf.path("episodic/many"), 0o755))
	for i := range n {
		must(t, os.WriteFile(tf.path(fmt.Sprintf("episodic/many/m%d.md", i)),
			fmt.Appendf(nil, "---\ntags: [own%05d]\ncreated: 2024-%02d-%02d\n---\nmemory %d\n", i, i%12+1, i%28+1, i), 0o644))
	}
	tf.eng.Ready()
	// The real directory of the same 2000 memories, listed the same way,
	// is the yardstick: by-tag/ took 30 times as long.
	t0 := time.Now()
	if got := len(lsL(t, tf.path("episodic/many"))); got != n {
		t.Fatalf("episodic/many lists %d names", got)
	}
	real := time.Since(t0)
	scans := tf.eng.CatalogScans()
	t0 = time.Now()
	names := lsL(t, tf.path("by-tag"))
	byTag := time.Since(t0)
	days := 0
	for _, y := range lsL(t, tf.path("by-date")) {
		for _, m := range lsL(t, tf.path("by-date/"+y)) {
			if m == "search" {
				continue // the year's search/
			}
			for _, d := range lsL(t, tf.path("by-date/"+y+"/"+m)) {
				if d != "search" { // the month's
					days++
				}
			}
		}
	}
	d := time.Since(t0)
	t.Logf("ls -l of %d memories: %v; of by-tag (%d): %v; with by-date (%d days): %v", n, real, len(names), byTag, days, d)
	if len(names) != n || days != 84 {
		t.Fatalf("by-tag lists %d names, by-date %d days", len(names), days)
	}
	if byTag > 10*real+time.Second || d > guard {
		t.Fatalf("ls -l by-tag took %v, ls -l of the real directory %v", byTag, real)
	}
	if s := tf.eng.CatalogScans() - scans; s > 0 {
		t.Fatalf("listing walked the catalog %d times", s)
	}
	// One view among them, and its directory listing.
	if got := strings.Join(lsL(t, tf.path("by-tag/own01999/episodic/many")), " "); got != "m1999.md" {
		t.Fatalf("by-tag/own01999 lists %q", got)
	}
}

func TestHugeFrontMatterIsReported(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("semantic/huge.md")
	var b bytes.Buffer
	b.WriteString("---\ntags: [kept]\nnotes:\n")
	for b.Len() < 10<<20 {
		b.WriteString("  - a line of a very long front matter block\n")
	}
	b.WriteString("---\nbody\n")
	must(t, os.WriteFile(p, b.Bytes(), 0o644))
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, b.Bytes()) {
		t.Fatalf("the write was not kept as written (%d bytes, %v)", len(got), err)
	}
	want := fmt.Sprintf("/semantic/huge.md\tfront matter over %d bytes not parsed", memory.MaxParse)
	if errs := read(t, tf.path("meta/errors")); !strings.Contains(errs, want) {
		t.Fatalf("meta/errors lacks %q:\n%s", want, errs)
	}
	if stats := read(t, tf.path("meta/stats.json")); !strings.Contains(stats, `"memories_with_errors": 1`) {
		t.Fatalf("stats.json counts no error:\n%s", stats)
	}
}

// TestInterruptedRequests: a request the kernel interrupted (its context
// done) ends with EINTR instead of finishing its work.
func TestInterruptedRequests(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	must(t, os.WriteFile(tf.path("semantic/a.md"), []byte("---\ntags: [x]\n---\nsome words\n"), 0o644))
	tf.eng.Ready()
	f := &FS{st: tf.st, eng: tf.eng}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q, err := views.ParseQuery("words")
	must(t, err)
	view := newViewRoot(f, fixed(views.Filter{Path: "/semantic"}), "/x")
	if _, errno := view.Readdir(ctx); errno != syscall.EINTR {
		t.Errorf("view Readdir: %v", errno)
	}
	qd := &queryDir{genDir: genDir{fsys: f}, scope: fixed(views.Filter{}), q: q, key: "/search/words"}
	if _, errno := qd.Readdir(ctx); errno != syscall.EINTR {
		t.Errorf("search Readdir: %v", errno)
	}
	if _, err := f.eng.ContextCtx(ctx, q, views.Filter{}); errno(err) != syscall.EINTR {
		t.Errorf("context: %v", err)
	}
	// Not interrupted, the same requests answer.
	if _, errno := view.Readdir(context.Background()); errno != 0 {
		t.Errorf("view Readdir: %v", errno)
	}
}

// BenchmarkLsByTag lists by-tag/ as ls -l does (a lookup of every value,
// then an lstat) over values/200 memories of 200 tags each.
func BenchmarkLsByTag(b *testing.B) {
	for _, values := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("%dk", values/1000), func(b *testing.B) {
			tf := testMount(b)
			must(b, os.MkdirAll(tf.path("semantic/b"), 0o755))
			for m := range values / 200 {
				must(b, os.WriteFile(tf.path(fmt.Sprintf("semantic/b/m%d.md", m)),
					[]byte("---\ntags: "+tagList(fmt.Sprintf("m%d-", m), 200)+"\n---\nbody\n"), 0o644))
			}
			if got := len(lsL(b, tf.path("by-tag"))); got != values {
				b.Fatalf("%d values listed", got)
			}
			b.ResetTimer()
			for range b.N {
				lsL(b, tf.path("by-tag"))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*values), "ns/lookup")
		})
	}
}

// BenchmarkLsByTagOneMemory is the shape found on a real mount: one memory
// with n distinct tags, by-tag/ listed as ls -l does. Past the cap only
// the first memory.MaxValues tags are kept.
func BenchmarkLsByTagOneMemory(b *testing.B) {
	for _, n := range []int{2000, 8000, 20000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			tf := testMount(b)
			must(b, os.WriteFile(tf.path("semantic/tags.md"), []byte("---\ntags: "+tagList("t", n)+"\n---\nbody\n"), 0o644))
			b.ResetTimer()
			for range b.N {
				lsL(b, tf.path("by-tag"))
			}
		})
	}
}
