package transfer

import (
	"bytes"
	"os"
	"path/filepath"
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
