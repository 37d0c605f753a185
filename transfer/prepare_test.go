package transfer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadSmall: regular files are read with their info, whatever their
// size says; anything else is left to the caller, without blocking.
func TestReadSmall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o640); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := write("small.md", []byte("---\nuser: alice\n---\nhello\n"))
	fi, data, ok := readSmall(small, 100)
	if !ok || string(data) != "---\nuser: alice\n---\nhello\n" || fi.Size() != int64(len(data)) || fi.Mode().Perm() != 0o640 {
		t.Errorf("small file: ok %v, %q, %v", ok, data, fi)
	}
	if _, data, ok := readSmall(write("empty", nil), 100); !ok || len(data) != 0 {
		t.Errorf("empty file: ok %v, %q", ok, data)
	}
	if fi, data, ok := readSmall(write("big", bytes.Repeat([]byte("x"), 101)), 100); !ok || data != nil || fi.Size() != 101 {
		t.Errorf("file over the limit: ok %v, %d bytes read", ok, len(data))
	}
	// /proc files say they are empty and are not.
	if _, data, ok := readSmall("/proc/self/status", 1<<20); !ok || !bytes.Contains(data, []byte("Pid:")) {
		t.Errorf("/proc/self/status: ok %v, %q", ok, data)
	}
	if err := os.Symlink(small, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"link", "fifo", ".", "missing"} {
		if fi, data, ok := readSmall(filepath.Join(dir, name), 100); ok || fi != nil || data != nil {
			t.Errorf("%s: read as a regular file (%v, %q)", name, fi, data)
		}
	}
}

// TestWalkStreams: the walk sends every path in WalkDir's order, reports
// a total only once it is over, and ends when stopped half way.
func TestWalkStreams(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	var want []string
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
		want = append(want, d)
		for _, f := range []string{"1.md", "2.md"} {
			if err := os.WriteFile(filepath.Join(src, d, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			want = append(want, d+"/"+f)
		}
	}
	w := walk(src, make(chan struct{}))
	var got []string
	for it := range w.items {
		got = append(got, it.rel)
	}
	if err := <-w.err; err != nil || strings.Join(got, " ") != strings.Join(want, " ") || w.total() != int64(len(want)) {
		t.Fatalf("walk: %v, total %d, err %v; want %v", got, w.total(), err, want)
	}
	many := filepath.Join(src, "many")
	if err := os.Mkdir(many, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 2 * prepareAhead {
		if err := os.WriteFile(filepath.Join(many, fmt.Sprint(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	w = walk(src, stop)
	<-w.items
	close(stop)
	<-w.finished // the walk ends though nobody reads on
	if n := w.found.Load(); n > prepareAhead+1 {
		t.Errorf("stopped walk went on: found %d", n)
	}
}
