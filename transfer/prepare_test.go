package transfer

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// readSmall is a fileReader's read of one file.
func readSmall(name string, max int64) (fs.FileInfo, []byte, bool) {
	var fr fileReader
	defer fr.close()
	return fr.read(name, max)
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

// TestFileReaderDirectories: one reader going from directory to directory
// reads each file by its own name (the directory it holds open follows),
// and leaves the files' access times as they were.
func TestFileReaderDirectories(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	var names []string
	for _, d := range []string{"a", "b", "a/c"} {
		if err := os.Mkdir(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(src, d, "same.md")
		if err := os.WriteFile(p, []byte("in "+d), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		names = append(names, d)
	}
	var fr fileReader
	defer fr.close()
	for _, d := range append(names, "a", "a/c", "b") {
		p := filepath.Join(src, d, "same.md")
		fi, data, ok := fr.read(p, 100)
		if !ok || string(data) != "in "+d || fi.Name() != "same.md" || !fi.ModTime().Equal(old) {
			t.Fatalf("%s: ok %v, %q, %v", d, ok, data, fi)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid != uint32(os.Getuid()) {
			t.Fatalf("%s: Sys %v", d, fi.Sys())
		}
		var now syscall.Stat_t
		if err := syscall.Stat(p, &now); err != nil {
			t.Fatal(err)
		}
		if now.Atim.Sec != old.Unix() {
			t.Errorf("%s: reading it set its access time to %d", d, now.Atim.Sec)
		}
	}
	if _, _, ok := fr.read(filepath.Join(src, "gone", "x.md"), 100); ok {
		t.Error("a file in a missing directory was read")
	}
	if fi, data, ok := fr.read(filepath.Join(src, "b", "same.md"), 100); !ok || string(data) != "in b" || fi.Size() != 4 {
		t.Errorf("after a missing directory: ok %v, %q", ok, data)
	}
}
