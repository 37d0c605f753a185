package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mnemofs/mnemofs/store"
)

// release is the version of a release build, set at build time
// (-ldflags "-X main.release=v1.2.3"); otherwise the module version the
// Go toolchain recorded ("(devel)" for a build from a checkout).
var release = ""

// engines are the modules whose versions decide the on-disk and on-wire
// formats and the kernel protocol, with the names 'mnemofs version' gives.
var engines = []struct{ name, path string }{
	{"badger", "github.com/dgraph-io/badger/v4"},
	{"etcd client", "go.etcd.io/etcd/client/v3"},
	{"go-fuse", "github.com/hanwen/go-fuse/v2"},
}

// versionText is what 'mnemofs version' and 'mnemofs --version' print:
// the version, the commit and its date (from the build info the Go
// toolchain records for a build from a git checkout), the Go version,
// and the engines' versions.
func versionText() string {
	v, commit, date := release, "unknown", "unknown"
	deps := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				date = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && commit != "unknown" {
			commit += " (with uncommitted changes)"
		}
		for _, d := range bi.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			deps[d.Path] = d.Version
		}
	}
	if v == "" {
		v = "unknown"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mnemofs %s\n", v)
	fmt.Fprintf(&b, "- commit: %s\n", commit)
	fmt.Fprintf(&b, "- date: %s\n", date)
	fmt.Fprintf(&b, "- go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, e := range engines {
		d := deps[e.path]
		if d == "" {
			d = "unknown"
		}
		fmt.Fprintf(&b, "- %s: %s\n", e.name, d)
	}
	fmt.Fprintf(&b, "- store format: %d\n", store.Format)
	return b.String()
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the version, commit, build date, Go version and the engines' versions",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fmt.Print(versionText())
			return nil
		},
	}
}
