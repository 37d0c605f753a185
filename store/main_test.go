package store

import (
	"os"
	"testing"

	"github.com/mnemofs/mnemofs/internal/testetcd"
)

// TestMain stops the shared etcd server some tests start (hosts_test.go,
// stage_test.go, release_race_test.go) and removes its directory.
func TestMain(m *testing.M) {
	code := m.Run()
	testetcd.StopShared()
	os.Exit(code)
}
