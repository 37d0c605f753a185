// Package transfer copies trees between a store and plain directories:
// Import (mnemofs import) writes a directory into the store, Export
// (mnemofs export) writes the store's tree, or part of it, out as plain
// files.
//
// Both work as the store's user: Import's files belong to that user and
// are refused where the user may not write (a memory of someone else's:
// EACCES), Export writes what the user sees. Import writes new files
// through the store's bulk writer (store.Bulk: one backend batch per 2000
// files, made visible at each Flush; an existing file is overwritten as a
// commit); Export reads through the public store API (Resolve, ReadDir,
// Attr, ReadAt). Neither keeps state: a failed Import (a file, or the walk
// of the source, which runs along with it, failing part way) leaves the
// files of the batches already flushed, and is resumed by running it
// again.
package transfer
