// Package fusefs is the thin FUSE adapter of mnemofs and the only package
// that imports go-fuse. It translates kernel requests into store calls and
// store errors into errnos; all filesystem logic lives in store (and, for
// generated trees, in views).
//
// Node kinds and kernel caching:
//
//	node kind                 type         entry/attr timeout   open flags
//	real directory            *dirNode     1 s / 1 s            -
//	root (real + generated)   *rootNode    1 s / 1 s            -
//	real regular file         *fileNode    1 s / 1 s            FOPEN_KEEP_CACHE
//	symlink, fifo, socket     *leafNode    1 s / 1 s            -
//	meta/ directory           *metaDir     1 s / 1 s            -
//	meta/* generated file     *genFile     0 / 0                FOPEN_DIRECT_IO, snapshot at open
//
// Negative entries are cached for 1 s. Every change made through the kernel
// keeps the kernel's caches right by itself; changes the store makes on its
// own (imports, trash moves) reach the kernel through a notification queue
// (notify.go), never called with a lock held.
//
// Inode numbers: real nodes use the store's permanent inode number.
// Generated nodes use numbers with the top bit set (synthIno), which the
// store never allocates.
package fusefs
