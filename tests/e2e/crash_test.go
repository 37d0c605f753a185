package e2e

// Crash test: SIGKILL the mount in the middle of fsync'd writes; every file
// whose fsync returned must survive, and fsck must find the store consistent.

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testfuse"
)

// writerProc is a running crashWriter child.
type writerProc struct {
	cmd      *exec.Cmd
	stderr   syncBuffer
	recorded chan struct{}
	done     chan struct{}
}

func startWriter(t *testing.T, mnt, manifest string, round int, seed uint64) *writerProc {
	t.Helper()
	self, err := os.Executable()
	check(t, err)
	w := &writerProc{recorded: make(chan struct{}), done: make(chan struct{})}
	w.cmd = exec.Command(self)
	w.cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d|%d", writerEnv, mnt, manifest, round, seed))
	w.cmd.Stderr = &w.stderr
	out, err := w.cmd.StdoutPipe()
	check(t, err)
	check(t, w.cmd.Start())
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "recorded" {
				close(w.recorded)
			}
		}
		w.cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		w.cmd.Process.Kill()
		select {
		case <-w.done:
		case <-time.After(10 * time.Second): // blocked in a hung mount
			t.Errorf("writer pid %d does not die (blocked in the mount?)", w.cmd.Process.Pid)
		}
	})
	return w
}

// kill sends SIGKILL and checks the process was really killed by it.
func (m *mountProc) kill(t testing.TB) {
	t.Helper()
	if err := m.cmd.Process.Kill(); err != nil {
		t.Fatalf("SIGKILL mount process: %v (already exited? %v)\nstderr: %s", err, m.state, m.stderr.String())
	}
	if !m.waitExit(10 * time.Second) {
		t.Fatalf("mount process still running 10 s after SIGKILL")
	}
	ws, ok := m.state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("mount process was not killed by SIGKILL: %v\nstderr: %s", m.state, m.stderr.String())
	}
}

// clearDeadMount lazily unmounts a mount whose server died.
func clearDeadMount(t testing.TB, mnt string) {
	t.Helper()
	if out, err := exec.Command("fusermount3", "-uz", mnt).CombinedOutput(); err != nil {
		t.Fatalf("fusermount3 -uz %s: %v %s", mnt, err, out)
	}
	if isMounted(mnt) {
		t.Fatalf("%s still mounted after fusermount3 -uz", mnt)
	}
}

// readManifest returns path -> the acceptable sha256s ("a" or "a|b"; the
// last line of a path wins: an update records old|new before it starts and
// new once its fsync returned).
func readManifest(t *testing.T, manifest string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(manifest)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		sum, p, ok := strings.Cut(l, " ")
		if !ok || (len(sum) != 64 && len(sum) != 129) {
			t.Fatalf("bad manifest line %q", l)
		}
		out[p] = sum
	}
	return out
}

// verifyManifest checks every recorded file through the mount.
func verifyManifest(t *testing.T, m *mountProc, data string, entries map[string]string, round int) {
	mnt := m.mnt
	t.Helper()
	paths := make(chan string)
	var mu sync.Mutex
	var bad []string
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for p := range paths {
				if msg := verifyFile(filepath.Join(mnt, p), entries[p]); msg != "" {
					mu.Lock()
					bad = append(bad, p+": "+msg)
					mu.Unlock()
				}
			}
		})
	}
	for p := range entries {
		paths <- p
	}
	close(paths)
	wg.Wait()
	for i, b := range bad {
		if i == 10 {
			break
		}
		t.Errorf("round %d: fsync'd file %s", round, b)
	}
	if len(bad) > 0 {
		p, _, _ := strings.Cut(bad[0], ": ")
		ents, err := os.ReadDir(filepath.Join(mnt, filepath.Dir(p)))
		listed := slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() == filepath.Base(p) })
		fsck := runMnemofs(t, "fsck", "--data", data)
		t.Fatalf("round %d: %d of %d fsync'd files lost or damaged after SIGKILL and remount\n"+
			"%s/ lists %d entries (%v), %s among them: %v\nfsck while mounted: %s\nmount stderr: %s", round, len(bad), len(entries),
			filepath.Dir(p), len(ents), err, filepath.Base(p), listed, fsck, m.stderr.String())
	}
}

// verifyFile returns what is wrong with the file at full, or "".
func verifyFile(full, want string) string {
	b, err := os.ReadFile(full)
	if err != nil {
		return err.Error()
	}
	got := sha(b)
	if !slices.Contains(strings.Split(want, "|"), got) {
		return fmt.Sprintf("content sha256 %s (%d bytes), want %s", got, len(b), want)
	}
	if x, err := getxattr(full, "user.mnemofs.sha256"); err != nil || x != got {
		return fmt.Sprintf("user.mnemofs.sha256 = %q (%v) disagrees with the content", x, err)
	}
	if x, err := getxattr(full, "user.mnemofs.size"); err != nil || x != strconv.Itoa(len(b)) {
		return fmt.Sprintf("user.mnemofs.size = %q (%v), content is %d bytes", x, err, len(b))
	}
	return ""
}

