package fusefs

// The model test's comparison of the two trees (model_test.go).

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"
)

// modelEntry is what is compared of one name.
type modelEntry struct {
	mode  uint32
	size  int64
	nlink uint64
	data  string // content or symlink target
	group int    // hard links of one inode share a group
}

func (e modelEntry) String() string {
	return fmt.Sprintf("mode %o size %d nlink %d group %d %d bytes", e.mode, e.size, e.nlink, e.group, len(e.data))
}

// modelTree snapshots dir. Hard-link groups are numbered by the first path
// (in walk order) of each inode, so that the two trees can be compared.
func modelTree(dir string) (map[string]modelEntry, error) {
	out := map[string]modelEntry{}
	groups := map[uint64]int{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return fmt.Errorf("%s listed but lstat fails: %w", rel, err)
		}
		e := modelEntry{mode: st.Mode, nlink: st.Nlink}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			b, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("read %s: %w", rel, err)
			}
			e.size, e.data = st.Size, string(b)
		case unix.S_IFLNK:
			t, err := os.Readlink(p)
			if err != nil {
				return fmt.Errorf("readlink %s: %w", rel, err)
			}
			e.size, e.data = st.Size, t
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			g, ok := groups[st.Ino]
			if !ok {
				g = len(groups) + 1
				groups[st.Ino] = g
			}
			e.group = g
		}
		out[rel] = e
		return nil
	})
	return out, err
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func compareModel(rt *rapid.T, step int, o modelOp, mdir, ndir string) {
	m, err := modelTree(mdir)
	if err != nil {
		rt.Fatalf("step %d: %v: walking the mount: %v", step, o, err)
	}
	n, err := modelTree(ndir)
	if err != nil {
		rt.Fatalf("step %d: %v: walking the local disk: %v", step, o, err)
	}
	if diffs := modelDiffs(m, n); len(diffs) > 0 {
		rt.Fatalf("step %d: after %v the trees differ:\n  %s", step, o, strings.Join(diffs, "\n  "))
	}
}

// modelDiffs describes every difference between the mount's tree m and
// the local disk's n.
func modelDiffs(m, n map[string]modelEntry) []string {
	var diffs []string
	names := map[string]bool{}
	for k := range m {
		names[k] = true
	}
	for k := range n {
		names[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(names)) {
		me, mok := m[k]
		ne, nok := n[k]
		switch {
		case !mok:
			diffs = append(diffs, fmt.Sprintf("%s: missing on the mount (local disk: %v)", k, ne))
		case !nok:
			diffs = append(diffs, fmt.Sprintf("%s: only on the mount (%v)", k, me))
		case me.data != ne.data && me.mode == ne.mode:
			diffs = append(diffs, fmt.Sprintf("%s: content differs: mount %v, local disk %v, first difference at %d", k, me, ne, firstDiff(me.data, ne.data)))
		case me != ne:
			diffs = append(diffs, fmt.Sprintf("%s: mount %v, local disk %v", k, me, ne))
		}
	}
	return diffs
}
