// Package control lets CLI commands reach a store that a running mount
// holds open (Badger allows one process per directory). The mount process
// serves HTTP on a Unix socket named in the store's lock file; commands
// that find the store locked send their request there instead of opening it.
//
// The lock file (<data>/mnemofs.lock) is flock'ed by whichever process has
// the store open and says who that is (pid, mountpoint, socket).
package control