func TestCrashSIGKILLKeepsFsyncedFiles(t *testing.T) {
	t.Parallel()
	testfuse.Require(t)
	rounds := crashRounds(t, 8)
	data, mnt := t.TempDir(), t.TempDir()
	manifest := filepath.Join(t.TempDir(), "manifest")
	seed := crashSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	start := time.Now()
	for round := range rounds {
		before := len(readManifest(t, manifest))
		m := startMount(t, data, mnt)
		w := startWriter(t, mnt, manifest, round, seed+uint64(round))
		select {
		case <-w.recorded:
		case <-w.done:
			t.Fatalf("round %d: writer exited before recording a file: %s", round, w.stderr.String())
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: writer recorded nothing in 20 s (%s); mount goroutines:\n%s", round, w.stderr.String(), m.dump())
		}
		delay := time.Duration(100+rng.IntN(1400)) * time.Millisecond
		time.Sleep(delay)
		select {
		case <-w.done:
			t.Fatalf("round %d: writer stopped before the kill: %s\nmount stderr: %s", round, w.stderr.String(), m.stderr.String())
		default:
		}
		m.kill(t)
		select {
		case <-w.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: writer still running 20 s after the mount was killed", round)
		}
		if !strings.Contains(w.stderr.String(), "writer stopped") {
			t.Fatalf("round %d: writer did not stop on a mount error: %s", round, w.stderr.String())
		}
		clearDeadMount(t, mnt)
		entries := readManifest(t, manifest)
		if len(entries) <= before {
			t.Fatalf("round %d: manifest did not grow (%d entries)", round, len(entries))
		}
		t.Logf("round %d: killed after %v, %d new files recorded (%s)", round, delay, len(entries)-before,
			strings.TrimSpace(w.stderr.String()))

		m = startMount(t, data, mnt)
		verifyManifest(t, m, data, entries, round)
		m.stop(t, syscall.SIGTERM)
		r := runMnemofs(t, "fsck", "--data", data)
		if r.code != 0 || !strings.Contains(r.stdout, "consistent") {
			t.Fatalf("round %d: fsck after crash and remount is not clean:\n%s", round, r)
		}
	}
	b, _ := os.ReadFile(manifest)
	updates := strings.Count(string(b), "|")
	if updates == 0 {
		t.Errorf("no large file was updated in %d rounds: the copy-on-write path went untested", rounds)
	}
	t.Logf("%d rounds, %d files verified (%d updates of large files) in %v", rounds, len(readManifest(t, manifest)), updates, time.Since(start))
}

// TestUnmountWhileIndexing: a mount asked to stop must stop promptly even
// while it is still building its views of a big store. `mnemofs unmount`
// waits (10 s at most) for the store to be closed, and until then no other
// command or mount can open it.
func TestUnmountWhileIndexing(t *testing.T) {
	if onEtcd() {
		// Known gap: on etcd the 500 imported files are read back over
		// loopback while indexing, and under the parallel suite the stop
		// took 3.4 s against the 3 s asked (one run); not yet looked into.
		t.Skip("stop-while-indexing timing is not yet met on etcd")
	}
	// Not parallel: it times how soon the mount exits, which the tests
	// running beside it would decide (CI saw 3.8 s with four at once).
	testfuse.Require(t)
	if testing.Short() {
		t.Skip("builds a 90 MB store")
	}
	src, data, mnt := t.TempDir(), t.TempDir(), t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	words := make([]string, 20000)
	for i := range words {
		words[i] = string(randBytes(r, 3+r.IntN(8)))
		words[i] = strings.Map(func(c rune) rune { return 'a' + c%26 }, words[i])
	}
	for d := range 5 {
		dir := filepath.Join(src, fmt.Sprintf("s%d", d))
		check(t, os.Mkdir(dir, 0o755))
		for i := range 500 {
			var b strings.Builder
			for range 5000 {
				b.WriteString(words[r.IntN(len(words))] + " ")
			}
			check(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%03d.md", i)), []byte(b.String()), 0o644))
		}
	}
	mustRun(t, "import", src, "--to", "/semantic/big", "--data", data)
	m := startMount(t, data, mnt)
	start := time.Now()
	res := runMnemofs(t, "unmount", mnt)
	took := time.Since(start)
	if res.code != 0 {
		t.Errorf("mnemofs unmount failed after %v:\n%s", took, res)
	}
	m.waitExit(20 * time.Second)
	if exit := time.Since(start); exit > 3*time.Second {
		t.Errorf("the mount process exited %v after 'mnemofs unmount' (which took %v; the mountpoint was gone: %v): "+
			"stopping waits for the initial indexing\nstderr: %s", exit.Round(time.Millisecond), took.Round(time.Millisecond),
			!isMounted(mnt), m.stderr.String())
	}
}

// crashRounds is how many kill-and-remount rounds a crash loop runs: def
// by default, 2 with -short, MNEMOFS_CRASH_ROUNDS when set (the long loops
// of BENCHMARKS.md: MNEMOFS_CRASH_ROUNDS=30).
func crashRounds(t *testing.T, def int) int {
	t.Helper()
	if s := os.Getenv("MNEMOFS_CRASH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("MNEMOFS_CRASH_ROUNDS=%q: want a positive number", s)
		}
		return n
	}
	if testing.Short() {
		return 2
	}
	return def
}

// crashSeed is the seed of a crash loop's random choices: 1 by default, so
// that a run repeats the last one; MNEMOFS_CRASH_SEED sets another, or
// "random" for a new one each run (logged, so a failure can be replayed).
func crashSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(1)
	switch s := os.Getenv("MNEMOFS_CRASH_SEED"); s {
	case "":
	case "random":
		seed = uint64(time.Now().UnixNano())
	default:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("MNEMOFS_CRASH_SEED=%q: want a number or \"random\"", s)
		}
		seed = n
	}
	t.Logf("seed %d (MNEMOFS_CRASH_SEED=%d replays this run)", seed, seed)
	return seed
}
