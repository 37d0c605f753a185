// Package testfuse holds what tests that mount a real filesystem share.
package testfuse

import (
	"os"
	"testing"

	"github.com/mnemofs/mnemofs/internal/testenv"
)

// Require skips the test when FUSE is missing, or fails it when
// MNEMOFS_REQUIRE_FUSE=1 (CI), so that FUSE tests run rather than skip there.
func Require(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		testenv.Missing(t, "no /dev/fuse: FUSE tests need it (modprobe fuse, or a container run with --device /dev/fuse)")
	}
}
