package e2e

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/control"
)

// peerEnv makes the test binary run peerHelper instead of the tests (its
// value: the arguments, separated by \x1f):
// "dial DATA SOCKET" asks the mount at SOCKET for stats (exit 0 when it
// answers), "serve DIR" serves a control socket in DIR until stdin closes.
const peerEnv = "MNEMOFS_TEST_PEER"

func peerHelper() int {
	f := strings.Split(os.Getenv(peerEnv), "\x1f")
	switch {
	case len(f) == 3 && f[0] == "dial":
		var v any
		if err := control.Call(f[1], f[2], control.Request{Op: "stats"}, nil, &v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case len(f) == 2 && f[0] == "serve":
		s, err := control.Serve(f[1], nil, nil, func() error { return nil }, log.New(os.Stderr, "", 0))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("ready", s.Path())
		bufio.NewReader(os.Stdin).ReadString('\n')
		s.Close()
		return 0
	}
	fmt.Fprintf(os.Stderr, "bad %s=%q\n", peerEnv, os.Getenv(peerEnv))
	return 2
}

var (
	testBinOnce sync.Once
	testBin     string
	testBinErr  error
)

// peerCmd returns the test binary run as uid (0: as we are) in peerHelper
// mode; the copy lives beside the binary binForAnyone opens to all users.
func peerCmd(t *testing.T, uid uint32, args ...string) *exec.Cmd {
	t.Helper()
	dir := filepath.Dir(binForAnyone(t))
	testBinOnce.Do(func() {
		self, err := os.Executable()
		if testBinErr = err; err != nil {
			return
		}
		b, err := os.ReadFile(self)
		if testBinErr = err; err != nil {
			return
		}
		testBin = filepath.Join(dir, "mnemofs.test")
		testBinErr = os.WriteFile(testBin, b, 0o755)
	})
	if testBinErr != nil {
		t.Fatal(testBinErr)
	}
	cmd := exec.Command(testBin)
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), peerEnv+"="+strings.Join(args, "\x1f"))
	if uid != 0 {
		requireRoot(t)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	}
	return cmd
}

// longDataDir returns a data dir path whose control.sock is far past the
// 108 bytes of a socket address.
func longDataDir(t *testing.T, base string) string {
	d := filepath.Join(base, strings.Repeat("long-data-dir-", 5), strings.Repeat("x", 60), "data")
	if len(filepath.Join(d, "control.sock")) <= 108 {
		t.Fatalf("%s is not long enough", d)
	}
	return d
}

// legacySocket is where the socket went before, for a long data dir.
func legacySocket(data string) string {
	h := sha256.Sum256([]byte(data))
	return filepath.Join(os.TempDir(), "mnemofs-"+hex.EncodeToString(h[:8])+".sock")
}

// TestControlSocketLongDataDir: a data dir too long for a socket address
// keeps its control socket in it; the CLI reaches the mount through it.
func TestControlSocketLongDataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, mnt := longDataDir(t, dir), filepath.Join(dir, "mnt")
	check(t, os.Mkdir(mnt, 0o755))
	m := startMount(t, data, mnt)
	h, err := control.ReadHolder(data)
	check(t, err)
	if h.Socket != control.SocketPath(data) {
		t.Errorf("the lock file records the socket %q, want %q", h.Socket, control.SocketPath(data))
	}
	if _, err := os.Lstat(legacySocket(data)); err == nil {
		t.Errorf("a socket was made at %s", legacySocket(data))
	}
	check(t, os.WriteFile(filepath.Join(mnt, "semantic", "a.md"), []byte("hello\n"), 0o644))
	if r := mustRun(t, "stats", "--data", data); !strings.Contains(r.stdout, "memories: 1") {
		t.Errorf("stats through the mount:\n%s", r)
	}
	mustRun(t, "unmount", mnt)
	if !m.waitExit(20 * time.Second) {
		t.Fatalf("the mount did not stop after 'mnemofs unmount'")
	}
	if _, err := os.Lstat(control.SocketPath(data)); err == nil {
		t.Errorf("control.sock left behind after unmount")
	}
}

