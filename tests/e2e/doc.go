// Package e2e holds the end-to-end tests of mnemofs: they build the real
// binary (cmd/mnemofs) once, in TestMain, and run it as separate processes
// against real FUSE mounts and real data directories, the way a user does —
// persistence and inode numbers across remounts, SIGKILL crash rounds,
// --user isolation and --allow-other permission checks, encryption at rest
// and keys, hostile names, content and queries, a full disk, the control
// socket, maintenance and consolidation, the README walkthrough and the
// agent demo script, and `mnemofs mcp` with the MCP SDK's own client. They
// live outside package main, as gocryptfs keeps its tests, so they test
// what the binary does and not how cmd/mnemofs is written.
//
// The crash loops run 8 and 3 rounds (2 with -short) from a fixed seed;
// MNEMOFS_CRASH_ROUNDS and MNEMOFS_CRASH_SEED (a number or "random") run
// longer or different loops. Every test runs in parallel with the others
// but those that set the environment.
//
//	go test ./tests/e2e/
//	MNEMOFS_CRASH_ROUNDS=30 go test -run TestCrash -v ./tests/e2e/
package e2e
