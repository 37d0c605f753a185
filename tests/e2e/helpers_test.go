package e2e

// Helpers for the end-to-end tests: they build the real binary once and run
// it as separate processes against real FUSE mounts.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testetcd"
	"github.com/mnemofs/mnemofs/internal/testfuse"
)

// mnemofsBin is the binary built by TestMain.
var mnemofsBin string

func TestMain(m *testing.M) {
	if os.Getenv(writerEnv) != "" {
		os.Exit(crashWriter()) // child process of the crash test
	}
	if os.Getenv(peerEnv) != "" {
		os.Exit(peerHelper()) // child process of the control socket tests
	}
	moreParallel()
	dir, err := os.MkdirTemp("", "mnemofs-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin := filepath.Join(dir, "mnemofs")
	args := []string{"build", "-o", bin}
	if os.Getenv("MNEMOFS_E2E_RACE") == "1" {
		args = append(args, "-race") // race-instrumented product binary
	}
	if out, err := exec.Command("go", append(args, "github.com/mnemofs/mnemofs/cmd/mnemofs")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building mnemofs: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	mnemofsBin = bin
	code := m.Run()
	testetcd.StopShared()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the binary produced.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
}

// runMnemofs runs the binary to completion (at most 2 minutes).
func runMnemofs(t testing.TB, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mnemofsBin, args...)
	if d := dataArg(args); d != "" {
		withBackend(t, cmd, d)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{out.String(), errb.String(), 0}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("mnemofs %q timed out\n%s", args, r)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("mnemofs %q: %v", args, err)
	}
	return r
}

// mustRun runs the binary and fails the test unless it exits 0.
func mustRun(t testing.TB, args ...string) result {
	t.Helper()
	r := runMnemofs(t, args...)
	if r.code != 0 {
		t.Fatalf("mnemofs %q failed:\n%s", args, r)
	}
	return r
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// mountProc is a running `mnemofs mount`.
type mountProc struct {
	mnt, data      string
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	done           chan struct{} // closed when the process has exited
	state          *os.ProcessState
	hung           atomic.Bool // the watchdog fired
}

// mountWatchdog is how long a test mount may live; past it the mount is
// assumed deadlocked and sent SIGQUIT, which dumps its goroutines and
// aborts the FUSE connection so that blocked system calls return.
const mountWatchdog = 90 * time.Second

// startMount runs `mnemofs mount --data data mnt` and waits for its ready
// line. Cleanup stops it with SIGTERM and, as a last resort, kills it and
// runs fusermount3 -uz.
func startMount(t testing.TB, data, mnt string, extra ...string) *mountProc {
	t.Helper()
	return startMountEnv(t, nil, data, mnt, extra...)
}

// startMountEnv is startMount with env added to the mount's environment.
func startMountEnv(t testing.TB, env []string, data, mnt string, extra ...string) *mountProc {
	t.Helper()
	args := append([]string{"mount", "--data", data}, extra...)
	return startMountArgs(t, env, append(args, mnt), data, mnt)
}

// startMountArgs is startMountEnv with the whole command line given
// (args: the binary's arguments, a mount of data at mnt).
func startMountArgs(t testing.TB, env, args []string, data, mnt string) *mountProc {
	t.Helper()
	testfuse.Require(t)
	m := &mountProc{mnt: mnt, data: data, done: make(chan struct{})}
	m.cmd = exec.Command(mnemofsBin, args...)
	if env != nil {
		m.cmd.Env = append(os.Environ(), env...)
	}
	withBackend(t, m.cmd, data)
	m.cmd.Stderr = &m.stderr
	pipe, err := m.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pipe)
		once := false
		for sc.Scan() {
			fmt.Fprintln(&m.stdout, sc.Text())
			if !once && strings.HasPrefix(sc.Text(), "mnemofs: mounted") {
				once = true
				close(ready)
			}
		}
		m.cmd.Wait()
		m.state = m.cmd.ProcessState
		close(m.done)
	}()
	t.Cleanup(func() { m.cleanup(t) })
	go func() {
		select {
		case <-m.done:
		case <-time.After(mountWatchdog):
			m.hung.Store(true)
			m.cmd.Process.Signal(syscall.SIGQUIT)
		}
	}()
	select {
	case <-ready:
	case <-m.done:
		t.Fatalf("mnemofs mount %s exited before it was ready (%v)\nstdout: %s\nstderr: %s", mnt, m.state, m.stdout.String(), m.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("mnemofs mount %s not ready after 30 s\nstdout: %s\nstderr: %s", mnt, m.stdout.String(), m.stderr.String())
	}
	if !isMounted(mnt) {
		t.Fatalf("mnemofs printed its ready line but %s is not in /proc/mounts", mnt)
	}
	return m
}

func (m *mountProc) exited() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

func (m *mountProc) waitExit(d time.Duration) bool {
	select {
	case <-m.done:
		return true
	case <-time.After(d):
		return false
	}
}

// goroutines returns the goroutine dump the mount printed on SIGQUIT,
// keeping only the goroutines in mnemofs code.
func (m *mountProc) goroutines() string {
	var keep []string
	for _, g := range strings.Split(m.stderr.String(), "\n\n") {
		if strings.Contains(g, "github.com/mnemofs/") {
			keep = append(keep, g)
		}
	}
	return strings.Join(keep, "\n\n")
}

// dump sends SIGQUIT (goroutine dump, then exit) and returns the dump.
func (m *mountProc) dump() string {
	m.cmd.Process.Signal(syscall.SIGQUIT)
	m.waitExit(10 * time.Second)
	return m.goroutines()
}

func (m *mountProc) cleanup(t testing.TB) {
	if m.hung.Load() {
		m.waitExit(10 * time.Second)
		t.Errorf("mount at %s still running after %v: assumed hung; its goroutines:\n%s", m.mnt, mountWatchdog, m.goroutines())
	}
	if !m.exited() {
		m.cmd.Process.Signal(syscall.SIGTERM)
		if !m.waitExit(15 * time.Second) {
			t.Errorf("mnemofs mount %s ignored SIGTERM for 15 s; killing it", m.mnt)
			m.cmd.Process.Kill()
			m.waitExit(5 * time.Second)
		}
	}
	if isMounted(m.mnt) {
		exec.Command("fusermount3", "-uz", m.mnt).Run()
	}
}

// stop sends sig (SIGTERM or SIGINT) and checks a clean exit and unmount.
func (m *mountProc) stop(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := m.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal mount process: %v", err)
	}
	if !m.waitExit(20 * time.Second) {
		t.Fatalf("mnemofs mount %s did not exit within 20 s of %v\nstderr: %s", m.mnt, sig, m.stderr.String())
	}
	if !m.state.Success() {
		t.Errorf("mnemofs mount exited with %v after %v, want status 0\nstdout: %s\nstderr: %s", m.state, sig, m.stdout.String(), m.stderr.String())
	}
	if isMounted(m.mnt) {
		t.Errorf("%s is still in /proc/mounts after the mount process exited", m.mnt)
	}
}

