// Package mcp serves the memory over the Model Context Protocol: the same
// store, views and isolation as the mount, for agents that cannot mount
// anything (no /dev/fuse, hosted sandboxes, desktop apps that speak MCP).
//
// Model:
//   - Tools runs the five tools (memory, search, context, history, stats)
//     on an open store and views engine, with the store calls the
//     filesystem makes: Lookup, Create, Open/WriteAt/Truncate/Release,
//     Remove (to the trash), Rename. So front matter, versions, the trash,
//     the index and isolation behave as in the mount, and the two cannot
//     disagree. The memory tool is Anthropic's client-side memory tool
//     (memory_20250818): its commands, fields and messages.
//   - A Backend runs calls: Tools itself when this process holds the
//     store, or (cmd/mnemofs) a proxy over the control socket to the mount
//     that does; the mount runs the same Tools (control op "mcp"). Calls
//     carry their arguments as raw bytes, so they are checked where the
//     store is, once, in the same way.
//   - NewServer registers the tools with the official Go SDK; HTTPHandler
//     serves them over streamable HTTP behind a bearer token.
//
// Invariants:
//   - Paths are /memories/... and taken literally; "..", ".", percent-
//     encoded traversal, NUL, names over 255 bytes, symlinks on the way
//     and the generated trees at the root are refused before anything is
//     looked up (paths.go). Symlinks are never followed.
//   - A refused call changes nothing: every check runs before the first
//     change; a write that fails half-way is undone before its commit.
//   - A memory the server's user may not see answers exactly as a missing
//     one (the store says ENOENT for both). The one exception is the
//     store's: a name held by a hidden memory cannot be taken (taken()).
//   - Every change made inside a mount process is announced to the
//     kernel (store.NotifyEntry, NotifyContent) and the answer waits for
//     the invalidations (NotifyDrain), so a read through the mount right
//     after an MCP call sees it.
//   - No text returned is over MaxText bytes; names that could forge
//     lines of a listing (control characters, not UTF-8) are quoted.
package mcp
