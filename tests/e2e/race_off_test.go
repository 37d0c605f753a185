//go:build !race

package e2e

// raceSlack: no race detector, the bounds as written (race_on_test.go).
const raceSlack = 1