// TestControlSocketSquatted: another user holding the name the socket of a
// long data dir used to take in /tmp does not cut the CLI off the mount.
func TestControlSocketSquatted(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	dir := t.TempDir()
	data, mnt := longDataDir(t, dir), filepath.Join(dir, "mnt")
	check(t, os.Mkdir(mnt, 0o755))
	squat := legacySocket(data)
	check(t, os.MkdirAll(filepath.Join(squat, "keep"), 0o755)) // not removable by a mere unlink
	check(t, os.Chown(squat, nobody, nobody))
	t.Cleanup(func() { os.RemoveAll(squat) })
	startMount(t, data, mnt)
	if r := mustRun(t, "stats", "--data", data); !strings.Contains(r.stdout, "memories: 0") {
		t.Errorf("stats through the mount:\n%s", r)
	}
}

// TestControlSocketRefusesOtherUID: a process of another user that gets to
// the socket (here: its modes opened up) is refused by the mount, and
// logged; the same client as root is served.
func TestControlSocketRefusesOtherUID(t *testing.T) {
	// Not parallel: it copies the test binary and runs the copy; a
	// fork of a test beside it could hold the copy open for writing
	// (exec would fail with ETXTBSY).
	requireRoot(t)
	dir := dirFor(t, 0)
	check(t, os.Chmod(dir, 0o755))
	data, mnt := filepath.Join(dir, "data"), filepath.Join(dir, "mnt")
	check(t, os.Mkdir(mnt, 0o755))
	m := startMount(t, data, mnt)
	check(t, os.Chmod(data, 0o755))
	check(t, os.Chmod(control.SocketPath(data), 0o666))

	out, err := peerCmd(t, 0, "dial", data, control.SocketPath(data)).CombinedOutput()
	if err != nil {
		t.Fatalf("the client as root: %v\n%s", err, out)
	}
	out, err = peerCmd(t, nobody, "dial", data, control.SocketPath(data)).CombinedOutput()
	if err == nil {
		t.Fatalf("a client of uid %d was served:\n%s", nobody, out)
	}
	want := fmt.Sprintf("refused a connection from uid %d", nobody)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(m.stderr.String(), want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(m.stderr.String(), want) {
		t.Errorf("the mount did not log %q; its stderr:\n%s", want, m.stderr.String())
	}
}

// TestControlSocketForeignServer: a socket named in the lock file but held
// by another user than the store's owner gets one clear refusal from the
// CLI, which sends it nothing.
func TestControlSocketForeignServer(t *testing.T) {
	// Not parallel: it copies the test binary and runs the copy; a
	// fork of a test beside it could hold the copy open for writing
	// (exec would fail with ETXTBSY).
	requireRoot(t)
	data := filepath.Join(t.TempDir(), "data")
	fake := dirFor(t, nobody)
	srv := peerCmd(t, nobody, "serve", fake)
	stdin, err := srv.StdinPipe()
	check(t, err)
	stdout, err := srv.StdoutPipe()
	check(t, err)
	srv.Stderr = os.Stderr
	check(t, srv.Start())
	t.Cleanup(func() { stdin.Close(); srv.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready ") {
		t.Fatalf("fake server: %q, %v", line, err)
	}
	sock := strings.TrimSpace(strings.TrimPrefix(line, "ready "))

	lock, _, err := control.Acquire(data, control.Holder{Pid: os.Getpid(), Command: "mount", Mountpoint: "/nowhere", Socket: sock})
	check(t, err)
	defer lock.Release()
	oneErrorLine(t, runMnemofs(t, "stats", "--data", data), sock, fmt.Sprintf("held by uid %d", nobody), "not the store's owner", "refusing to talk to it")
}
