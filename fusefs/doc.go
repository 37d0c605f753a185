// Package fusefs is the thin FUSE adapter of mnemofs and the only package
// that imports go-fuse. It translates kernel requests into store calls and
// store errors into errnos; all filesystem logic lives in store (and, for
// generated trees, in views).
//
// Node kinds and kernel caching (timeouts are set on every reply; the
// mount has no default, since go-fuse would replace each zero with it):
//
//	node kind                      type          entry / attr   open flags
//	real directory                 *dirNode      1 s / 1 s      -
//	root (real + generated trees)  *rootNode     1 s / 1 s      -
//	real regular file              *fileNode     1 s / 1 s      FOPEN_KEEP_CACHE
//	  … reached through a view     *fileNode     0 / 1 s        FOPEN_KEEP_CACHE
//	symlink, fifo, socket          *leafNode     1 s / 1 s      -
//	meta/, by-*/, recent/ dirs     *genDir kinds 0 / 0          -
//	search/<q>/, context/          *queryDir …   0 / 0          -
//	generated file (meta/*,        *genFile      0 / 0          FOPEN_DIRECT_IO,
//	  .results, context/<q>, a log                              snapshot at open
//	  line's result <n>-<log>#L<l>,
//	  the guide, README.md)
//
// The root lists the real trees and the guide (views.GuideName); the
// generated trees, search/ in a view and archive/trash open by name but
// are not listed (root.go), unless Config.ListGenerated: a walk of the
// mount meets each memory once and nothing from the trash. search/ and
// context/ list their help file; mkdir of a query makes it (mkdir.go).
//
// FUSE passthrough: as root on Linux >= 6.9 (checked at mount by
// registering a backing file; --no-passthrough turns it off), the open of a
// file just created, or an O_APPEND open of a file whose content is a blob,
// may hand the kernel the content file (store/passthrough.go): reads and
// writes then never reach the daemon. go-fuse gives every later open of the
// inode the same backing file, as the store shares the session. After such
// a session a small file's content is put into the page cache (Prefill),
// which the kernel's writes bypassed.
//
// Missing names are never cached (a view gains names without the kernel
// creating them). Every change to a real node made through the kernel keeps
// the kernel's caches right by itself; changes the store makes on its own
// (imports, trash moves) and changes callers make through the store API
// (the MCP server, store.NotifyEntry/NotifyContent) reach the kernel
// through a notification queue (notify.go), never called with a lock held;
// Notifier.Drain waits for it. Notifications go to the node go-fuse
// registered for an inode (FS.track, node.seen), never to one it dropped.
//
// Bounded nodes: the kernel keeps a looked-up name until memory pressure
// evicts it, and go-fuse keeps the node as long; past Config.MaxNodes the
// oldest nodes are named to the kernel to forget (prune.go: in
// FUSE_NOTIFY_PRUNE batches, or by entry invalidation on kernels before
// 6.18), so a find over a million memories does not hold a million nodes.
//
// Bounded requests: a generated directory answers a lookup with a map
// lookup in the views' facets (HasValue, HasDate), never by listing its
// values, so a READDIRPLUS (a lookup per entry) costs the listing once.
// Handlers pass their context (go-fuse closes it when the kernel sends
// INTERRUPT, e.g. for a fatal signal) to the walks views still make; a
// walk stopped that way ends the request with EINTR (errno), so a reader
// can always be killed.
//
// Inode numbers: real nodes use the store's permanent inode number, as
// their FUSE node id too, so that file handles survive remounts
// (export.go). Generated nodes use numbers with the top bit set
// (synthIno), which the store never allocates. Modes are shown as kept,
// 000 included (go-fuse's NullPermissions).
package fusefs
