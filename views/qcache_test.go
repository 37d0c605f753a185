package views

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/cache"
	"github.com/mnemofs/mnemofs/store"
)

type qcEnv struct {
	t  *testing.T
	st *store.Store
	e  *Engine
}

func newQCEnv(t *testing.T, cacheBytes int64) *qcEnv {
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	e := NewEngine(nil)
	e.SetCacheBytes(cacheBytes)
	st, err := store.Open(kv, store.Options{OnChange: e.Handle, ScratchAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(st)
	t.Cleanup(func() { e.Stop(); st.Close(); kv.Close() })
	return &qcEnv{t, st, e}
}

// write creates or replaces /name with text.
func (v *qcEnv) write(name, text string) uint64 {
	v.t.Helper()
	in, err := v.st.Lookup(store.RootIno, name)
	if err != nil {
		in, err = v.st.Create(store.RootIno, name, 0o644, store.Owner{})
	}
	if err == nil {
		err = v.st.Open(in.Ino, false)
	}
	if err == nil {
		err = v.st.Truncate(in.Ino, 0)
		_, werr := v.st.WriteAt(in.Ino, []byte(text), 0)
		err = errors.Join(err, werr, v.st.Release(in.Ino))
	}
	if err != nil {
		v.t.Fatal(err)
	}
	return in.Ino
}

// search runs query and renders the results as "path: snippet" lines.
func (v *qcEnv) search(query string, scope Filter) string {
	v.t.Helper()
	q, err := ParseQuery(query)
	if err != nil {
		v.t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range v.e.WithSnippets(q, v.e.Search(q, scope)) {
		fmt.Fprintf(&b, "%s: %s\n", r.Path, r.Snippet)
	}
	return b.String()
}

func (v *qcEnv) want(query string, scope Filter, want string) {
	v.t.Helper()
	for k := 0; k < 2; k++ { // the second from the cache
		if got := v.search(query, scope); got != want {
			v.t.Fatalf("search %q (try %d):\n%s\nwant:\n%s", query, k+1, got, want)
		}
	}
}

// TestQueryCacheNeverStale: a search repeated with nothing changed is
// answered from the cache; after any change (a new memory, a rewrite, a
// rename, a removal) the next search sees it.
func TestQueryCacheNeverStale(t *testing.T) {
	v := newQCEnv(t, 1<<20)
	v.write("a.md", "alpha one")
	v.want("alpha", Filter{}, "/a.md: alpha one\n")
	if s := v.e.CacheStats(); s.Hits != 1 || s.Misses != 1 {
		t.Fatalf("stats after a repeated search: %+v", s)
	}
	v.write("b.md", "alpha two alpha")
	v.want("alpha", Filter{}, "/b.md: alpha two alpha\n/a.md: alpha one\n")
	v.write("a.md", "alpha alpha alpha changed")
	v.want("alpha", Filter{}, "/a.md: alpha alpha alpha changed\n/b.md: alpha two alpha\n")
	if err := v.st.Rename(store.RootIno, "b.md", store.RootIno, "c.md", 0); err != nil {
		t.Fatal(err)
	}
	v.want("alpha", Filter{}, "/a.md: alpha alpha alpha changed\n/c.md: alpha two alpha\n")
	if _, err := v.st.Remove(store.RootIno, "a.md"); err != nil {
		t.Fatal(err)
	}
	v.want("alpha", Filter{}, "/c.md: alpha two alpha\n")
	// The scope and k are part of the key.
	v.write("u.md", "---\nuser: alice\n---\nalpha of alice\n")
	v.want("alpha", Filter{Users: []string{"alice"}}, "/u.md: alpha of alice\n")
	v.want("alpha k:1", Filter{}, "/c.md: alpha two alpha\n")
	// Callers may change what they get without changing the cache.
	q, _ := ParseQuery("alpha")
	for k := 0; k < 2; k++ { // a miss, then a hit
		rs := v.e.Search(q, Filter{})
		rs[0].Path = "changed by the caller"
	}
	v.want("alpha", Filter{}, "/c.md: alpha two alpha\n/u.md: alpha of alice\n")
}

func TestQueryCacheOff(t *testing.T) {
	v := newQCEnv(t, 0)
	v.write("a.md", "alpha one")
	v.want("alpha", Filter{}, "/a.md: alpha one\n")
	if s := v.e.CacheStats(); s != (cache.Stats{}) {
		t.Fatalf("a disabled cache counted: %+v", s)
	}
}
