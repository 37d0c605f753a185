package resident

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mapped writes size bytes of a pattern to dir/name, maps the file and
// touches every page of it.
func mapped(t *testing.T, dir, name string, size int) []byte {
	t.Helper()
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(m) })
	sum := 0
	for i := 0; i < len(m); i += 4096 {
		sum += int(m[i])
	}
	if sum == 0 {
		t.Fatal("nothing read")
	}
	return m
}

// TestTrim: the pages of a mapped snapshot, and of a table the engine
// pins except its hot tail, leave the resident set; a table not pinned,
// another kind of file or one outside the directory stay; what the
// mappings read afterwards is unchanged.
func TestTrim(t *testing.T) {
	dir, err := os.MkdirTemp(".", "trim-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	const size, hot = 16 << 20, 2 << 20
	page := int64(os.Getpagesize())
	before, err := FileRSS()
	if err != nil {
		t.Skipf("no RssFile in /proc/self/status: %v", err)
	}
	snap := mapped(t, dir, "views.snap", size)
	sst := mapped(t, dir, "000001.sst", size)
	loose := mapped(t, dir, "000002.sst", size)
	other := mapped(t, dir, "000001.vlog", size)
	touched, _ := FileRSS()
	if touched-before < 4*size*9/10 {
		t.Fatalf("mapping and reading %d MiB raised RssFile by only %d MiB", 4*size>>20, (touched-before)>>20)
	}
	abs, _ := filepath.Abs(filepath.Join(dir, "000001.sst"))
	unpinned := false
	pin := func() ([]File, func(), error) {
		return []File{{Path: abs, HotTail: hot}}, func() { unpinned = true }, nil
	}
	n, kept, err := Trim(dir, pin, size)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2*size - hot - page; n != want || kept != hot+page {
		t.Errorf("Trim covered %d bytes of mappings and kept %d, want %d (the snapshot and the pinned table but its tail) and %d", n, kept, want, hot+page)
	}
	if !unpinned {
		t.Error("Trim did not unpin")
	}
	after, _ := FileRSS()
	if left := after - before; left < (2*size+hot)*9/10 || left > 2*size+hot+size/4 {
		t.Errorf("after the trim RssFile is %d MiB above the start; the two mappings and the tail kept are %d MiB", left>>20, (2*size+hot)>>20)
	}
	if r := mappingRSS(t, abs); r < hot || r > hot+size/8 {
		t.Errorf("the pinned table has %d KiB resident after the trim, want its hot tail, %d KiB", r>>10, hot>>10)
	}
	for _, m := range [][]byte{snap, sst, loose, other} {
		if !bytes.Equal(m[size-16:], []byte("0123456789abcdef")) || !bytes.Equal(m[:16], []byte("0123456789abcdef")) {
			t.Fatal("a mapping reads other bytes after the trim")
		}
	}
	// With no room for the tail, the table is trimmed whole.
	sum := 0
	for i := 0; i < len(sst); i += int(page) {
		sum += int(sst[i])
	}
	if r := mappingRSS(t, abs); sum == 0 || r < size*9/10 {
		t.Fatalf("reading the table again left %d KiB of it resident", r>>10)
	}
	if _, kept, err := Trim(dir, pin, hot/2); err != nil || kept != 0 {
		t.Errorf("Trim with room for half the tail kept %d bytes (%v), want none", kept, err)
	}
	if r := mappingRSS(t, abs); r > size/8 {
		t.Errorf("the pinned table has %d KiB resident after a trim with no room for its tail", r>>10)
	}
}

// mappingRSS is the resident size of the mappings of path
// (/proc/self/smaps).
func mappingRSS(t *testing.T, path string) int64 {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	var in bool
	var kb int64
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		switch {
		case len(f) >= 6 && bytes.Contains(f[0], []byte("-")) && !bytes.HasSuffix(f[0], []byte(":")):
			in = string(bytes.Join(f[5:], []byte(" "))) == path
		case in && len(f) >= 2 && string(f[0]) == "Rss:":
			n, _ := strconv.ParseInt(string(f[1]), 10, 64)
			kb += n
		}
	}
	return kb << 10
}

// TestTrimmerBudget: a trimmer lets the mapped files grow to its budget,
// and a poke past it trims.
func TestTrimmerBudget(t *testing.T) {
	dir, err := os.MkdirTemp(".", "trim-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if _, err := FileRSS(); err != nil {
		t.Skipf("no RssFile in /proc/self/status: %v", err)
	}
	tr := Start(dir, 48<<20, time.Hour, nil)
	defer tr.Stop()
	mapped(t, dir, "a.snap", 16<<20)
	if tr.Check() {
		t.Error("trimmed below the budget")
	}
	mapped(t, dir, "b.snap", 64<<20)
	tr.Poke()
	deadline := time.Now().Add(5 * time.Second)
	for tr.Trims() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if tr.Trims() == 0 {
		t.Fatal("a poke past the budget did not trim")
	}
	if n, _ := FileRSS(); n-tr.base > 48<<20 {
		t.Errorf("after the trim RssFile is %d MiB above the start, past the budget", (n-tr.base)>>20)
	}
}
