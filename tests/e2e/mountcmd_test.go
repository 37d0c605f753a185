package e2e

// The mount command's life: a second mount refused, bad mountpoints,
// `mnemofs unmount`, signals.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSecondMountRefused(t *testing.T) {
	t.Parallel()
	data, mnt1, mnt2 := t.TempDir(), t.TempDir(), t.TempDir()
	startMount(t, data, mnt1)
	r := runMnemofs(t, "mount", "--data", data, mnt2)
	if isMounted(mnt2) {
		lazyUnmount(mnt2)
		t.Fatalf("a second mount of the same data dir succeeded")
	}
	oneErrorLine(t, r, mnt1, "already mounted")
	// The first mount is unaffected.
	check(t, os.WriteFile(filepath.Join(mnt1, "working/still.txt"), []byte("ok"), 0o644))
	if b, err := os.ReadFile(filepath.Join(mnt1, "working/still.txt")); err != nil || string(b) != "ok" {
		t.Errorf("first mount broken after refused second mount: %q, %v", b, err)
	}
}

func TestMountpointErrors(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	notEmpty, inside := filepath.Join(tmp, "full"), filepath.Join(data, "mnt")
	check(t, os.MkdirAll(notEmpty, 0o755))
	check(t, os.WriteFile(filepath.Join(notEmpty, "x"), nil, 0o644))
	check(t, os.MkdirAll(inside, 0o755))
	for _, c := range []struct {
		name, mnt string
		want      []string
	}{
		{"missing", filepath.Join(tmp, "nope"), []string{filepath.Join(tmp, "nope"), "does not exist"}},
		{"not-empty", notEmpty, []string{notEmpty, "not empty"}},
		{"inside-data", inside, []string{inside, "inside the data directory"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runMnemofs(t, "mount", "--data", data, c.mnt)
			if isMounted(c.mnt) {
				lazyUnmount(c.mnt)
				t.Fatalf("mounted on a bad mountpoint")
			}
			if strings.Contains(r.stdout, "mounted") {
				t.Errorf("printed a ready line: %q", r.stdout)
			}
			oneErrorLine(t, r, c.want...)
		})
	}
}

func TestUnmountCommand(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	files := map[string]string{}
	// Several cycles: the reply to "unmount" races with the mount closing.
	for i := range 15 {
		m := startMount(t, data, mnt)
		name := fmt.Sprintf("working/u%02d.txt", i)
		check(t, os.WriteFile(filepath.Join(mnt, name), []byte(name), 0o644))
		files[name] = name
		if r := runMnemofs(t, "unmount", mnt); r.code != 0 {
			t.Errorf("cycle %d: mnemofs unmount of a live mount failed:\n%s", i, r)
		}
		if isMounted(mnt) {
			t.Fatalf("%s still mounted after 'mnemofs unmount' returned", mnt)
		}
		if !m.waitExit(10 * time.Second) {
			t.Fatalf("mount process still running 10 s after 'mnemofs unmount'")
		}
		if !m.state.Success() {
			t.Errorf("mount process exit %v after 'mnemofs unmount'\nstderr: %s", m.state, m.stderr.String())
		}
	}
	r := runMnemofs(t, "unmount", mnt)
	oneErrorLine(t, r, mnt)
	// The store is closed: a local command can open it.
	checkStatsFsck(t, data, "after unmount command", files)
}

func TestSignalsUnmountCleanly(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			data, mnt := t.TempDir(), t.TempDir()
			m := startMount(t, data, mnt)
			check(t, os.WriteFile(filepath.Join(mnt, "working/s.txt"), []byte(sig.String()), 0o644))
			m.stop(t, sig)
			if !strings.Contains(m.stdout.String(), "unmounted") {
				t.Errorf("no 'unmounted' line: %q", m.stdout.String())
			}
			startMount(t, data, mnt)
			if b, err := os.ReadFile(filepath.Join(mnt, "working/s.txt")); err != nil || string(b) != sig.String() {
				t.Errorf("after %v and remount: %q, %v", sig, b, err)
			}
		})
	}
}