// isMounted reports whether mnt is a mountpoint in /proc/mounts.
func isMounted(mnt string) bool {
	b, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return false
	}
	unesc := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && unesc.Replace(f[1]) == mnt {
			return true
		}
	}
	return false
}

// lazyUnmount runs fusermount3 -uz, ignoring errors (for cleanups).
func lazyUnmount(mnt string) { exec.Command("fusermount3", "-uz", mnt).Run() }

func getxattr(p, name string) (string, error) {
	v := make([]byte, 4096)
	n, err := syscall.Getxattr(p, name, v)
	if err != nil {
		return "", err
	}
	return string(v[:n]), nil
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// oneErrorLine checks a failed command printed one "mnemofs:" line, exit 1.
func oneErrorLine(t testing.TB, r result, contains ...string) {
	t.Helper()
	if r.code != 1 {
		t.Errorf("exit status %d, want 1\n%s", r.code, r)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "mnemofs: ") {
		t.Errorf("stderr should be one line starting \"mnemofs: \", got %q", r.stderr)
	}
	for _, c := range contains {
		if !strings.Contains(r.stderr, c) {
			t.Errorf("error line %q does not mention %q", strings.TrimSpace(r.stderr), c)
		}
	}
}

// moreParallel runs twice as many tests at once as there are CPUs, unless
// -test.parallel was given: these tests spend most of their time waiting
// for other processes (a mount starting, a kill, a remount), not on a CPU.
func moreParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
}
