package e2e

// Snapshots of a directory tree, and their comparison.

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// node is one entry of a tree snapshot.
type node struct {
	mode fs.FileMode // type and permission bits
	data string      // file content or symlink target
}

// snapshot records every entry below root (root itself excluded); nil
// (after reporting) when root cannot be read.
func snapshot(t testing.TB, root string) map[string]node {
	t.Helper()
	if _, err := os.Lstat(root); err != nil {
		t.Errorf("snapshot: %v", err)
		return nil
	}
	out := map[string]node{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Errorf("walking %s: listed but cannot be looked up: %v", p, err)
			return nil
		}
		n := node{mode: fi.Mode() & (fs.ModeType | fs.ModePerm)}
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				t.Errorf("walking %s: %v", p, err)
			}
			n.data = string(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			if n.data, err = os.Readlink(p); err != nil {
				t.Errorf("walking %s: %v", p, err)
			}
		}
		out[rel] = n
		return nil
	})
	if err != nil {
		t.Errorf("walking %s: %v", root, err)
	}
	return out
}

// compareTrees reports every difference between two snapshots.
func compareTrees(t testing.TB, what string, want, got map[string]node) {
	t.Helper()
	if got == nil {
		return // snapshot already failed
	}
	names := slices.Sorted(maps.Keys(want))
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	for bad, n := 0, 0; n < len(names) && bad < 20; n++ {
		w, wok := want[names[n]]
		g, gok := got[names[n]]
		msg := ""
		switch {
		case !gok:
			msg = "missing"
		case !wok:
			msg = fmt.Sprintf("unexpected entry (%v)", g.mode)
		case w.mode != g.mode:
			msg = fmt.Sprintf("mode %v, want %v", g.mode, w.mode)
		case w.data != g.data && w.mode&fs.ModeSymlink != 0:
			msg = fmt.Sprintf("symlink target %q, want %q", g.data, w.data)
		case w.data != g.data:
			msg = fmt.Sprintf("content differs: %d bytes, want %d", len(g.data), len(w.data))
		default:
			continue
		}
		bad++
		t.Errorf("%s: %q: %s", what, names[n], msg)
	}
}
