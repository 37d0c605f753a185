//go:build race

package e2e

// raceSlack stretches the time bounds of within: the race detector makes
// the mounts' code several times slower, and in CI's race run every
// package's tests share the machine. The bounds themselves are asserted
// by the run without it (the etcd pass of .ci/run).
const raceSlack = 4
