package main

// Stores are never made by accident: only mount and import create one.
// Every other command on a data directory that holds no store fails with
// its path and a hint (a mistyped --data would otherwise answer about a
// new, empty store, and leave one behind), and a data directory that
// holds a shared store's host-local state is never opened as a local
// store: it records its backend (DATA/backend, written whenever the
// store on etcd is opened) and a command without --backend names it.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/control"
	"github.com/mnemofs/mnemofs/store"
)

// backendFile records, in a data directory of a shared store's host, the
// --backend of that store.
const backendFile = "backend"

// defaultedData reports whether no data directory was given (the default
// one is used).
func defaultedData() bool {
	return globals.data == "" && os.Getenv("MNEMOFS_DATA") == ""
}

// checkLocal says why the local (Badger) store in dir cannot be opened
// by a command that must not create it (create false), or by any command:
// dir holds the host-local state of a store on etcd.
func checkLocal(dir string, create bool) error {
	if u := recordedBackend(dir); u != "" {
		return fail("%s holds the host-local state of the store at %s, not a local store: give --backend %s (or MNEMOFS_BACKEND)", dir, u, u)
	}
	if create {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "db", "MANIFEST")); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fail("%s: %v", dir, err)
	}
	which := ""
	if defaultedData() {
		which = " (the default data directory)"
	}
	return fail("there is no store in %s%s: give the --data DIR (or MNEMOFS_DATA) of an existing store; only 'mnemofs mount' and 'mnemofs import' make a new one", dir, which)
}

// checkShared says why the store on etcd at where (in kv) cannot be used
// by a command that must not create it, and why dir cannot be its
// host-local state directory: it holds a local store.
func checkShared(kv backend.KV, where, dir string, create bool) error {
	if _, err := os.Stat(filepath.Join(dir, "db")); err == nil {
		return fail("%s holds a local store (its db/): give the store at %s a data directory of its own with --data (it keeps only host-local state there)", dir, where)
	}
	if !create {
		ok, err := store.Exists(kv)
		if err != nil {
			return err
		}
		if !ok {
			return fail("there is no store at %s: check --backend (or MNEMOFS_BACKEND) and its prefix; only 'mnemofs mount' and 'mnemofs import' make a new one", where)
		}
	}
	return recordBackend(dir, where)
}

// held reports whether a process (a mount, mcp) holds the store lock of
// dir, without making anything there.
func held(dir string) bool {
	f, err := os.Open(control.LockPath(dir))
	if err != nil {
		return false
	}
	defer f.Close()
	return errors.Is(syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB), syscall.EWOULDBLOCK)
}

// recordedBackend is the --backend recorded in dir, "" if none.
func recordedBackend(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, backendFile))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// recordBackend records u as the backend of the host-local state in dir.
func recordBackend(dir, u string) error {
	if recordedBackend(dir) == u {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp := filepath.Join(dir, backendFile+".tmp")
	if err := os.WriteFile(tmp, []byte(u+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, backendFile))
}
