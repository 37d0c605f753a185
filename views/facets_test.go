package views

import (
	"context"
	"fmt"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/mnemofs/mnemofs/store"
)

// resolve is the inode of dir p, made (with its parents) if missing.
func (v *qcEnv) mkdirs(t testing.TB, p string) uint64 {
	dir := uint64(store.RootIno)
	for _, part := range strings.Split(strings.Trim(p, "/"), "/") {
		if part == "" {
			continue
		}
		in, err := v.st.Lookup(dir, part)
		if err != nil {
			in, err = v.st.Mkdir(dir, part, 0o755, store.Owner{})
		}
		if err != nil {
			t.Fatal(err)
		}
		dir = in.Ino
	}
	return dir
}

// writeAt creates or replaces the file p with text.
func (v *qcEnv) writeAt(t testing.TB, p, text string) {
	dir := v.mkdirs(t, path.Dir(p))
	name := path.Base(p)
	in, err := v.st.Lookup(dir, name)
	if err != nil {
		in, err = v.st.Create(dir, name, 0o644, store.Owner{})
	}
	if err == nil {
		err = v.st.Open(in.Ino, false)
	}
	if err == nil {
		err = v.st.Truncate(in.Ino, 0)
		if err == nil {
			_, err = v.st.WriteAt(in.Ino, []byte(text), 0)
		}
		if rerr := v.st.Release(in.Ino); err == nil {
			err = rerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// The reference answers: the scans the facets replace.

func (e *Engine) scanValues(fi int) []string {
	seen := map[string]bool{}
	for _, ent := range e.cat.all() {
		if e.Match(ent, Filter{}) {
			ent.each(fi, func(v string) {
				if listable(fi, v) {
					seen[v] = true
				}
			})
		}
	}
	out := []string{}
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func (e *Engine) scanDateNames(prefix string) []string {
	var out []string
	for _, day := range e.scanValues(fieldDate) {
		if prefix != "" && !strings.HasPrefix(day, prefix+"/") {
			continue
		}
		part, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(day, prefix), "/"), "/")
		if !slices.Contains(out, part) {
			out = append(out, part)
		}
	}
	return out
}

func (e *Engine) scanRecent(n int) []uint64 {
	var out []*Entry
	for _, ent := range e.cat.all() {
		if e.Match(ent, Filter{}) {
			out = append(out, ent)
		}
	}
	sort.Slice(out, func(a, b int) bool { return newer(out[a], out[b]) })
	return inos(out[:min(n, len(out))])
}

func (e *Engine) scanDirsWith(st *store.Store, f Filter) map[uint64]bool {
	dirs := map[uint64]bool{store.RootIno: true}
	for _, ent := range e.cat.all() {
		if !e.Match(ent, f) {
			continue
		}
		p, err := st.Path(ent.Ino)
		if err != nil {
			continue
		}
		for d := path.Dir(p); ; d = path.Dir(d) {
			ino, err := st.Resolve(d)
			if err == nil {
				dirs[ino] = true
			}
			if d == "/" {
				break
			}
		}
	}
	return dirs
}

var (
	pUsers = []string{"alice", "bob", "a/b"}
	pTags  = []string{"x", "y", "z", "w w"}
	pTypes = []string{"", "fact", "note"}
	pDays  = []string{"", "2024-05-01", "2024-05-02", "2024-06-01", "2023-01-01"}
	pDirs  = []string{"/semantic", "/episodic", "/archive", "/semantic/d", "/archive/d", "/episodic/d/e"}
	pNames = []string{"a.md", "b.md", "c.json", "d.jsonl"}
)

func someOf(t *rapid.T, label string, pool []string) []string {
	var out []string
	for _, v := range pool {
		if rapid.Bool().Draw(t, label+" "+v) {
			out = append(out, v)
		}
	}
	return out
}

func memoryText(t *rapid.T, name string) string {
	users, tags := someOf(t, "user", pUsers), someOf(t, "tag", pTags)
	typ, day := rapid.SampledFrom(pTypes).Draw(t, "type"), rapid.SampledFrom(pDays).Draw(t, "day")
	if strings.HasSuffix(name, ".jsonl") {
		return "{\"line\": 1}\n"
	}
	var b strings.Builder
	b.WriteString("---\n")
	fmt.Fprintf(&b, "users: [%s]\ntags: [%s]\n", strings.Join(users, ", "), strings.Join(tags, ", "))
	if typ != "" {
		fmt.Fprintf(&b, "type: %s\n", typ)
	}
	if day != "" {
		fmt.Fprintf(&b, "created: %s\n", day)
	}
	b.WriteString("---\nbody\n")
	return b.String()
}

// TestFacetsAgreeWithScans writes, rewrites, moves (into and out of
// /archive, with their directories) and removes memories at random, and
// checks after each step that the facets answer as the scans over the
// catalog they replace.
func TestFacetsAgreeWithScans(t *testing.T) {
	v := newQCEnv(t, 0)
	rapid.Check(t, func(rt *rapid.T) {
		for range rapid.IntRange(1, 8).Draw(rt, "steps") {
			p := rapid.SampledFrom(pDirs).Draw(rt, "dir") + "/" + rapid.SampledFrom(pNames).Draw(rt, "name")
			switch rapid.IntRange(0, 4).Draw(rt, "op") {
			case 0, 1:
				v.writeAt(t, p, memoryText(rt, p))
			case 2:
				dir := v.mkdirs(t, path.Dir(p))
				_, _ = v.st.Remove(dir, path.Base(p)) // to the trash (under /archive) or gone
			case 3:
				to := rapid.SampledFrom(pDirs).Draw(rt, "to") + "/" + rapid.SampledFrom(pNames).Draw(rt, "to name")
				_ = v.st.Rename(v.mkdirs(t, path.Dir(p)), path.Base(p), v.mkdirs(t, path.Dir(to)), path.Base(to), 0)
			case 4: // a directory moves into or out of the archive
				from, to := "/semantic", "/archive"
				if rapid.Bool().Draw(rt, "back") {
					from, to = to, from
				}
				v.mkdirs(t, from+"/d")
				_ = v.st.Rename(v.mkdirs(t, from), "d", v.mkdirs(t, to), "d", 0)
			}
		}
		checkFacets(rt, v.e, v.st)
		checkMatch(rt, v.e)
	})
}

// checkMatch: a search's filter, which reads the catalog alone (which
// memories are archived, where each one is), passes what the store's
// paths say it should, for every memory.
func checkMatch(t *rapid.T, e *Engine) {
	e.Ready()
	var inos []uint64
	e.cat.eachIno(func(ino uint64) { inos = append(inos, ino) })
	for _, ino := range inos {
		p, err := e.st.Path(ino)
		if err != nil {
			t.Fatalf("memory %d in the catalog has no path: %v", ino, err)
		}
		if got, want := e.MatchIno(ino, Filter{}), !archived(p); got != want {
			t.Fatalf("MatchIno(%s, no filter) = %v, want %v", p, got, want)
		}
		if !e.MatchIno(ino, Filter{Archived: true}) || !e.MatchIno(ino, Filter{Path: p, Archived: true}) {
			t.Fatalf("MatchIno(%s, archived too; its own path) = false", p)
		}
		for _, dir := range []string{"/semantic", "/archive/d", "/episodic/d"} {
			want := strings.HasPrefix(p, dir+"/") && !archived(p)
			if got := e.MatchIno(ino, Filter{Path: dir}); got != want {
				t.Fatalf("MatchIno(%s, path %s) = %v, want %v", p, dir, got, want)
			}
			want = strings.HasPrefix(p, dir+"/")
			if got := e.MatchIno(ino, Filter{Path: dir, Archived: true}); got != want {
				t.Fatalf("MatchIno(%s, path %s, archived too) = %v, want %v", p, dir, got, want)
			}
		}
	}
}

func checkFacets(t *rapid.T, e *Engine, st *store.Store) {
	e.Ready()
	pools := map[string][]string{"user": pUsers, "type": append(pTypes, "semantic", "episodic", "archive"), "tag": pTags}
	for field, pool := range pools {
		fi, _ := fieldIndex(field)
		want := e.scanValues(fi)
		if got := e.Values(field, Filter{}); !reflect.DeepEqual(got, want) {
			t.Fatalf("Values(%s) = %q, the scan gives %q", field, got, want)
		}
		for _, val := range pool {
			if got := e.HasValue(field, val); got != slices.Contains(want, val) {
				t.Fatalf("HasValue(%s, %q) = %v, the scan lists %q", field, val, got, want)
			}
			if got, want := e.DirsWith(Filter{Tags: []string{val}}), e.scanDirsWith(st, Filter{Tags: []string{val}}); field == "tag" && !reflect.DeepEqual(got, want) {
				t.Fatalf("DirsWith(tag %q) = %v, the scan gives %v", val, got, want)
			}
		}
	}
	days := e.scanValues(fieldDate)
	if got := e.Values("date", Filter{}); !reflect.DeepEqual(got, days) {
		t.Fatalf("Values(date) = %q, the scan gives %q", got, days)
	}
	for _, prefix := range []string{"", "2024", "2024/05", "2023", "2023/01", "2025"} {
		got, want := e.DateNames(prefix), e.scanDateNames(prefix)
		if len(got) != 0 || len(want) != 0 {
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("DateNames(%q) = %q, the scan gives %q", prefix, got, want)
			}
		}
		for _, name := range []string{"2024", "2023", "05", "06", "01", "02", "2025"} {
			p := strings.TrimPrefix(prefix+"/"+name, "/")
			if got := e.HasDate(p); got != slices.Contains(want, name) {
				t.Fatalf("HasDate(%q) = %v, the scan lists %q under %q", p, got, want, prefix)
			}
		}
	}
	if got, want := e.Recent(3, Filter{}), e.scanRecent(3); !reflect.DeepEqual(got, want) {
		t.Fatalf("Recent(3) = %v, the scan gives %v", got, want)
	}
	if got, want := e.DirsWith(Filter{Date: "2024/05/01"}), e.scanDirsWith(st, Filter{Date: "2024/05/01"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("DirsWith(date) = %v, the scan gives %v", got, want)
	}
}

// TestListingsDoNotScan lists and looks up every value of by-tag/,
// by-date/ and recent/ the way a READDIRPLUS does, and counts the walks
// over the catalog: before the facets, each lookup walked it (and sorted
// every value), which made one listing quadratic.
func TestListingsDoNotScan(t *testing.T) {
	v := newQCEnv(t, 0)
	const n = 300
	for i := range n {
		v.writeAt(t, fmt.Sprintf("/semantic/m%d.md", i), fmt.Sprintf("---\ntags: [own%d, shared]\ncreated: 2024-05-%02d\n---\nbody\n", i, i%28+1))
	}
	v.e.Ready()
	before := v.e.CatalogScans()
	tags := v.e.Values("tag", Filter{})
	if len(tags) != n+1 {
		t.Fatalf("%d tags, want %d", len(tags), n+1)
	}
	for _, tag := range tags {
		if !v.e.HasValue("tag", tag) || len(v.e.Values("tag", Filter{})) != n+1 {
			t.Fatalf("lookup of %q", tag)
		}
		if len(v.e.DirsWith(Filter{Tags: []string{tag}})) < 2 {
			t.Fatalf("view by-tag/%s is empty", tag)
		}
	}
	for _, day := range v.e.DateNames("2024/05") {
		if !v.e.HasDate("2024/05/" + day) {
			t.Fatalf("by-date/2024/05/%s missing", day)
		}
	}
	for range n {
		v.e.Recent(50, Filter{})
	}
	// The unfiltered Recent walks the catalog once for this generation.
	if got := v.e.CatalogScans() - before; got > 1 {
		t.Fatalf("listing by-tag/, by-date/ and recent/ walked the catalog %d times", got)
	}
}

// TestCancelled: a done context stops a filtered walk and a search.
func TestCancelled(t *testing.T) {
	v := newQCEnv(t, 0)
	for i := range 2000 {
		v.writeAt(t, fmt.Sprintf("/semantic/m%d.md", i), "common words here\n")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q, _ := ParseQuery("common")
	if rs, err := v.e.SearchCtx(ctx, q, Filter{}); err == nil {
		t.Fatalf("search went on: %d results", len(rs))
	}
	if _, err := v.e.RecentCtx(ctx, 10, Filter{Path: "/semantic"}); err == nil {
		t.Fatal("filtered recent went on")
	}
	if _, err := v.e.DirsWithCtx(ctx, Filter{Path: "/semantic"}); err == nil {
		t.Fatal("DirsWith went on")
	}
	if _, err := v.e.ContextCtx(ctx, q, Filter{}); err == nil {
		t.Fatal("context went on")
	}
	// Not cancelled, the same work is done, and not cached as empty.
	if rs := v.e.Search(q, Filter{}); len(rs) == 0 {
		t.Fatal("no results")
	}
}
