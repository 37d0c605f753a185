package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"
)

// fastKDF is a cheap argon2id setting for the unit tests.
func fastKDF() *kdfParams {
	return &kdfParams{Algorithm: "argon2id", Version: argon2.Version, Time: 1, MemoryKiB: 64, Threads: 1, KeyLen: 32,
		Salt: []byte("0123456789abcdef")}
}

func TestDeriveKeyFormats(t *testing.T) {
	p := fastKDF()
	raw := bytes.Repeat([]byte{0xA5, '\n', 0}, 11)[:32]
	hexKey := hex.EncodeToString(raw)
	pass := "correct horse battery staple"
	want := argon2.IDKey([]byte(pass), p.Salt, 1, 64, 1, 32)
	legacy := func(b string) []byte { k := sha256.Sum256([]byte(b)); return k[:] }
	for _, c := range []struct {
		name string
		in   string
		p    *kdfParams
		want []byte
	}{
		{"32 raw bytes", string(raw), p, raw},
		{"32 characters of text are a passphrase", strings.Repeat("k", 32), p, argon2.IDKey([]byte(strings.Repeat("k", 32)), p.Salt, 1, 64, 1, 32)},
		{"64 hex", hexKey, p, raw},
		{"64 hex and newline", hexKey + "\n", p, raw},
		{"64 hex and CRLF", hexKey + "\r\n", p, raw},
		{"64 upper-case hex", strings.ToUpper(hexKey), p, raw},
		{"passphrase", pass, p, want},
		{"passphrase and newline", pass + "\n", p, want},
		{"63 hex is a passphrase", hexKey[:63], p, argon2.IDKey([]byte(hexKey[:63]), p.Salt, 1, 64, 1, 32)},
		{"64 non-hex is a passphrase", strings.Repeat("z", 64), p, argon2.IDKey([]byte(strings.Repeat("z", 64)), p.Salt, 1, 64, 1, 32)},
		{"legacy raw", string(raw), nil, legacy(string(raw))},
		{"legacy hex", hexKey + "\n", nil, legacy(hexKey + "\n")},
		{"legacy passphrase keeps its newline", pass + "\n", nil, legacy(pass + "\n")},
	} {
		got, err := deriveKey([]byte(c.in), c.p)
		if err != nil || !bytes.Equal(got, c.want) {
			t.Errorf("%s: got %x, %v; want %x", c.name, got, err, c.want)
		}
	}
	other := fastKDF()
	other.Salt = []byte("fedcba9876543210")
	if k, _ := deriveKey([]byte(pass), other); bytes.Equal(k, want) {
		t.Errorf("another salt gives the same key")
	}
	for _, short := range []string{"fifteen bytes!!", "fifteen bytes!!\n"} {
		if _, err := deriveKey([]byte(short), p); err == nil || !strings.Contains(err.Error(), "too short") {
			t.Errorf("passphrase %q: %v, want too short", short, err)
		}
	}
	if _, err := deriveKey([]byte("fifteen bytes!!"), nil); err == nil {
		t.Errorf("legacy: a 15-byte key was accepted")
	}
	if k, err := deriveKey([]byte("fifteen bytes!!\n"), nil); err != nil || !bytes.Equal(k, legacy("fifteen bytes!!\n")) {
		t.Errorf("legacy: a 16-byte key that opened the store before is refused now: %v", err)
	}
}

