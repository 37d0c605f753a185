package fusefs

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/internal/testetcd"
)

// The backend under the tests: Badger in the test's data directory, or,
// with MNEMOFS_TEST_BACKEND=etcd, a real etcd server (internal/testetcd)
// with one prefix per data directory, so that a test that mounts the same
// data directory again finds its store. Passthrough and blob files do not
// apply on etcd (as with the binary), so tests of them skip there.

func onEtcd() bool { return os.Getenv("MNEMOFS_TEST_BACKEND") == "etcd" }

func TestMain(m *testing.M) {
	code := m.Run()
	testetcd.StopShared()
	os.Exit(code)
}

// testKV opens the store of data, closed by the caller (testFS.unmount).
func testKV(t testing.TB, data string) backend.KV {
	t.Helper()
	if !onEtcd() {
		kv, err := backend.OpenBadger(filepath.Join(data, "db"), backend.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return kv
	}
	sum := sha256.Sum256([]byte(data))
	kv, err := backend.OpenEtcd(backend.EtcdOptions{Endpoints: testetcd.Shared(t),
		Prefix: "mnemofs-fusefs/" + hex.EncodeToString(sum[:8])})
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// needLocalFiles skips a test of what only a local store has (blob files,
// passthrough) when the tests run on etcd.
func needLocalFiles(t testing.TB) {
	t.Helper()
	if onEtcd() {
		t.Skip("blob files and passthrough are local to Badger stores")
	}
}
