// Package testenv decides, in one place, what a test does when something
// it needs from the machine is missing: /dev/fuse, or an optional program
// (an editor, tmux, rsync, git, getfattr, Chromium, etcd). It skips the
// test with a message naming what is missing and the package that has it;
// with MNEMOFS_REQUIRE_FUSE=1 (as CI sets, after .ci/run installed
// everything) it fails the test instead, so nothing skips silently there.
package testenv

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Required reports whether missing tools fail tests rather than skip them.
func Required() bool { return os.Getenv("MNEMOFS_REQUIRE_FUSE") == "1" }

// Missing skips t, saying what is missing, or fails it when Required.
func Missing(t testing.TB, what string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s (required: MNEMOFS_REQUIRE_FUSE=1)", what)
		return
	}
	t.Skipf("skipped: %s", what)
}

// packages names the Debian package of the programs the tests use, where
// it is not the program's own name.
var packages = map[string]string{
	"getfattr":    "attr",
	"setfattr":    "attr",
	"etcd":        "etcd-server",
	"fusermount3": "fuse3",
	"vim":         "vim",
}

// Tool returns the path of the first of names found on PATH; without any
// of them, Missing.
func Tool(t testing.TB, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	pkg := names[0]
	if p, ok := packages[pkg]; ok {
		pkg = p
	}
	Missing(t, strings.Join(names, " or ")+" is not on PATH (apt-get install "+pkg+")")
	return ""
}

// Tools is Tool for each of names: all of them are needed.
func Tools(t testing.TB, names ...string) {
	t.Helper()
	var missing, pkgs []string
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			missing = append(missing, n)
			p := n
			if q, ok := packages[n]; ok {
				p = q
			}
			if !slices.Contains(pkgs, p) {
				pkgs = append(pkgs, p)
			}
		}
	}
	if len(missing) > 0 {
		Missing(t, strings.Join(missing, ", ")+" not on PATH (apt-get install "+strings.Join(pkgs, " ")+")")
	}
}
