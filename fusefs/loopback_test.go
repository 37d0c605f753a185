package fusefs

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mnemofs/mnemofs/internal/testfuse"
)

// The reference for disk-like behaviour: go-fuse's loopback filesystem
// over a directory on the test's disk, mounted as its example/loopback
// and scripts/fsbench mount it (1 s entry and attribute timeouts, modes
// as they are). A check that passes there and fails on the mount is a
// mnemofs bug; one that fails on both is a limit of FUSE (or of the
// check), which the test then says.

// side is one mount a check runs on.
type side struct {
	name string
	dir  string  // a directory to work in
	tf   *testFS // nil for the loopback
	orig string  // the loopback's backing directory ("" for mnemofs)
}

// loopbackMount mounts the loopback over a fresh directory and returns
// the mountpoint; the test's cleanup unmounts it.
func loopbackMount(t testing.TB) (mnt, orig string) {
	t.Helper()
	orig = t.TempDir()
	return loopbackOver(t, orig), orig
}

// loopbackOver mounts a loopback over orig and returns the mountpoint.
func loopbackOver(t testing.TB, orig string) string {
	t.Helper()
	return loopbackWith(t, orig, 0)
}

// loopbackWith is loopbackOver with the kernel capabilities disabled
// refuses (fuse.CAP_PASSTHROUGH: every read and write through the daemon,
// as scripts/bench-fs.sh's loopback-nopt).
func loopbackWith(t testing.TB, orig string, disabled uint64) string {
	t.Helper()
	testfuse.Require(t)
	mnt := t.TempDir()
	root, err := fs.NewLoopbackRoot(orig)
	if err != nil {
		t.Fatal(err)
	}
	sec := time.Second
	srv, err := fs.Mount(mnt, root, &fs.Options{
		AttrTimeout:     &sec,
		EntryTimeout:    &sec,
		NullPermissions: true,
		MountOptions: fuse.MountOptions{
			DirectMount: os.Geteuid() == 0,
			FsName:      orig,
			Name:        "loopback",
			Debug:       os.Getenv("MNEMOFS_FUSE_DEBUG") != "",

			DisabledCapabilities: disabled,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var err error
		for try := 0; try < 50; try++ {
			if err = srv.Unmount(); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			if out, lerr := exec.Command("fusermount3", "-uz", mnt).CombinedOutput(); lerr != nil {
				panic(fmt.Sprintf("unmount loopback: %v; lazy unmount: %v %s", err, lerr, out))
			}
		}
		// A descriptor a failed test left open keeps a lazily unmounted
		// loopback's connection: do not wait for it forever.
		done := make(chan struct{})
		go func() { srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("loopback at %s still busy 10 s after its unmount", mnt)
		}
	})
	return mnt
}

// sides returns the loopback and a fresh mnemofs mount (its working/
// tree, where the policy keeps no versions), to run one check on each.
func sides(t *testing.T) []side {
	t.Helper()
	lo, orig := loopbackMount(t)
	tf := testMount(t)
	return []side{{name: "loopback", dir: lo, orig: orig}, {name: "mnemofs", dir: tf.path("working"), tf: tf}}
}
