// Package store is the mnemofs filesystem model: inodes, directories, file
// content, extended attributes and memory metadata, kept in a backend.KV.
// It knows nothing of FUSE; fusefs translates kernel requests into calls
// here, and the CLI (import, export, fsck, stats) calls it directly.
//
// Model:
//   - Every node has a permanent inode number, allocated from a persisted
//     counter and never reused, so inode numbers survive remounts.
//   - A directory entry maps (dir, name) to a child inode; an inode records
//     all of its links (parent, name), so a memory's canonical path is
//     derivable and hard links are exact.
//   - Content lives in ChunkSize chunks. Writes go to a per-inode open state
//     (dirty chunks, shared by every handle of that inode) and are committed
//     on Flush (close), Fsync, or when the dirty set grows large. Commit
//     parses front matter, hashes the content and bumps the version in the
//     same transaction that stores the bytes.
//   - Removing a memory moves it to archive/trash/; scratch files (editor
//     swap and backup files, *.tmp, files that lived only seconds) are
//     really deleted. Files unlinked while open are orphans until the last
//     close.
//
// Errors: POSIX conditions are returned as syscall.Errno values; backend
// failures are wrapped backend errors.
//
// Locking (outermost first): openFile.mu, Store.mu (all namespace changes
// and commits), Store.icMu (the inode cache) and Store.filesMu (the open
// table). A lock is never taken while holding one listed after it.
package store
