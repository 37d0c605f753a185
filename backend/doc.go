// Package backend is the storage layer under mnemofs: a small ordered,
// transactional key-value interface (KV), its Badger implementation (the
// default, one host) and an etcd one (a store shared by several hosts).
//
// Everything mnemofs keeps — inodes, directory entries, file content, xattrs,
// memory metadata, counters — is a key in one KV. The key families are listed
// in keys.go, which is the only place key bytes are built. The sentinel errors
// are listed in errors.go.
//
// Invariants:
//   - Keys are ordered bytewise; every family has a one-byte prefix and
//     fixed-width big-endian integers, so a prefix scan yields entries in
//     numeric (inode) or name order.
//   - Update runs its function in one atomic transaction: all of its writes
//     become visible together or not at all, also across a crash.
//   - Sync makes every committed transaction durable (fsync of the log);
//     Update alone does not, to keep small writes cheap; the store syncs
//     on its own clock (store/durable.go), asking Unsynced first.
//
// # etcd
//
// OpenEtcd (etcd.go) is a KV on an etcd v3 cluster, for one store shared by
// several hosts (--backend etcd://...; README's team section). It is also a
// Watcher (etcd_watch.go): the store follows other hosts' commits. Its
// keys are under a prefix, P/k/<key>, so that several stores share a
// cluster. It keeps the invariants above with these differences:
//   - Update is an optimistic transaction: reads at a snapshot revision
//     recorded in a read set (keys with their ModRevision, scanned ranges),
//     writes buffered and read back by Get and Scan, and one etcd Txn that
//     commits only if nothing read has changed (per-key ModRevision
//     compares, and a range compare that fails on a key created in a
//     scanned range since the snapshot). On conflict the function runs
//     again (bounded, with backoff; then ErrConflict), so it must not have
//     effects outside the transaction that a second run would repeat. A
//     commit whose answer was lost (a leader lost mid-request) is settled
//     by a fence on a per-client commit marker, so it is neither lost nor
//     applied twice.
//   - etcd's limits are kept, never raised: 128 operations (and 128
//     compares) a transaction, of which the marker takes one, and requests
//     under 1.5 MiB: past them Set and Delete return ErrTxnTooBig (as
//     Badger's do past its own, much larger, limit) and the store splits
//     the write. One value cannot exceed about 1.4 MiB.
//   - View is one snapshot (its first read pins the revision); scans are
//     paginated. Batches are transactions under the limits, not atomic as
//     a whole.
//   - Sync does nothing and Unsynced is false: etcd acknowledges a commit
//     once a quorum has it on disk. Size is etcd's database (in use, free),
//     all prefixes. Every request is bounded by a timeout: an unreachable
//     cluster gives an error, not a hang.
//   - With an encryption key, values are sealed with AES-GCM before they
//     leave the process (etcd_crypt.go); keys, hence file names, are not.
//
// # Other engines
//
// TiKV (as JuiceFS uses it) has the same shape: ordered keys, optimistic
// transactions with a commit-time conflict check, a change feed (TiCDC).
// A KV on it would implement KV and Watcher the same way, with its own
// limits (txn-total-size-limit) behind ErrTxnTooBig. None is written.
//
// The tests hold Badger and etcd to one contract (kv_conformance_test.go)
// against a real etcd started on loopback (the etcd-server package).
package backend
