package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// appendOnce appends line to p with one open-write-close, returning the
// first error (close included: it is where a commit fails).
func appendOnce(p, line string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// TestTeamOutage: every etcd member down. Writes fail with EIO after a
// bounded wait (and at once after the first), what was read before is
// still served, the mount logs one line about it, nothing acknowledged is
// lost, failed writes never show, and when etcd is back the mount
// recovers by itself.
func TestTeamOutage(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, 1)
	a := tm.host(t)
	notes := filepath.Join(a.mnt, "semantic", "notes.md")
	check(t, os.WriteFile(notes, []byte("acknowledged before the outage\n"), 0o644))
	if got, err := os.ReadFile(notes); err != nil || string(got) != "acknowledged before the outage\n" {
		t.Fatalf("read back %q, %v", got, err)
	}
	tm.c.Kill(0)

	start := time.Now()
	err := appendOnce(notes, "written during the outage\n")
	first := time.Since(start)
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("an append with etcd down: %v, want EIO", err)
	}
	if first > 20*time.Second {
		t.Errorf("the first failing write took %v (bounded by the request timeout and the fence)", first)
	}
	start = time.Now()
	err = os.WriteFile(filepath.Join(a.mnt, "semantic", "new.md"), []byte("x\n"), 0o644)
	if !errors.Is(err, syscall.EIO) || time.Since(start) > time.Second {
		t.Errorf("a create once etcd is known down: %v after %v, want EIO at once", err, time.Since(start))
	}
	got, err := os.ReadFile(notes)
	if err != nil || string(got) != "acknowledged before the outage\n" {
		t.Errorf("during the outage the cached file reads %q, %v; want what was acknowledged, and only that", got, err)
	}
	t.Logf("first failing write after %v", first.Round(time.Millisecond))

	check(t, tm.c.Start(0))
	var back time.Duration
	start = time.Now()
	for {
		if err = appendOnce(notes, "after the outage\n"); err == nil {
			back = time.Since(start)
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("writes still fail 30 s after etcd came back: %v\n%s", err, a.stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("writes go through %v after etcd was started again", back.Round(time.Millisecond))
	want := "acknowledged before the outage\nafter the outage\n"
	if got, err := os.ReadFile(notes); err != nil || string(got) != want {
		t.Errorf("after the outage: %q, %v; want %q", got, err, want)
	}
	// A host that mounts now reads the same.
	b := tm.host(t)
	if got, err := os.ReadFile(filepath.Join(b.mnt, "semantic", "notes.md")); err != nil || string(got) != want {
		t.Errorf("a second host reads %q, %v; want %q", got, err, want)
	}
	log := a.stderr.String()
	if n := strings.Count(log, "etcd at "); n != 1 {
		t.Errorf("the mount said %d times that etcd does not answer, want once:\n%s", n, log)
	}
	if !strings.Contains(log, "etcd answers again") {
		t.Errorf("the mount did not say etcd answers again:\n%s", log)
	}
	fsckClean(t, a.data, "after the outage")
}

// TestTeamLocksArePerHost shows what the README says: flock locks hold
// on one host (two open files of it exclude each other), not across
// hosts. (fcntl locks, kept by the kernel per mount too, are not tried
// here: one process's POSIX locks never conflict with each other.)
func TestTeamLocksArePerHost(t *testing.T) {
	t.Parallel()
	tm := newTeam(t, 1)
	a, b := tm.host(t), tm.host(t)
	pa := filepath.Join(a.mnt, "working", "lock.md")
	check(t, os.WriteFile(pa, []byte("locked\n"), 0o644))
	pb := filepath.Join(b.mnt, "working", "lock.md")
	within(t, time.Second, "the file on B", func() bool { return exists(pb) })
	open := func(p string) *os.File {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		check(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	fa, fa2, fb := open(pa), open(pa), open(pb)
	check(t, syscall.Flock(int(fa.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	if err := syscall.Flock(int(fa2.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("a second flock on the same host: %v, want EWOULDBLOCK", err)
	}
	if err := syscall.Flock(int(fb.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("flock on the other host: %v; the README says locks are per host", err)
	}
}
