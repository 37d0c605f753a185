package main

// --backend: where the store lives. Absent, it is Badger in DATA/db (one
// host). etcd://HOST:PORT[,HOST:PORT...]/PREFIX puts it on an etcd v3
// cluster under PREFIX, for several hosts at once; DATA then holds only
// host-local state (the lock, the control socket, operator.yaml), never
// memory content: no DATA/db and no DATA/blobs (content lives in etcd,
// in chunks; passthrough needs local files, so it is off).
//
// An encrypted store on etcd keeps its key's salt beside it in the
// cluster (PREFIX/x/shared/kdf, not secret), so that every host derives
// the same key from the same passphrase; the first host to open the store
// writes it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"strings"

	"github.com/mnemofs/mnemofs/backend"
)

// backendURL is --backend, else $MNEMOFS_BACKEND; "" means Badger.
func backendURL() string {
	if globals.backend != "" {
		return globals.backend
	}
	return os.Getenv("MNEMOFS_BACKEND")
}

// parseBackend parses etcd://HOST:PORT[,HOST:PORT...]/PREFIX.
func parseBackend(u string) (backend.EtcdOptions, error) {
	var o backend.EtcdOptions
	rest, ok := strings.CutPrefix(u, "etcd://")
	if !ok {
		return o, fail("--backend %q: only etcd://HOST:PORT[,HOST:PORT...]/PREFIX is known (leave it out for the local store)", u)
	}
	hosts, prefix, _ := strings.Cut(rest, "/")
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return o, fail("--backend %q names no prefix: etcd://HOST:PORT/PREFIX (the prefix names the store in the cluster)", u)
	}
	if strings.ContainsAny(prefix, " \t\n\x00") {
		return o, fail("--backend %q: the prefix may not hold spaces or control characters", u)
	}
	for _, h := range strings.Split(hosts, ",") {
		if _, _, err := net.SplitHostPort(h); err != nil {
			return o, fail("--backend %q: %q is not HOST:PORT", u, h)
		}
		o.Endpoints = append(o.Endpoints, h)
	}
	o.Prefix = prefix
	return o, nil
}

// openKV opens the store's KV: Badger in dataDir (tuned by how: a bulk
// load, no compactions), or the --backend. It returns where the store is,
// for messages, and whether it is shared. Unless create (mount, import),
// the store must exist (storecheck.go).
func openKV(dataDir string, logger *log.Logger, how backend.Options, create bool) (kv backend.KV, where string, shared bool, err error) {
	u := backendURL()
	if u == "" {
		if err := checkLocal(dataDir, create); err != nil {
			return nil, "", false, err
		}
		key, err := encryptionKey(dataDir)
		if err != nil {
			return nil, "", false, err
		}
		kv, err := backend.OpenBadger(dataDir+"/db", backend.Options{EncryptionKey: key, Logger: logger, Bulk: how.Bulk, NoCompactions: how.NoCompactions})
		return kv, dataDir, false, kvError(err, dataDir)
	}
	o, err := parseBackend(u)
	if err != nil {
		return nil, "", false, err
	}
	where = u
	o.Logf = logger.Printf
	if err := etcdAuth(&o); err != nil {
		return nil, "", false, err
	}
	raw, err := rawKey()
	if err != nil {
		return nil, "", false, err
	}
	if raw != nil {
		p, err := sharedKDF(o)
		if err != nil {
			return nil, "", false, err
		}
		if o.EncryptionKey, err = deriveKey(raw, p); err != nil {
			return nil, "", false, err
		}
	}
	kv, err = backend.OpenEtcd(o)
	if err != nil {
		return nil, "", false, kvError(err, where)
	}
	if err := checkShared(kv, where, dataDir, create); err != nil {
		kv.Close()
		return nil, "", false, err
	}
	return kv, where, true, nil
}

// sharedKDF returns the key derivation kept in the cluster, writing new
// parameters when there are none yet.
func sharedKDF(o backend.EtcdOptions) (*kdfParams, error) {
	np, err := newKDFParams()
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(np)
	got, err := backend.SharedValue(o, "kdf", b)
	if err != nil {
		return nil, fmt.Errorf("reading the key's salt from %s: %w", strings.Join(o.Endpoints, ","), err)
	}
	p := &kdfParams{}
	if err := json.Unmarshal(got, p); err != nil {
		return nil, fail("the key's salt in the cluster (%s/x/shared/kdf) is damaged: %v", o.Prefix, err)
	}
	return p, p.check()
}

func kvError(err error, where string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, backend.ErrBadKey):
		return fail("the encryption key does not open the store in %s (wrong key, or the store is not encrypted): nothing was changed", where)
	case errors.Is(err, backend.ErrLocked):
		return fail("the store in %s is open in another process", where)
	}
	return fmt.Errorf("opening the store in %s: %w", where, err)
}
