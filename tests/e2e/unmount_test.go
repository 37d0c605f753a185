package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bindMount mounts dir at target (--bind), undone at the end of the test.
func bindMount(t *testing.T, dir, target string) {
	t.Helper()
	if out, err := exec.Command("mount", "--bind", dir, target).CombinedOutput(); err != nil {
		t.Fatalf("mount --bind %s %s: %v %s", dir, target, err, out)
	}
	t.Cleanup(func() {
		if isMounted(target) {
			exec.Command("umount", "-l", target).Run()
		}
	})
}

// TestUnmountSaysWhatHoldsIt: 'mnemofs unmount' of a mount that a bind
// mount, a process's working directory or an open file holds says which,
// and how to release it, and leaves the mount as it was (it used to wait
// forever for the store to close behind a bind mount); once they are
// released it unmounts. A mount stopped by a signal behind a bind mount
// says the same and ends once the bind mount goes.
func TestUnmountSaysWhatHoldsIt(t *testing.T) {
	t.Parallel()
	requireRoot(t) // mount --bind
	data, mnt, bind := t.TempDir(), t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	check(t, os.WriteFile(filepath.Join(mnt, "semantic/a.md"), []byte("held\n"), 0o644))

	bindMount(t, filepath.Join(mnt, "semantic"), bind)
	r := runMnemofs(t, "unmount", mnt)
	oneErrorLine(t, r, "also mounted at "+bind, "umount "+bind, "mnemofs unmount "+mnt)
	if !isMounted(mnt) || m.exited() {
		t.Fatalf("the refused unmount changed the mount (mounted %v, process exited %v)", isMounted(mnt), m.exited())
	}
	check(t, os.WriteFile(filepath.Join(mnt, "semantic/b.md"), []byte("still mounted\n"), 0o644))
	check(t, syscall.Unmount(bind, 0))

	sleeper := exec.Command("sleep", "60")
	sleeper.Dir = filepath.Join(mnt, "working")
	check(t, sleeper.Start())
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	f, err := os.Open(filepath.Join(mnt, "semantic/a.md"))
	check(t, err)
	r = runMnemofs(t, "unmount", mnt)
	oneErrorLine(t, r, fmt.Sprintf("process %d (sleep) has its working directory in %s", sleeper.Process.Pid, filepath.Join(mnt, "working")),
		fmt.Sprintf("process %d", os.Getpid()), filepath.Join(mnt, "semantic/a.md")+" open")
	if !isMounted(mnt) {
		t.Fatal("the refused unmount unmounted")
	}
	f.Close()
	sleeper.Process.Kill()
	sleeper.Wait()
	if r := runMnemofs(t, "unmount", mnt); r.code != 0 {
		t.Fatalf("unmount once released: %s", r)
	}
	if !m.waitExit(20 * time.Second) {
		t.Fatal("the mount process did not end after its unmount")
	}

	// Stopped by a signal behind a bind mount: it says why it lingers,
	// and ends cleanly once the bind mount goes.
	m = startMount(t, data, mnt)
	bindMount(t, mnt, bind)
	check(t, m.cmd.Process.Signal(syscall.SIGINT))
	said := false
	for i := 0; i < 100 && !said; i++ {
		said = strings.Contains(m.stderr.String(), "also mounted at "+bind)
		time.Sleep(100 * time.Millisecond)
	}
	if !said || m.exited() {
		t.Fatalf("behind a bind mount, a stopped mount said %q (exited %v)", m.stderr.String(), m.exited())
	}
	check(t, syscall.Unmount(bind, 0))
	if !m.waitExit(20*time.Second) || !m.state.Success() {
		t.Fatalf("the mount did not end cleanly once the bind mount went: %v\n%s", m.state, m.stderr.String())
	}
	if r := runMnemofs(t, "stats", "--data", data); r.code != 0 || !strings.Contains(r.stdout, "memories") {
		t.Errorf("the store, closed, opens: %s", r)
	}
}
