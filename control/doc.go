// Package control lets CLI commands reach a store that a running mount
// holds open (Badger allows one process per directory). The mount process
// serves HTTP on a Unix socket named in the store's lock file; commands
// that find the store locked send their request there instead of opening it.
//
// An MCP server (package mcp) reaches a held store the same way: op "mcp"
// runs one tool call inside the holder with its mcp.Host, as the call's
// user sees the store (a holder for every user serves every user, a
// holder for one user that user alone); "mcp-hello" says whom the holder
// is for; "mcp-sessions" is what an MCP server serves now, which "stats"
// adds to the store's (mcp_sessions). A `mnemofs mcp` holding the store
// itself serves this socket too, and runs its own calls on the same host.
//
// The lock file (<data>/mnemofs.lock) is flock'ed by whichever process has
// the store open and says who that is (pid, mountpoint, socket).
//
// The socket is <data>/control.sock, however long that path (socket.go
// says how, and where it goes when the data dir cannot hold it). It is
// never reachable by other users, and both ends check the other's uid
// (SO_PEERCRED): the mount serves its own user and root, the CLI talks
// only to a mount of the data dir's owner or root.
package control
