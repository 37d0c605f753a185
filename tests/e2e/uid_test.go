package e2e

// Running the binary as another user (the tests run as root).

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// nobody is the uid (and gid) the tests use for another local user.
const nobody = 65534

// binForAnyone returns the binary after letting any user run it
// (TestMain builds it in a directory only root can enter).
func binForAnyone(t testing.TB) string {
	t.Helper()
	if err := os.Chmod(filepath.Dir(mnemofsBin), 0o755); err != nil {
		t.Fatal(err)
	}
	return mnemofsBin
}

// requireRoot skips a test that needs to switch users.
func requireRoot(t testing.TB) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run a process as another user")
	}
}

// runAs runs the binary as uid (gid the same) with the given ambient
// capabilities, to completion.
func runAs(t testing.TB, uid uint32, caps []uintptr, args ...string) result {
	t.Helper()
	requireRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binForAnyone(t), args...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}, AmbientCaps: caps}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{out.String(), errb.String(), 0}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("mnemofs %q as uid %d timed out\n%s", args, uid, r)
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("mnemofs %q as uid %d: %v", args, uid, err)
	}
	return r
}

// dirFor makes a directory under a fresh temp dir owned by uid, reachable
// by it (t.TempDir's parents are root's and private).
func dirFor(t testing.TB, uid int) string {
	t.Helper()
	base, err := os.MkdirTemp("", "mnemofs-uid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(base, "d")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(d, uid, uid); err != nil {
		t.Fatal(err)
	}
	return d
}
