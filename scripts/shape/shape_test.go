package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestShape measures this module and fails when an enforced rule does not
// hold (the rules the reshape has still to make hold are reported with
// -v, not checked).
func TestShape(t *testing.T) {
	m, err := Measure("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range m.Evaluate() {
		if r.Rule.Enforced && !r.Holds {
			t.Errorf("%s (limit %s): %d: %s", r.Rule.Name, r.Rule.Limit, r.Value, r.Detail)
		}
	}
	// What the rules read was found, so that a move does not turn a rule
	// off by hiding what it measures.
	if m.NSLock == "" {
		t.Error("the namespace lock was not found: update nsLocks")
	}
	for _, name := range []string{"store.Store", "views.Engine"} {
		if !slices.ContainsFunc(m.Types, func(ts TypeSize) bool { return ts.Name == name && ts.Methods > 0 }) {
			t.Errorf("%s was not found, or has no methods", name)
		}
	}
	if m.Packages["store"] == 0 {
		t.Error("no lines counted in store/")
	}
}

// TestShapeMeasures measures a small module made for it, whose every
// count is known.
func TestShapeMeasures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	write("store/store.go", `package store

import "sync"

type core struct {
	mu   sync.Mutex
	a, b int
}

type other struct{ mu sync.Mutex }

type Store struct {
	*core
	o    other
	opts int
}

func (s *Store) unlock()    { s.mu.Unlock() }
func (s *Store) unlockAll() { s.unlock() }
func (s *Store) Do()        { s.mu.Lock(); s.unlockAll() }
func (s *Store) Barrier()   { s.mu.Lock(); s.mu.Unlock() }
func (s *Store) Other()     { s.o.mu.Lock(); s.o.mu.Unlock() }
`)
	write("store/store_test.go", "package store\n\n"+strings.Repeat("// a test line\n", 500))
	write("store/internal/x/x.go", "package x\n\nimport _ \"example.com/m/store\"\n")
	write("store/internal/y/y.go", "package y\n")
	m, err := Measure(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Module != "example.com/m" {
		t.Errorf("module %q", m.Module)
	}
	if m.Packages["store"] != 22 || m.Files["store/store.go"] != 22 || len(m.Files) != 3 {
		t.Errorf("lines: packages %v, files %v; want store 22 lines, 3 files (no test file)", m.Packages, m.Files)
	}
	if !slices.Equal(m.FacadeImports, []string{"store/internal/x"}) {
		t.Errorf("importing store: %v, want store/internal/x", m.FacadeImports)
	}
	i := slices.IndexFunc(m.Types, func(ts TypeSize) bool { return ts.Name == "store.Store" })
	if i < 0 || m.Types[i].Methods != 5 || m.Types[i].Exported != 3 || m.Types[i].Fields != 5 {
		t.Errorf("store.Store: %+v, want 5 methods (3 exported), 5 fields (core's 3, o, opts)", m.Types)
	}
	if m.NSLock != "store.core.mu" {
		t.Errorf("namespace lock %q", m.NSLock)
	}
	var direct, via []string
	for _, s := range m.Direct {
		direct = append(direct, s.Func)
	}
	for _, s := range m.ViaHelpers {
		via = append(via, s.Func)
	}
	if !slices.Equal(direct, []string{"Store.unlock", "Store.Barrier"}) ||
		!slices.Equal(m.Helpers, []string{"unlock", "unlockAll"}) || !slices.Equal(via, []string{"Store.Do"}) {
		t.Errorf("released by Unlock in %v, helpers %v, through helpers in %v; want [Store.unlock Store.Barrier], [unlock unlockAll], [Store.Do]",
			direct, m.Helpers, via)
	}
	byName := map[string]Result{}
	for _, r := range m.Evaluate() {
		byName[r.Rule.Name] = r
	}
	if r := byName["packages under store/ importing store"]; r.Holds || r.Value != 1 {
		t.Errorf("the import rule: %+v", r)
	}
	if r := byName["namespace lock Unlock calls"]; !r.Holds || r.Value != 2 {
		t.Errorf("the lock rule: %+v", r)
	}
	if r := byName["views.Engine fields"]; r.Holds {
		t.Errorf("a rule on a type that is not there holds: %+v", r)
	}
}
