package main

import (
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
)

// nsLocks are where the namespace lock may live, in the order looked
// for: the field mu of these types.
var nsLocks = [][2]string{{"store", "core"}, {"store", "Store"}, {"store/internal/namespace", "Space"}}

// locks finds the namespace lock and every place that releases it.
func (m *Measures) locks(root string, fset *token.FileSet, checked map[string]*checkedPkg) {
	var lock *types.Var
	for _, c := range nsLocks {
		p := checked[c[0]]
		if p == nil {
			continue
		}
		tn, ok := p.pkg.Scope().Lookup(c[1]).(*types.TypeName)
		if !ok {
			continue
		}
		st, ok := tn.Type().Underlying().(*types.Struct)
		if !ok {
			continue
		}
		for i := range st.NumFields() {
			if f := st.Field(i); f.Name() == "mu" && !f.Embedded() {
				lock, m.NSLock = f, c[0]+"."+c[1]+".mu"
			}
		}
		if lock != nil {
			break
		}
	}
	if lock == nil {
		return
	}
	type call struct {
		callee *types.Func
		site   Site
	}
	unlocks := map[*types.Func]bool{} // functions that release it directly
	lockers := map[*types.Func]bool{} // functions that take it
	calls := map[*types.Func][]call{}
	var names []string
	for name := range checked {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := checked[name]
		for _, f := range c.files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				fn, _ := c.info.Defs[fd.Name].(*types.Func)
				fname := funcName(fd)
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					ce, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					pos := fset.Position(ce.Pos())
					rel, _ := filepath.Rel(root, pos.Filename)
					site := Site{File: filepath.ToSlash(rel), Line: pos.Line, Func: fname}
					var callee *types.Func
					switch f := ce.Fun.(type) {
					case *ast.Ident:
						callee, _ = c.info.Uses[f].(*types.Func)
					case *ast.SelectorExpr:
						if inner, ok := f.X.(*ast.SelectorExpr); ok {
							if s := c.info.Selections[inner]; s != nil && s.Kind() == types.FieldVal && s.Obj() == lock {
								switch f.Sel.Name {
								case "Unlock":
									m.Direct = append(m.Direct, site)
									unlocks[fn] = true
								case "Lock", "TryLock":
									lockers[fn] = true
								}
								return true
							}
						}
						if s := c.info.Selections[f]; s != nil {
							callee, _ = s.Obj().(*types.Func)
						} else {
							callee, _ = c.info.Uses[f.Sel].(*types.Func)
						}
					}
					if callee != nil && fn != nil {
						calls[fn] = append(calls[fn], call{callee, site})
					}
					return true
				})
			}
		}
	}
	// A helper releases the lock its caller took: it unlocks, directly
	// or through a helper, and never locks.
	helpers := map[*types.Func]bool{}
	for fn := range unlocks {
		if fn != nil && !lockers[fn] {
			helpers[fn] = true
		}
	}
	for grew := true; grew; {
		grew = false
		for fn, cs := range calls {
			if helpers[fn] || lockers[fn] {
				continue
			}
			for _, c := range cs {
				if helpers[c.callee] {
					helpers[fn], grew = true, true
					break
				}
			}
		}
	}
	for fn := range helpers {
		m.Helpers = append(m.Helpers, fn.Name())
	}
	sort.Strings(m.Helpers)
	for fn, cs := range calls {
		if helpers[fn] {
			continue
		}
		for _, c := range cs {
			if helpers[c.callee] {
				m.ViaHelpers = append(m.ViaHelpers, c.site)
			}
		}
	}
	sortSites(m.Direct)
	sortSites(m.ViaHelpers)
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

func sortSites(s []Site) {
	sort.Slice(s, func(a, b int) bool {
		if s[a].File != s[b].File {
			return s[a].File < s[b].File
		}
		return s[a].Line < s[b].Line
	})
}
