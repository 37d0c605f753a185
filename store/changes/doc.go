// Package changes is a store's account of what changed: the change events
// handed to the store's Options.OnChange (Change), the removal log, and what changed
// since a version of the KV (Since), for what others derive from the
// store and keep across mounts (the views' snapshot).
//
// Invariants:
//   - Every removal of an inode record writes its mark in the removal log
//     in the same transaction (DeleteInode), on a store whose KV numbers
//     its commits; the log is trusted only from the version a start
//     recorded (OpenRemovals), and a clean close (CloseRemovals) is what
//     lets the next start trust it further back.
//   - Settled returns a version only once every change event of every
//     commit at or below it has been handed over: events are counted
//     (Taken) under the namespace lock, or before a bulk batch's first
//     write, and uncounted once delivered (Handed).
//   - ChangedSince reads keys, never content: its cost follows what
//     changed, or, when the log does not reach back, one key-only walk of
//     the inodes.
//
// The store keeps the namespace lock and the delivery of events; this
// package only counts them.
package changes
