// Package store is the mnemofs filesystem model: inodes, directories, file
// content, extended attributes and memory metadata, kept in a backend.KV.
// It knows nothing of FUSE; fusefs translates kernel requests into calls
// here, and the CLI (fsck, stats) calls it directly. Maintenance (package
// lifecycle) and import and export (package transfer) are built on its
// exported API.
//
// Model:
//   - Every node has a permanent inode number, allocated from a persisted
//     counter and never reused, so inode numbers survive remounts.
//   - A directory entry maps (dir, name) to a child inode; an inode records
//     all of its links (parent, name), so a memory's canonical path is
//     derivable and hard links are exact.
//   - Content up to one chunk (ChunkSize) lives in the KV; a file that
//     grows past it moves to a blob file beside the KV (internal/blobfs: one file
//     per inode and generation, appends in place past the committed size,
//     copy on write for anything else but the rewrite of a large file that
//     keeps no versions (inplace.go), never for an encrypted store). KV
//     writes go to a per-inode open state (dirty chunks, shared by every
//     handle of that inode) and are committed on Flush (close) or Fsync;
//     when the dirty set grows large, full chunks are written ahead
//     (spill). A rewrite that is spilled or too big for one transaction
//     is staged (stage.go): its chunks go under a fresh chunk id, and one
//     small transaction points the inode at them, so that no crash leaves
//     a file half one version and half the other.
//     Commit parses front matter, records the SHA-256 (computed while
//     sequential writes and appends arrive) and bumps the version in the
//     same transaction that stores the bytes.
//   - In memory: the inode cache, whole directory listings (dircache.go:
//     lookups, missing names and listings never reach the backend after a
//     directory's first use), records (cache.Fill), and the last chunk and
//     hash state of recently written files (appends read nothing back).
//   - A store opened for a user (Options.User, isolation.go) hides the
//     memories of others; so does a view of an open store for one user
//     (ForUser, view.go), which shares everything else with the store.
//   - A shared store (the KV is a backend.Watcher: etcd) follows other
//     hosts' commits (remote.go: forget what is cached of the keys they
//     changed, notify kernel and views); its creates check entry and parent
//     inside the transaction, its appends rebase on another host's
//     (rebase.go), and leases (lease.go) give one host a job at a time.
//   - A free-space reserve (space.go) refuses writes with ENOSPC before
//     the disk is so full that Badger's memory-mapped logs would fault.
//   - Maintenance is package lifecycle's: it plans a pass from
//     AllMemories and carries it out through the primitives of
//     maintenance.go (a move to a free name, the cold and duplicate marks,
//     the purge of trash, a new file with a given owner, a rewrite that
//     claims nothing), which act whoever the store is open for. What a
//     pass archives is packed (PackTree, internal/pack): small files
//     zstd-compressed together into one value, read through chunk 0 and
//     unpacked on first write. Its log is a journal (journals.go).
//   - What changed since (package store/changes): on a store whose KV
//     numbers its commits (backend.Versioned), Settled gives a version
//     whose every commit's events have been delivered (the change log
//     counts those taken from under mu and not yet handed over; on a
//     shared store, the watch has brought back a key written for it:
//     backend.Settler), and ChangedSince the nodes written after a
//     version and every node alive, for what others derive and keep
//     across starts (the views' snapshot).
//   - Bulk (bulk.go) writes many new files through one backend batch:
//     import's, and the new files of maintenance. In load mode
//     (bulkload.go: an import into a store only it has open) they go
//     into a backend.Load instead, names last; a load a crash cut short
//     is undone at the next start (bulkundo.go).
//   - FUSE passthrough (passthrough.go): a file just created, or a blob
//     opened to append, may be written by the kernel itself; the store
//     learns size and times from the content file and hashes at commit
//     (or, for a large file, once the session is over, with a live mark
//     that a crash leaves for the next start to settle).
//   - Removing a memory moves it to archive/trash/; scratch files (editor
//     swap and backup files, *.tmp, files that lived only seconds) are
//     really deleted. Files unlinked while open are orphans until the last
//     close; so are unnamed files (O_TMPFILE, tmpfile.go) until a link
//     names them.
//   - The inode flags chattr sets (immutable, append-only: flags.go) are
//     enforced here, for every caller; fallocate (allocate.go) reserves,
//     punches and zeroes through the same content paths as writes.
//   - The descriptors kept open for callers' files are bounded
//     (internal/blobfs/held.go), so that the KV always has its own.
//
// Errors: POSIX conditions are returned as syscall.Errno values; backend
// failures are wrapped backend errors.
//
// Locking, outermost first; a lock is never taken while holding one listed
// after it:
//
//  1. openFile.mu: one open state (per inode) while it is written or
//     committed.
//  2. blobDir.barrier (read side; durable.go): a commit that points at a
//     blob takes it, before Store.mu, and holds it until its KV write; the
//     periodic sync takes the write side for its last round, holding no
//     other store lock.
//  3. Store.mu: every namespace change and every commit, so that KV
//     transactions never conflict and the KV and the caches change
//     together.
//  4. Leaf locks, held for a few statements and never while calling out:
//     Store.icMu (inode cache), Store.dcMu (directory cache),
//     Store.filesMu (the write states and the due queue, writestate.go),
//     access.Counts (access times), blobDir.mu (dirty and fresh blobs, the
//     temp pool), projections.mu, and the caches' own locks.
//
// Waits: an Open of an inode whose session is ending (or which is being
// settled) waits on that end with no lock held (writestate.go); a save
// waits for the replaced memory's handles with no lock held (quieten,
// saves.go).
//
// What never runs under a store lock: change events are delivered (and
// the kernel told, through fusefs's queue: Notifier) only after Store.mu
// and every openFile.mu are released (events.go, unlock), because handlers
// read the store and the kernel may call back into the mount; reads of a
// blob's committed content for a read request take no lock of the open
// state (content.go); the operator's programs run with none held
// (lifecycle).
package store
