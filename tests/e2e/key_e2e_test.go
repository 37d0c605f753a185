package e2e

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"
	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/fusefs"
	"github.com/mnemofs/mnemofs/store"
)

// kdfFile is the file in the data dir holding the passphrase KDF's salt and
// parameters (the binary's cmd/mnemofs/key.go names it alike).
const kdfFile = "kdf.json"

// kdfParams is kdf.json as SECURITY.md documents it, read the way another
// tool would read it.
type kdfParams struct {
	Algorithm string `json:"algorithm"`
	Version   int    `json:"version"`
	Time      uint32 `json:"time"`
	MemoryKiB uint32 `json:"memory_kib"`
	Threads   uint8  `json:"threads"`
	KeyLen    uint32 `json:"key_len"`
	Salt      []byte `json:"salt"` // base64
}

// opensWith reports whether the Badger store in data opens with key.
func opensWith(t *testing.T, data string, key []byte) bool {
	t.Helper()
	kv, err := backend.OpenBadger(filepath.Join(data, "db"), backend.Options{EncryptionKey: key})
	if errors.Is(err, backend.ErrBadKey) {
		return false
	}
	check(t, err)
	check(t, kv.Close())
	return true
}

func randomKey(t *testing.T) []byte {
	k := make([]byte, 32)
	_, err := rand.Read(k)
	check(t, err)
	return k
}

func writeKey(t *testing.T, path string, b []byte) string {
	t.Helper()
	check(t, os.WriteFile(path, b, 0o600))
	return path
}

// TestKeyFileMustBePrivate: a key file others can read is refused with the
// fix named, before anything is created; root may use another user's file.
func TestKeyFileMustBePrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := writeKey(t, filepath.Join(dir, "key"), randomKey(t))
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		data := filepath.Join(dir, "data-"+mode.String())
		check(t, os.Chmod(key, mode))
		oneErrorLine(t, runMnemofs(t, "stats", "--data", data, "--encryption-key-file", key), "chmod 600 "+key)
		for _, p := range []string{"db", kdfFile} {
			if _, err := os.Stat(filepath.Join(data, p)); err == nil {
				t.Errorf("key file mode %v: %s was created", mode, p)
			}
		}
	}
	check(t, os.Chmod(key, 0o600))
	if os.Geteuid() == 0 {
		check(t, os.Chown(key, nobody, nobody))
		makeStore(t, filepath.Join(dir, "data"), "--encryption-key-file", key)
		mustRun(t, "stats", "--data", filepath.Join(dir, "data"), "--encryption-key-file", key)
	}
}

