package main

// Encryption keys: --encryption-key-file FILE, else MNEMOFS_ENCRYPTION_KEY.
//
// The key file must be private: refused when group or others have any
// access to it (mode & 0o077, fix: chmod 600 FILE) or when it belongs to
// another user than the caller (root may use anyone's file).
//
// What the key may be (the file's bytes, or the variable's value):
//
//   - exactly 32 bytes, not all printable text: the AES-256 key, used as
//     it is (32 characters of text are a passphrase, below);
//   - 64 hex characters, optionally followed by a newline: the 32 bytes
//     they spell, used as they are;
//   - anything else is a passphrase (at least 16 bytes, after dropping
//     one trailing newline, so `echo pass > FILE` and the variable agree).
//     The key is argon2id(passphrase, salt) with time 3, memory 64 MiB,
//     threads min(4, NumCPU), 32 bytes out.
//
// The salt (16 random bytes) and the parameters are not secret: they live
// unencrypted in DATA/kdf.json (mode 0600), written atomically (temp file,
// fsync, rename, fsync of the directory) when an encrypted store is
// created, and read back at every open (the thread count is part of the
// derivation, so it is the recorded one that is used, not this machine's).
//
// Old stores: before kdf.json existed the key was sha256(the raw bytes),
// whatever their form, and such stores keep that derivation. kdf.json is
// always written before Badger first creates DATA/db, so a DATA/db that
// holds anything while kdf.json is missing can only be a store made before
// kdf.json existed (or an unencrypted one, which no key opens anyway): it
// is "legacy" and stays so (no kdf.json is ever added to it). No DATA/db,
// or an empty one, with no kdf.json is a new store: kdf.json is created.

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"golang.org/x/crypto/argon2"
)

// kdfParams is the content of DATA/kdf.json.
type kdfParams struct {
	Algorithm string `json:"algorithm"` // "argon2id"
	Version   int    `json:"version"`   // argon2.Version
	Time      uint32 `json:"time"`
	MemoryKiB uint32 `json:"memory_kib"`
	Threads   uint8  `json:"threads"`
	KeyLen    uint32 `json:"key_len"`
	Salt      []byte `json:"salt"` // base64 in the file
}

const kdfFile = "kdf.json"

// newKDFParams returns the parameters for a new store, with a fresh salt.
func newKDFParams() (kdfParams, error) {
	p := kdfParams{Algorithm: "argon2id", Version: argon2.Version, Time: 3, MemoryKiB: 64 << 10,
		Threads: uint8(min(4, runtime.NumCPU())), KeyLen: 32, Salt: make([]byte, 16)}
	_, err := rand.Read(p.Salt)
	return p, err
}

// check refuses parameters this version cannot or should not use.
func (p kdfParams) check() error {
	switch {
	case p.Algorithm != "argon2id" || p.Version != argon2.Version:
		return fmt.Errorf("unknown key derivation %q version %d", p.Algorithm, p.Version)
	case p.Time < 1 || p.Time > 100:
		return fmt.Errorf("time %d out of range 1..100", p.Time)
	case p.Threads < 1:
		return errors.New("threads must be at least 1")
	case p.MemoryKiB < 8*uint32(p.Threads) || p.MemoryKiB > 4<<20:
		return fmt.Errorf("memory %d KiB out of range %d..%d", p.MemoryKiB, 8*uint32(p.Threads), 4<<20)
	case p.KeyLen != 32:
		return fmt.Errorf("key length %d, want 32", p.KeyLen)
	case len(p.Salt) < 16:
		return fmt.Errorf("salt of %d bytes, want at least 16", len(p.Salt))
	}
	return nil
}

// deriveKey turns key material into the 32-byte AES key: sha256 of it for
// a legacy store (p nil), else as the comment at the top of this file says.
func deriveKey(raw []byte, p *kdfParams) ([]byte, error) {
	if p == nil {
		if len(raw) < 16 {
			return nil, tooShort(len(raw))
		}
		k := sha256.Sum256(raw)
		return k[:], nil
	}
	if len(raw) == 32 && !printable(raw) {
		return bytes.Clone(raw), nil // random bytes; 32 characters of text are a passphrase
	}
	if h := trimNewline(raw); len(h) == 64 {
		if k, err := hex.DecodeString(string(h)); err == nil {
			return k, nil
		}
	}
	pass := trimNewline(raw)
	if len(pass) < 16 {
		return nil, tooShort(len(pass))
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	return argon2.IDKey(pass, p.Salt, p.Time, p.MemoryKiB, p.Threads, p.KeyLen), nil
}

// printable reports whether b is all printable ASCII (text, not random
// bytes: a random 32-byte key is all printable once in about 2^15).
func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

func tooShort(n int) error {
	return fail("the encryption key is too short (%d bytes): use at least 16 random bytes", n)
}

// trimNewline drops one trailing "\n" or "\r\n".
func trimNewline(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// keyFileProblem says what is wrong with a key file of mode perm owned by
// owner for the caller me (nil: nothing).
func keyFileProblem(path string, perm os.FileMode, owner, me uint32) error {
	if perm&0o077 != 0 {
		return fail("the encryption key file %s is open to other users (mode %04o): make it private with 'chmod 600 %s'", path, perm, path)
	}
	if me != 0 && owner != me {
		return fail("the encryption key file %s belongs to uid %d, not to you (uid %d): use a key file of your own ('chmod 600 %s')", path, owner, me, path)
	}
	return nil
}

// readKeyFile reads a key file after checking it is private (on the open
// file, so what is checked is what is read).
func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fail("cannot read the encryption key file: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fail("cannot read the encryption key file: %v", err)
	}
	owner := uint32(0)
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		owner = st.Uid
	}
	if err := keyFileProblem(path, fi.Mode().Perm(), owner, uint32(os.Geteuid())); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fail("cannot read the encryption key file: %v", err)
	}
	return b, nil
}

// storeKDF returns the key derivation of the store in dataDir (which the
// caller has locked): nil for a legacy store, else the parameters of its
// kdf.json, or new ones (fresh true) that the caller must save with
// saveKDF before the store is created.
func storeKDF(dataDir string) (p *kdfParams, fresh bool, err error) {
	path := filepath.Join(dataDir, kdfFile)
	b, err := os.ReadFile(path)
	if err == nil {
		p = &kdfParams{}
		if err = json.Unmarshal(b, p); err == nil {
			err = p.check()
		}
		if err != nil {
			return nil, false, fail("%s is damaged (%v): it holds the salt of the encryption key; restore it from a backup", path, err)
		}
		return p, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, false, fmt.Errorf("reading %s: %w", path, err)
	}
	ents, err := os.ReadDir(filepath.Join(dataDir, "db"))
	switch {
	case err == nil && len(ents) > 0:
		return nil, false, nil // made before kdf.json: sha256
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return nil, false, fmt.Errorf("reading %s: %w", filepath.Join(dataDir, "db"), err)
	}
	np, err := newKDFParams()
	if err != nil {
		return nil, false, err
	}
	return &np, true, nil
}

// saveKDF writes DATA/kdf.json.
func saveKDF(dataDir string, p *kdfParams) error {
	path := filepath.Join(dataDir, kdfFile)
	b, _ := json.MarshalIndent(p, "", "  ")
	if err := writeFileAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// writeFileAtomic writes path (mode 0600) through a temp file, so that a
// crash leaves either no file or the whole of it.
func writeFileAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
