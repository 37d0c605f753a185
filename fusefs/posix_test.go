package fusefs

import (
	"testing"

	"github.com/hanwen/go-fuse/v2/posixtest"

	"github.com/mnemofs/mnemofs/store"
)

// TestPosix runs go-fuse's POSIX checks against a real mount, inside a
// working tree so the checks see a plain directory.
func TestPosix(t *testing.T) {
	t.Parallel()
	for name, fn := range posixtest.All {
		if name == "FcntlFlockLocksFile" {
			// Expects two fds of one process to conflict on a POSIX
			// lock; POSIX locks are per process, so ext4 and tmpfs
			// fail it too. Locks here are the kernel's own.
			continue
		}
		t.Run(name, func(t *testing.T) {
			// Default options: the checks' files are seconds old, so
			// removing them deletes them (nlink 0) as POSIX expects.
			tf := mountAt(t, t.TempDir(), store.Options{})
			dir := tf.path("working")
			fn(t, dir)
		})
	}
}
