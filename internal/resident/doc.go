// Package resident bounds how much of the data directory's memory-mapped
// files counts in the process's resident set.
//
// The views' index snapshot and Badger's tables are mapped read-only (or
// never written again, for a finished table): every page a search or a
// read touches stays mapped in the process until the kernel needs the
// memory, so the resident set grows with what was ever read, toward the
// size of the store. A Trimmer watches the process's file-backed resident
// memory and, past its budget, gives those pages back:
//
//   - the snapshot's mappings, which mnemofs never unmaps, with
//     MADV_DONTNEED: the pages leave the resident set and stay in the
//     page cache, so the next touch of one is a minor fault;
//   - Badger's tables with MADV_PAGEOUT, which reclaims them (a clean
//     page of a table is dropped; the next touch reads the disk, and
//     Badger's block cache keeps the hot blocks). Not DONTNEED: Badger
//     unmaps a table when compaction retires it, and between the read
//     of /proc/self/maps and the call the range could be anonymous
//     memory mapped anew, which DONTNEED would zero; PAGEOUT never
//     loses data, whatever the range holds.
//
// What Badger writes (its memtable's log, the value log) is left alone.
package resident
