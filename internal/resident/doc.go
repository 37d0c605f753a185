// Package resident bounds how much of the data directory's memory-mapped
// files counts in the process's resident set.
//
// The views' index snapshot and Badger's tables are mapped read-only (or
// never written again, for a finished table): every page a search or a
// read touches stays mapped in the process until the kernel needs the
// memory, so the resident set grows with what was ever read, toward the
// size of the store. A Trimmer watches the process's file-backed resident
// memory and, past its budget, tells the kernel those pages are not
// needed (madvise MADV_DONTNEED): they leave the resident set and stay in
// the page cache, so the next touch of one is a minor fault, not a disk
// read.
//
// An engine may name a hot tail for each of its files (a Badger table's
// index and Bloom filters, read by every lookup that passes the table):
// a trim leaves it, and it does not count against the budget. Without
// this, every trim dropped the indexes and the next lookups faulted them
// all back in.
//
// DONTNEED on a range that is no longer the file's (unmapped, and
// anonymous memory mapped there anew) would zero that memory, so it is
// given only to ranges that cannot be unmapped meanwhile: the snapshot's,
// which mnemofs never unmaps, and Badger's tables while the engine pins
// them (backend.Mapped). What Badger writes (its memtable's log, the
// value log) is left alone.
package resident