// TestKeyFileOfAnotherUser: a user who can read another user's key file
// (here through CAP_DAC_OVERRIDE) is still refused it; their own is used.
func TestKeyFileOfAnotherUser(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	dir := dirFor(t, nobody)
	rootKey := writeKey(t, filepath.Join(dir, "root.key"), randomKey(t))
	own := writeKey(t, filepath.Join(dir, "own.key"), randomKey(t))
	check(t, os.Chown(own, nobody, nobody))
	data := filepath.Join(dir, "data")
	caps := []uintptr{unix.CAP_DAC_OVERRIDE}
	oneErrorLine(t, runAs(t, nobody, caps, "stats", "--data", data, "--encryption-key-file", rootKey), "belongs to uid 0", "chmod 600")
	check(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	check(t, os.Chown(filepath.Join(dir, "src"), nobody, nobody))
	if r := runAs(t, nobody, caps, "import", "--data", data, "--encryption-key-file", own, filepath.Join(dir, "src")); r.code != 0 {
		t.Fatalf("import as uid %d with its own key file:\n%s", nobody, r)
	}
	if r := runAs(t, nobody, caps, "stats", "--data", data, "--encryption-key-file", own); r.code != 0 {
		t.Fatalf("stats as uid %d with its own key file:\n%s", nobody, r)
	}
}

// TestPassphraseKey: a passphrase goes through argon2id with the salt kept
// in DATA/kdf.json; file and environment agree; a wrong one is refused.
func TestPassphraseKey(t *testing.T) {
	needLocalStore(t) // the data directory's disk and kdf.json
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	pass := "correct horse battery staple"
	key := writeKey(t, filepath.Join(dir, "pass"), []byte(pass+"\n"))
	src := filepath.Join(dir, "src")
	check(t, os.MkdirAll(filepath.Join(src, "semantic"), 0o755))
	check(t, os.WriteFile(filepath.Join(src, "semantic", "a.md"), []byte("hello\n"), 0o644))
	mustRun(t, "import", src, "--data", data, "--encryption-key-file", key)

	fi, err := os.Stat(filepath.Join(data, kdfFile))
	if err != nil {
		t.Fatalf("no kdf.json beside the new encrypted store: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("kdf.json mode %v, want 0600", fi.Mode())
	}
	b, err := os.ReadFile(filepath.Join(data, kdfFile))
	check(t, err)
	var p kdfParams
	check(t, json.Unmarshal(b, &p))
	if p.Algorithm != "argon2id" || p.Time != 3 || p.MemoryKiB != 64<<10 || p.Threads < 1 || p.KeyLen != 32 || len(p.Salt) != 16 {
		t.Errorf("kdf.json: %s", b)
	}
	want := argon2.IDKey([]byte(pass), p.Salt, p.Time, p.MemoryKiB, p.Threads, p.KeyLen)
	sum := sha256.Sum256([]byte(pass + "\n"))
	if !opensWith(t, data, want) || opensWith(t, data, sum[:]) {
		t.Fatalf("the store is not encrypted with argon2id(passphrase, salt)")
	}

	t.Setenv("MNEMOFS_ENCRYPTION_KEY", pass)
	if r := mustRun(t, "stats", "--data", data); !strings.Contains(r.stdout, "memories: 1") {
		t.Errorf("stats with the passphrase in the environment:\n%s", r)
	}
	t.Setenv("MNEMOFS_ENCRYPTION_KEY", pass+" but wrong")
	oneErrorLine(t, runMnemofs(t, "stats", "--data", data), "encryption key does not open the store", "nothing was changed")
	wrong := writeKey(t, filepath.Join(dir, "wrong"), []byte("correct horse battery stapler\n"))
	oneErrorLine(t, runMnemofs(t, "stats", "--data", data, "--encryption-key-file", wrong), "encryption key does not open the store")
}

// TestRawAndHexKeys: 32 raw bytes, or the 64 hex characters spelling them,
// are the AES key itself.
func TestRawAndHexKeys(t *testing.T) {
	needLocalStore(t) // opensWith: DATA/db (on etcd a data dir holds no store)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	k := randomKey(t)
	raw := writeKey(t, filepath.Join(dir, "raw"), k)
	hexKey := writeKey(t, filepath.Join(dir, "hex"), []byte(hex.EncodeToString(k)+"\n"))
	makeStore(t, data, "--encryption-key-file", raw)
	mustRun(t, "stats", "--data", data, "--encryption-key-file", raw)
	if !opensWith(t, data, k) {
		t.Fatalf("a 32-byte key file is not used as the AES key as it is")
	}
	mustRun(t, "stats", "--data", data, "--encryption-key-file", hexKey)
	t.Setenv("MNEMOFS_ENCRYPTION_KEY", hex.EncodeToString(k))
	mustRun(t, "stats", "--data", data)

	data2 := filepath.Join(dir, "data2")
	makeStore(t, data2, "--encryption-key-file", hexKey)
	if !opensWith(t, data2, k) {
		t.Fatalf("a 64-hex-character key file is not used as the AES key it spells")
	}
}

// TestLegacyEncryptedStore: a store encrypted before kdf.json existed
// (key sha256 of the raw bytes, whatever their form) keeps opening, and
// stays so.
func TestLegacyEncryptedStore(t *testing.T) {
	t.Parallel()
	needLocalStore(t) // a local store of before (a data dir holding one is no etcd host's)
	dir := t.TempDir()
	for name, k := range map[string][]byte{
		"raw":        randomKey(t),
		"hex":        []byte(hex.EncodeToString(randomKey(t)) + "\n"),
		"passphrase": []byte("an old passphrase of ours\n"),
	} {
		data := filepath.Join(dir, name)
		key := writeKey(t, filepath.Join(dir, name+".key"), k)
		sum := sha256.Sum256(k)
		makeLegacyStore(t, data, sum[:])
		src := filepath.Join(dir, name+"-src")
		check(t, os.MkdirAll(filepath.Join(src, "semantic"), 0o755))
		check(t, os.WriteFile(filepath.Join(src, "semantic", "a.md"), []byte("old\n"), 0o644))
		mustRun(t, "import", src, "--data", data, "--encryption-key-file", key)
		if r := mustRun(t, "stats", "--data", data, "--encryption-key-file", key); !strings.Contains(r.stdout, "memories: 1") {
			t.Errorf("%s: stats of the legacy store:\n%s", name, r)
		}
		if _, err := os.Stat(filepath.Join(data, kdfFile)); err == nil {
			t.Errorf("%s: kdf.json was added to a legacy store", name)
		}
		if !opensWith(t, data, sum[:]) {
			t.Errorf("%s: the legacy store no longer opens with sha256 of its key", name)
		}
		wrong := writeKey(t, filepath.Join(dir, name+".wrong"), randomKey(t))
		oneErrorLine(t, runMnemofs(t, "stats", "--data", data, "--encryption-key-file", wrong), "encryption key does not open the store")
	}
}

// makeLegacyStore creates an encrypted store the way mnemofs did before
// kdf.json: DATA/db under key, and nothing else.
func makeLegacyStore(t *testing.T, data string, key []byte) {
	t.Helper()
	kv, err := backend.OpenBadger(filepath.Join(data, "db"), backend.Options{EncryptionKey: key})
	check(t, err)
	st, err := store.Open(kv, store.Options{Reserved: fusefs.ReservedNames()})
	check(t, err)
	check(t, st.Close())
	check(t, kv.Close())
}
