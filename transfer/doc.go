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
// commit). Past its first 10,000 files it asks the bulk writer for a load
// (store.Bulk.StartLoad), which only the import command's own store takes:
// the rest of the new files become visible together at the end. Export
// reads through the public store API (Resolve, ReadDir, Attr, ReadAt).
// Neither keeps state: a failed Import (a file, or the walk of the source,
// which runs along with it, failing part way) leaves the files added
// before the failure, and is resumed by running it again; a killed one
// leaves those of the batches flushed before its load (the load is undone
// at the next start).
package transfer
