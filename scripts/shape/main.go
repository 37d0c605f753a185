// Command shape measures the shape of the module's code against the
// limits the store's layout is held to: the size of the store's facade,
// of every package and of every file, the methods of every type, the
// fields of store.Store and views.Engine, which packages under store/
// import the facade, and the places that release the store's namespace
// lock.
//
//	go run ./scripts/shape            # report every measure
//	go run ./scripts/shape -v         # ... with what each one counted
//	go run ./scripts/shape -check     # fail when an enforced rule fails
//	go run ./scripts/shape -strict    # fail when any rule fails
//
// A rule is enforced when it holds today and must keep holding (the
// Enforced column of the report, and TestShape, which CI runs). The
// others are reported until the reshape that makes them hold; -strict
// checks them all.
//
// It reads the packages with `go list -export -deps -json ./...` and
// type-checks the module's non-test files against their dependencies'
// export data, so it needs the module to build.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	root := flag.String("root", ".", "the module's root directory")
	check := flag.Bool("check", false, "exit 1 when an enforced rule fails")
	strict := flag.Bool("strict", false, "exit 1 when any rule fails")
	verbose := flag.Bool("v", false, "list what each measure counted")
	flag.Parse()
	m, err := Measure(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "shape:", err)
		os.Exit(2)
	}
	results := m.Evaluate()
	Print(os.Stdout, m, results, *verbose)
	failed := false
	for _, r := range results {
		if !r.Holds && (*strict || (*check && r.Rule.Enforced)) {
			fmt.Fprintf(os.Stderr, "shape: %s: %s\n", r.Rule.Name, r.Detail)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}
