package e2e

import (
	"bytes"
	"crypto/rand"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestEncryptionAtRest: with a key file, a canary written through the mount
// never appears in the data dir; a wrong or missing key is one clear error
// and changes nothing; the right key opens the store.
func TestEncryptionAtRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, mnt, key, wrong := filepath.Join(dir, "data"), filepath.Join(dir, "mnt"), filepath.Join(dir, "key"), filepath.Join(dir, "wrong")
	for _, p := range []string{key, wrong} {
		b := make([]byte, 32)
		rand.Read(b)
		check(t, os.WriteFile(p, b, 0o600))
	}
	check(t, os.Mkdir(mnt, 0o755))
	canary := "CANARY-" + strings.Repeat("q7x", 20)
	m := startMount(t, data, mnt, "--encryption-key-file", key)
	check(t, os.WriteFile(filepath.Join(mnt, "semantic", "secret.md"), []byte(canary+"\n"), 0o644))
	check(t, os.WriteFile(filepath.Join(mnt, "episodic", "big.bin"), bytes.Repeat([]byte(canary), 4096), 0o644))
	m.stop(t, syscall.SIGTERM)

	found := false
	check(t, filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte("CANARY-")) {
			found = true
			t.Errorf("canary in plain text in %s", p)
		}
		return err
	}))
	if onEtcd() {
		// The store is in etcd: it must not see the canary either.
		dump := etcdDump(t, data)
		if bytes.Contains(dump, []byte("CANARY-")) {
			t.Fatal("canary in plain text in etcd")
		}
		if !bytes.Contains(dump, []byte("/k/")) {
			t.Fatal("nothing of the store in etcd: the check above proves nothing")
		}
	}
	if found {
		return
	}
	before := snapshot(t, data)
	oneErrorLine(t, runMnemofs(t, "stats", "--data", data, "--encryption-key-file", wrong), "encryption key", "nothing was changed")
	oneErrorLine(t, runMnemofs(t, "stats", "--data", data), "encryption key")
	compareTrees(t, "data dir after refused keys", before, snapshot(t, data))
	r := mustRun(t, "stats", "--data", data, "--encryption-key-file", key)
	if !strings.Contains(r.stdout, "memories: 2") {
		t.Fatalf("stats with the right key:\n%s", r)
	}
}
