// Package testfuse holds what tests that mount a real filesystem share.
package testfuse

import (
	"os"
	"testing"
)

// Require skips the test when FUSE is missing, or fails it when
// MNEMOFS_REQUIRE_FUSE=1 (CI), so that FUSE tests run rather than skip there.
func Require(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("MNEMOFS_REQUIRE_FUSE") == "1" {
			t.Fatalf("FUSE required (MNEMOFS_REQUIRE_FUSE=1) but /dev/fuse is missing: %v", err)
		}
		t.Skip("no /dev/fuse")
	}
}
