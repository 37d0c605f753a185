// Package access keeps the access statistics of memories (when each was
// last read, and how many times) that are not stored yet: reads count in
// memory, and the store's clock flushes them into the records, a few
// hundred per transaction, so that a read never writes.
//
// Invariants:
//   - An access is counted once: pending until a flush stores it, pending
//     again when that flush fails, gone once stored (or taken by a save
//     that stores it on the memory's new inode).
//   - A flush's transactions shrink, for good, to what the engine
//     accepts (etcd: 128 operations).
//
// Readers see the pending statistics added to the stored ones (the
// store's withAccess); writers of a record store it without them.
package access
