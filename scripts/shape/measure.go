package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Measures is what Measure found in the module.
type Measures struct {
	Module string
	// Files are the lines of every non-test .go file, by path from the
	// root; Packages the sums per directory.
	Files    map[string]int
	Packages map[string]int
	// Types are the module's named types, largest method count first.
	Types []TypeSize
	// FacadeImports are the packages under store/ that import store.
	FacadeImports []string
	// NSLock names the namespace lock ("" when none was found), Direct
	// the calls of its Unlock, Helpers the functions that release it for
	// their caller (they unlock without locking), and ViaHelpers the calls
	// of those from elsewhere.
	NSLock     string
	Direct     []Site
	Helpers    []string
	ViaHelpers []Site
}

// TypeSize is one named type: its methods (declared in the module,
// promoted ones included) and its fields (through embedded structs of its
// own package: what the value holds).
type TypeSize struct {
	Name     string // package path from the module, a dot, the name
	Methods  int
	Exported int
	Fields   int
}

// Site is a place in the code, and the function it is in.
type Site struct {
	File string
	Line int
	Func string
}

func (s Site) String() string { return fmt.Sprintf("%s:%d (%s)", s.File, s.Line, s.Func) }

type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	Export     string
	Standard   bool
	Module     *struct{ Main bool }
	Error      *struct{ Err string }
}

// Measure measures the module whose root directory is root.
func Measure(root string) (*Measures, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	m := &Measures{Files: map[string]int{}, Packages: map[string]int{}}
	if err := m.countLines(root); err != nil {
		return nil, err
	}
	pkgs, exports, err := list(root)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	if line, _, _ := bytes.Cut(b, []byte("\n")); bytes.HasPrefix(line, []byte("module ")) {
		m.Module = strings.TrimSpace(string(line[len("module "):]))
	}
	if m.Module == "" {
		return nil, errors.New("go.mod does not begin with its module path")
	}
	var own []*listed
	for _, p := range pkgs {
		if p.Module != nil && p.Module.Main && !p.Standard {
			own = append(own, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	facade := m.Module + "/store"
	checked := map[string]*checkedPkg{}
	for _, p := range own {
		if strings.HasPrefix(p.ImportPath, facade+"/") && slices.Contains(p.Imports, facade) {
			m.FacadeImports = append(m.FacadeImports, m.rel(p.ImportPath))
		}
		c, err := check(fset, imp, p)
		if err != nil {
			return nil, err
		}
		checked[m.rel(p.ImportPath)] = c
		m.Types = append(m.Types, m.sizes(c.pkg)...)
	}
	sort.Strings(m.FacadeImports)
	sort.Slice(m.Types, func(a, b int) bool {
		if m.Types[a].Methods != m.Types[b].Methods {
			return m.Types[a].Methods > m.Types[b].Methods
		}
		return m.Types[a].Name < m.Types[b].Name
	})
	m.locks(root, fset, checked)
	return m, nil
}

// rel is an import path from the module ("" for its root).
func (m *Measures) rel(ip string) string {
	return strings.TrimPrefix(strings.TrimPrefix(ip, m.Module), "/")
}

// countLines counts the lines of every non-test .go file under root.
func (m *Measures) countLines(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n := bytes.Count(b, []byte("\n"))
		if len(b) > 0 && b[len(b)-1] != '\n' {
			n++
		}
		rel, _ := filepath.Rel(root, p)
		m.Files[filepath.ToSlash(rel)] = n
		m.Packages[filepath.ToSlash(filepath.Dir(rel))] += n
		return nil
	})
}

// list runs go list in root and returns the packages and where their
// export data is.
func list(root string) ([]*listed, map[string]string, error) {
	cmd := exec.Command("go", "list", "-export", "-deps", "-json", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go list: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []*listed
	exports := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := &listed{}
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, nil, err
		}
		if p.Error != nil {
			return nil, nil, fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
		if p.Export != "" {
			exports[p.ImportPath] = p.Export
		}
	}
	return pkgs, exports, nil
}

type checkedPkg struct {
	pkg   *types.Package
	info  *types.Info
	files []*ast.File
}

// check type-checks the non-test files of p.
func check(fset *token.FileSet, imp types.Importer, p *listed) (*checkedPkg, error) {
	c := &checkedPkg{info: &types.Info{
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}}
	for _, n := range append(append([]string{}, p.GoFiles...), p.CgoFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		c.files = append(c.files, f)
	}
	conf := types.Config{Importer: imp, FakeImportC: true}
	pkg, err := conf.Check(p.ImportPath, fset, c.files, c.info)
	if err != nil {
		return nil, fmt.Errorf("type-checking %s: %v", p.ImportPath, err)
	}
	c.pkg = pkg
	return c, nil
}

// sizes measures the named types of pkg.
func (m *Measures) sizes(pkg *types.Package) []TypeSize {
	var out []TypeSize
	scope := pkg.Scope()
	for _, n := range scope.Names() {
		tn, ok := scope.Lookup(n).(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		nt, ok := tn.Type().(*types.Named)
		if !ok {
			continue
		}
		ts := TypeSize{Name: m.rel(pkg.Path()) + "." + n}
		var ms *types.MethodSet
		if types.IsInterface(nt) {
			ms = types.NewMethodSet(nt)
		} else {
			ms = types.NewMethodSet(types.NewPointer(nt))
		}
		for i := range ms.Len() {
			f := ms.At(i).Obj()
			if f.Pkg() != nil && (f.Pkg().Path() == m.Module || strings.HasPrefix(f.Pkg().Path(), m.Module+"/")) {
				ts.Methods++
				if f.Exported() {
					ts.Exported++
				}
			}
		}
		ts.Fields = fields(nt, pkg)
		out = append(out, ts)
	}
	return out
}

// fields counts the fields of t, counting for an embedded struct of pkg
// its fields instead of itself.
func fields(t types.Type, pkg *types.Package) int {
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return 0
	}
	n := 0
	for i := range st.NumFields() {
		f := st.Field(i)
		ft := f.Type()
		if p, ok := ft.(*types.Pointer); ok {
			ft = p.Elem()
		}
		if nt, ok := ft.(*types.Named); ok && f.Embedded() && nt.Obj().Pkg() == pkg {
			if _, isStruct := nt.Underlying().(*types.Struct); isStruct {
				n += fields(nt, pkg)
				continue
			}
		}
		n++
	}
	return n
}