func TestKDFParams(t *testing.T) {
	a, err := newKDFParams()
	check(t, err)
	b, err := newKDFParams()
	check(t, err)
	if err := a.check(); err != nil {
		t.Fatal(err)
	}
	if a.Time != 3 || a.MemoryKiB != 64<<10 || int(a.Threads) != min(4, runtime.NumCPU()) || a.KeyLen != 32 || len(a.Salt) != 16 {
		t.Errorf("new parameters %+v", a)
	}
	if bytes.Equal(a.Salt, b.Salt) {
		t.Errorf("two stores got the same salt %x", a.Salt)
	}
	for _, bad := range []func(*kdfParams){
		func(p *kdfParams) { p.Algorithm = "scrypt" },
		func(p *kdfParams) { p.Version = 16 },
		func(p *kdfParams) { p.Time = 0 },
		func(p *kdfParams) { p.Threads = 0 },
		func(p *kdfParams) { p.MemoryKiB = 4 },
		func(p *kdfParams) { p.MemoryKiB = 1 << 30 },
		func(p *kdfParams) { p.KeyLen = 16 },
		func(p *kdfParams) { p.Salt = p.Salt[:8] },
	} {
		p := fastKDF()
		bad(p)
		if p.check() == nil {
			t.Errorf("parameters %+v accepted", p)
		}
		if _, err := deriveKey([]byte("a passphrase long enough"), p); err == nil {
			t.Errorf("derived a key with parameters %+v", p)
		}
	}
}

func TestKeyFileProblem(t *testing.T) {
	for _, c := range []struct {
		perm      os.FileMode
		owner, me uint32
		want      string // "" for no problem
	}{
		{0o600, 1000, 1000, ""},
		{0o400, 1000, 1000, ""},
		{0o640, 1000, 1000, "chmod 600 K"},
		{0o604, 1000, 1000, "chmod 600 K"},
		{0o620, 1000, 1000, "chmod 600 K"},
		{0o601, 1000, 1000, "chmod 600 K"},
		{0o644, 0, 0, "chmod 600 K"}, // root too
		{0o600, 1001, 1000, "belongs to uid 1001"},
		{0o600, 1000, 0, ""}, // root may use anyone's key file
	} {
		err := keyFileProblem("K", c.perm, c.owner, c.me)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%04o owner %d for %d: %v", c.perm, c.owner, c.me, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%04o owner %d for %d: %v, want an error naming %q", c.perm, c.owner, c.me, err, c.want)
		}
	}
}

// TestStoreKDF: kdf.json is created for a new store (also over an empty
// db dir), read back as written, and never for a db made without it.
func TestStoreKDF(t *testing.T) {
	dir := t.TempDir()
	p, fresh, err := storeKDF(dir)
	if err != nil || p == nil || !fresh {
		t.Fatalf("new store: %+v, %v, %v", p, fresh, err)
	}
	check(t, saveKDF(dir, p))
	fi, err := os.Stat(filepath.Join(dir, kdfFile))
	check(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("kdf.json mode %v, want 0600", fi.Mode())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("data dir holds %d entries after saveKDF, want only kdf.json (no temp file left)", len(ents))
	}
	q, fresh, err := storeKDF(dir)
	if err != nil || fresh || q == nil || !reflect.DeepEqual(q, p) {
		t.Errorf("read back %+v, %v, %v; wrote %+v", q, fresh, err, p)
	}
	check(t, os.WriteFile(filepath.Join(dir, kdfFile), []byte("{not json"), 0o600))
	if _, _, err := storeKDF(dir); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged kdf.json: %v", err)
	}

	empty := t.TempDir()
	check(t, os.Mkdir(filepath.Join(empty, "db"), 0o700))
	if p, fresh, err := storeKDF(empty); err != nil || p == nil || !fresh {
		t.Errorf("empty db dir: %+v, %v, %v; want a new store", p, fresh, err)
	}
	legacy := t.TempDir()
	check(t, os.Mkdir(filepath.Join(legacy, "db"), 0o700))
	check(t, os.WriteFile(filepath.Join(legacy, "db", "MANIFEST"), []byte("x"), 0o600))
	if p, fresh, err := storeKDF(legacy); err != nil || p != nil || fresh {
		t.Errorf("db without kdf.json: %+v, %v, %v; want legacy (nil)", p, fresh, err)
	}
}

// check fails the test on an error (the end-to-end tests, in tests/e2e,
// have their own).
func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
