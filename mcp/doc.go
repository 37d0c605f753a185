// Package mcp serves the memory over the Model Context Protocol: the same
// store, views and isolation as the mount, for agents that cannot mount
// anything (no /dev/fuse, hosted sandboxes, desktop apps that speak MCP),
// one server for many agents, each with its own token and user.
//
// Model:
//   - Tools runs the five tools (memory, search, context, history, stats)
//     on an open store, or a user's view of it (store.ForUser), and the
//     views engine, filtered for that user (views.ForReader), with the
//     store calls the filesystem makes: Lookup, Create, Open/WriteAt/
//     Truncate/Release, Remove (to the trash), Rename. So front matter,
//     versions, the trash, the index and isolation behave as in the
//     mount, and the two cannot disagree. The memory tool is Anthropic's
//     client-side memory tool (memory_20250818): its commands, fields and
//     messages.
//   - A Call carries the tool, its arguments as raw bytes (checked where
//     the store is, once), and whom it is for: the session's user, how the
//     session came, whether it may change anything.
//   - A Backend runs calls. Host is the one in the process that holds the
//     store (a mount's control socket, op "mcp"; or an MCP server holding
//     the store itself): each call on its user's view, a store held for
//     one user serving that user alone. cmd/mnemofs's route is the other:
//     a proxy over the control socket to the process holding the store.
//   - Servers are the SDK servers of an MCP server process, one per name
//     its sessions are for (a token's name, the --user of stdio). A call
//     asks who its session's name is now (Principal), passes that
//     principal's Limits (calls a second: refused over; calls at once:
//     waiting), then the process's bound (maxCalls), then runs on the
//     Backend. Servers count sessions and calls per name; the holder's
//     Host collects the counts of every server (Report) for stats.
//   - Tokens are the bearer tokens of an HTTP server (a tokens file, or
//     one --token-file), re-read on Reload (SIGHUP); HTTPHandler serves
//     Servers over streamable HTTP to requests bearing one, a session
//     bound to its token's name.
//   - Every change a call makes is recorded in meta/mcp.log (package
//     audit) with the session's user.
//
// Invariants:
//   - Paths are /memories/... and taken literally; "..", ".", percent-
//     encoded traversal, NUL, names over 255 bytes, symlinks on the way
//     and the generated trees at the root are refused before anything is
//     looked up (paths.go). Symlinks are never followed.
//   - A refused call changes nothing: every check runs before the first
//     change; a write that fails half-way is undone before its commit.
//   - A memory the session's user may not see answers exactly as a
//     missing one (the store says ENOENT for both). The one exception is
//     the store's: a name held by a hidden memory cannot be taken
//     (taken()).
//   - Every change made inside a mount process is announced to the
//     kernel (store.NotifyEntry, NotifyContent) and the answer waits for
//     the invalidations (NotifyDrain), so a read through the mount right
//     after an MCP call sees it.
//   - No text returned is over MaxText bytes; names that could forge
//     lines of a listing (control characters, not UTF-8) are quoted.
//   - No token is ever kept in clear, logged or shown; tokens are
//     compared as SHA-256 digests in constant time, against every one.
package mcp
