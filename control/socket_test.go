package control

import (
	"errors"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// serveUnmount serves dataDir with only the "unmount" operation, counting
// its calls.
func serveUnmount(t *testing.T, dataDir string) (*Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	s, err := Serve(dataDir, nil, nil, func() error { n.Add(1); return nil }, log.New(os.Stderr, "test: ", 0))
	if err != nil {
		t.Fatalf("Serve(%s): %v", dataDir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s, &n
}

// longDir returns a directory whose control.sock path is over sun_path's
// 108 bytes.
func longDir(t *testing.T) string {
	d := filepath.Join(t.TempDir(), strings.Repeat("a", 60), strings.Repeat("b", 60))
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestLongSocketPath: a data dir too long for a socket address still gets
// its socket in it, private (even under umask 0), reachable by Call, and
// gone after Close.
func TestLongSocketPath(t *testing.T) {
	data := longDir(t)
	if len(SocketPath(data)) <= maxSunPath {
		t.Fatalf("test path too short: %d bytes", len(SocketPath(data)))
	}
	old := syscall.Umask(0)
	s, n := serveUnmount(t, data)
	syscall.Umask(old)
	if s.Path() != SocketPath(data) {
		t.Errorf("socket at %s, want %s", s.Path(), SocketPath(data))
	}
	fi, err := os.Lstat(SocketPath(data))
	if err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v, %v; want a socket of mode 0600", fi.Mode(), err)
	}
	ents, _ := os.ReadDir(data)
	if len(ents) != 1 {
		t.Errorf("data dir holds %d entries, want only control.sock (the bind directory is left?)", len(ents))
	}
	if err := Call(data, s.Path(), Request{Op: "unmount"}, nil, nil); err != nil || n.Load() != 1 {
		t.Fatalf("Call over the long path: %v (unmount called %d times)", err, n.Load())
	}
	// A stale socket of a dead mount is replaced.
	s.Close()
	if _, err := os.Lstat(SocketPath(data)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket still there after Close: %v", err)
	}
	if err := os.WriteFile(SocketPath(data), []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, n2 := serveUnmount(t, data)
	if err := Call(data, s2.Path(), Request{Op: "unmount"}, nil, nil); err != nil || n2.Load() != 1 {
		t.Fatalf("Call after replacing a stale socket: %v", err)
	}
}

// TestSocketFallback: a data dir that cannot hold the socket sends it to a
// private $XDG_RUNTIME_DIR, else to a private $TMPDIR/mnemofs-<uid>/, and
// never to a directory that is not private.
func TestSocketFallback(t *testing.T) {
	data := t.TempDir()
	// A directory where the socket should go: the rename into place fails.
	if err := os.MkdirAll(filepath.Join(SocketPath(data), "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	runtime, tmp := t.TempDir(), t.TempDir()
	os.Chmod(runtime, 0o700) // t.TempDir's are 0777 &^ umask
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	t.Setenv("TMPDIR", tmp)

	s, n := serveUnmount(t, data)
	if filepath.Dir(s.Path()) != runtime || !strings.HasPrefix(filepath.Base(s.Path()), "mnemofs-") {
		t.Errorf("socket at %s, want it in $XDG_RUNTIME_DIR %s", s.Path(), runtime)
	}
	if err := Call(data, s.Path(), Request{Op: "unmount"}, nil, nil); err != nil || n.Load() != 1 {
		t.Fatalf("Call to the fallback socket: %v", err)
	}
	s.Close()

	if err := os.Chmod(runtime, 0o755); err != nil {
		t.Fatal(err)
	}
	s, n = serveUnmount(t, data)
	priv := filepath.Join(tmp, "mnemofs-"+strconv.Itoa(os.Geteuid()))
	if filepath.Dir(s.Path()) != priv {
		t.Errorf("socket at %s, want it in %s (XDG_RUNTIME_DIR is not private)", s.Path(), priv)
	}
	if fi, err := os.Lstat(priv); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v; want mode 0700", priv, fi.Mode(), err)
	}
	if err := Call(data, s.Path(), Request{Op: "unmount"}, nil, nil); err != nil || n.Load() != 1 {
		t.Fatalf("Call to the fallback socket: %v", err)
	}
	s.Close()

	// Someone else's (or an open) directory under that name is not used.
	if err := os.Chmod(priv, 0o777); err != nil {
		t.Fatal(err)
	}
	if s, err := Serve(data, nil, nil, nil, nil); err == nil {
		s.Close()
		t.Fatalf("Serve used %s in a directory open to everyone", s.Path())
	} else if !strings.Contains(err.Error(), "open to other users") {
		t.Errorf("Serve: %v, want it to name the open directory", err)
	}
	os.Remove(priv)
	if err := os.Symlink(t.TempDir(), priv); err != nil {
		t.Fatal(err)
	}
	if s, err := Serve(data, nil, nil, nil, nil); err == nil {
		s.Close()
		t.Fatalf("Serve used %s through a symlink", s.Path())
	}
}

func TestCheckPrivateDir(t *testing.T) {
	d := t.TempDir()
	os.Chmod(d, 0o700)
	if err := checkPrivateDir(d); err != nil {
		t.Errorf("%s (0700, ours): %v", d, err)
	}
	for _, mode := range []os.FileMode{0o750, 0o705, 0o1777} {
		os.Chmod(d, mode)
		if checkPrivateDir(d) == nil {
			t.Errorf("mode %v accepted", mode)
		}
	}
	os.Chmod(d, 0o700)
	if os.Geteuid() == 0 {
		os.Chown(d, 65534, 65534)
		if checkPrivateDir(d) == nil {
			t.Errorf("a directory of uid 65534 accepted for root")
		}
	}
	f := filepath.Join(t.TempDir(), "f")
	os.WriteFile(f, nil, 0o600)
	if checkPrivateDir(f) == nil {
		t.Errorf("a file accepted as a directory")
	}
}

// TestCallWaitsForTheSocket: a command run while a mount is still coming
// up (it holds the store, its socket does not listen yet) reaches it once
// it listens, instead of failing at once.
func TestCallWaitsForTheSocket(t *testing.T) {
	data := t.TempDir()
	done := make(chan error, 1)
	go func() { done <- Call(data, SocketPath(data), Request{Op: "unmount"}, nil, nil) }()
	time.Sleep(300 * time.Millisecond)
	_, n := serveUnmount(t, data)
	select {
	case err := <-done:
		if err != nil || n.Load() != 1 {
			t.Fatalf("Call to a socket that listens 300 ms later: %v (unmount called %d times)", err, n.Load())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Call did not return")
	}
}
