// Package backend is the storage layer under mnemofs: a small ordered,
// transactional key-value interface (KV) and its Badger implementation.
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
// A distributed engine can later implement KV without touching the layers
// above.
package backend
