package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Rule is one limit the code is held to.
type Rule struct {
	Name  string
	Limit string
	// Enforced: it holds, and -check and TestShape fail when it stops
	// holding. A rule the reshape has still to make hold is not.
	Enforced bool
	// eval returns the measured value, whether the rule holds, and what
	// breaks it.
	eval func(m *Measures) (value int, holds bool, detail string)
}

// Rules are the limits of the store's layout.
var Rules = []Rule{
	{Name: "store/ facade lines", Limit: "< 3000", eval: func(m *Measures) (int, bool, string) {
		n := m.Packages["store"]
		return n, n < 3000, fmt.Sprintf("store/ has %d lines in its own non-test files", n)
	}},
	{Name: "largest package lines", Limit: "<= 4000", eval: func(m *Measures) (int, bool, string) {
		var over []string
		top := 0
		for _, p := range sortedKeys(m.Packages) {
			n := m.Packages[p]
			top = max(top, n)
			if n > 4000 {
				over = append(over, fmt.Sprintf("%s %d", p, n))
			}
		}
		return top, len(over) == 0, "over: " + strings.Join(over, ", ")
	}},
	{Name: "largest non-test file lines", Limit: "<= 400", eval: func(m *Measures) (int, bool, string) {
		var over []string
		top := 0
		for _, f := range sortedKeys(m.Files) {
			n := m.Files[f]
			top = max(top, n)
			if n > 400 {
				over = append(over, fmt.Sprintf("%s %d", f, n))
			}
		}
		return top, len(over) == 0, fmt.Sprintf("%d files over: %s", len(over), strings.Join(over, ", "))
	}},
	{Name: "most methods of a type", Limit: "<= 80", eval: func(m *Measures) (int, bool, string) {
		var over []string
		top := 0
		for _, t := range m.Types {
			top = max(top, t.Methods)
			if t.Methods > 80 {
				over = append(over, fmt.Sprintf("%s %d", t.Name, t.Methods))
			}
		}
		return top, len(over) == 0, "over: " + strings.Join(over, ", ")
	}},
	fieldRule("store.Store", false),
	fieldRule("views.Engine", true),
	{Name: "packages under store/ importing store", Limit: "0", Enforced: true, eval: func(m *Measures) (int, bool, string) {
		return len(m.FacadeImports), len(m.FacadeImports) == 0, "importing the facade: " + strings.Join(m.FacadeImports, ", ")
	}},
	{Name: "namespace lock Unlock calls", Limit: "<= 2", eval: func(m *Measures) (int, bool, string) {
		if m.NSLock == "" {
			return 0, false, "the namespace lock was not found (nsLocks in scripts/shape)"
		}
		var at []string
		for _, s := range m.Direct {
			at = append(at, s.String())
		}
		return len(m.Direct), len(m.Direct) <= 2, fmt.Sprintf("%s released at %s", m.NSLock, strings.Join(at, ", "))
	}},
}

func fieldRule(name string, enforced bool) Rule {
	return Rule{Name: name + " fields", Limit: "<= 25", Enforced: enforced, eval: func(m *Measures) (int, bool, string) {
		for _, t := range m.Types {
			if t.Name == name {
				return t.Fields, t.Fields <= 25, fmt.Sprintf("%s has %d fields", name, t.Fields)
			}
		}
		return 0, false, name + " was not found"
	}}
}

// Result is a rule applied to the measures.
type Result struct {
	Rule   Rule
	Value  int
	Holds  bool
	Detail string
}

// Evaluate applies every rule.
func (m *Measures) Evaluate() []Result {
	var out []Result
	for _, r := range Rules {
		v, ok, d := r.eval(m)
		out = append(out, Result{Rule: r, Value: v, Holds: ok, Detail: d})
	}
	return out
}

// Print writes the report: the rules, then the measures behind them
// (all of them with verbose).
func Print(w io.Writer, m *Measures, results []Result, verbose bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "rule\tvalue\tlimit\tenforced\tholds")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Rule.Name, r.Value, r.Rule.Limit, yes(r.Rule.Enforced), yes(r.Holds))
	}
	tw.Flush()

	n := 10
	if verbose {
		n = 1 << 30
	}
	fmt.Fprintln(w, "\npackages (non-test lines):")
	pkgs := sortedKeys(m.Packages)
	sort.SliceStable(pkgs, func(a, b int) bool { return m.Packages[pkgs[a]] > m.Packages[pkgs[b]] })
	for _, p := range pkgs[:min(n, len(pkgs))] {
		fmt.Fprintf(w, "  %6d  %s\n", m.Packages[p], p)
	}
	fmt.Fprintln(w, "\nnon-test files over 400 lines:")
	for _, f := range sortedKeys(m.Files) {
		if m.Files[f] > 400 {
			fmt.Fprintf(w, "  %6d  %s\n", m.Files[f], f)
		}
	}
	fmt.Fprintln(w, "\ntypes by methods (exported, fields):")
	for _, t := range m.Types[:min(n, len(m.Types))] {
		fmt.Fprintf(w, "  %4d  %s (%d exported, %d fields)\n", t.Methods, t.Name, t.Exported, t.Fields)
	}
	fmt.Fprintf(w, "\nnamespace lock: %s\n", or(m.NSLock, "not found"))
	fmt.Fprintf(w, "  released by Unlock: %d\n", len(m.Direct))
	if verbose {
		for _, s := range m.Direct {
			fmt.Fprintf(w, "    %s\n", s)
		}
	}
	fmt.Fprintf(w, "  released through helpers (%s): %d\n", strings.Join(m.Helpers, ", "), len(m.ViaHelpers))
	if verbose {
		for _, s := range m.ViaHelpers {
			fmt.Fprintf(w, "    %s\n", s)
		}
	}
	fmt.Fprintf(w, "  places that release it: %d\n", len(m.Direct)+len(m.ViaHelpers))
	if len(m.FacadeImports) > 0 {
		fmt.Fprintf(w, "\npackages under store/ importing store: %s\n", strings.Join(m.FacadeImports, ", "))
	}
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func or(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
