package report

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/internal/storetest"
	"github.com/mnemofs/mnemofs/lifecycle"
	"github.com/mnemofs/mnemofs/store"
)

// demo is a store built for the report's tests, and what was put in it.
type demo struct {
	st    *store.Store
	kv    backend.KV
	clock *atomic.Int64
	// what the page must show
	memories    int
	users       map[string]bool
	createdDays int // distinct created days
	versionDays int // distinct days versions were written on
	trashed     int
}

// Users of the demo store; memories with no user are everyone's.
var demoUsers = []string{"alice", "bob", "carol", "dave", "erin", "frank"}

// demoStart is the demo's first day.
var demoStart = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

// body is a memory's text: a marker the page must never show.
func body(i int) string {
	return fmt.Sprintf("BODYSECRET-%04d the agent learned something worth keeping\n", i)
}

// buildDemo writes n memories over 40 days: four trees, six users (and
// public ones), 30 tags, related links (a chain and twenty hubs), a
// hostile name and tag, versions of semantic memories written on five
// later days, some removed to the trash, duplicates, and a maintenance
// pass that archives the idle working memories. The health threshold
// files_per_dir is lowered so that stats.json warns.
func buildDemo(t testing.TB, n int) *demo {
	t.Helper()
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	storetest.Must(t, err)
	d := &demo{kv: kv, clock: &atomic.Int64{}, users: map[string]bool{}}
	d.clock.Store(demoStart.UnixNano())
	st, err := store.Open(kv, store.Options{Now: func() time.Time { return time.Unix(0, d.clock.Load()) }})
	storetest.Must(t, err)
	d.st = st
	t.Cleanup(func() { d.st.Close(); kv.Close() })
	storetest.Must(t, st.SetPolicy([]byte("health:\n  files_per_dir: 100\n")))

	dirs := []string{"/episodic/notes", "/semantic/knowledge_base", "/semantic/skills", "/working/tasks", "/projects/beta"}
	inos := map[string]uint64{}
	for _, p := range dirs {
		inos[p] = storetest.MkdirAll(t, st, p)
	}
	days := map[string]bool{}
	var paths []string
	for i := 0; i < n; i++ {
		dir := dirs[i%len(dirs)]
		nm := fmt.Sprintf("m%04d.md", i)
		if i == 7 {
			nm = `<img src=x onerror=alert(1)>.md`
		}
		p := dir + "/" + nm
		created := demoStart.AddDate(0, 0, i%40)
		days[created.Format("2006-01-02")] = true
		var fm strings.Builder
		fmt.Fprintf(&fm, "---\ncreated: %s\n", created.Format(time.RFC3339))
		if i%7 != 0 {
			u := demoUsers[i%len(demoUsers)]
			fmt.Fprintf(&fm, "users: [%s]\n", u)
			d.users[u] = true
		}
		tags := []string{fmt.Sprintf("tag-%02d", (i*i)%30), "common"}
		if i == 11 {
			tags = append(tags, "<b>bold</b>")
		}
		fmt.Fprintf(&fm, "tags: [%s]\n", quoteAll(tags))
		var rel []string
		if i > 0 && i%3 != 0 {
			rel = append(rel, paths[i-1]) // a chain
		}
		if i >= 20 && i%2 == 0 {
			rel = append(rel, paths[i%20]) // a hub
		}
		if len(rel) > 0 {
			fmt.Fprintf(&fm, "related: [%s]\n", quoteAll(rel))
		}
		fm.WriteString("---\n")
		text := body(i)
		if i%50 == 49 {
			text = "an exact duplicate of another memory\n"
		}
		storetest.WriteFile(t, st, inos[dir], nm, []byte(fm.String()+text))
		paths = append(paths, p)
	}
	d.memories, d.createdDays = n, len(days)

	// Versions: semantic/knowledge_base is versioned; rewrite some on
	// five later days.
	vdays := map[string]bool{}
	for k := 0; k < 5; k++ {
		d.clock.Store(demoStart.AddDate(0, 0, 45+k).UnixNano())
		vdays[demoStart.AddDate(0, 0, 45+k).Format("2006-01-02")] = true
		for i := 1; i < n; i += len(dirs) * 7 {
			ino := storetest.Resolve(t, st, paths[i])
			old := storetest.ReadAll(t, st, ino)
			storetest.Rewrite(t, st, ino, append(old, fmt.Sprintf("edit %d\n", k)...))
		}
	}
	d.versionDays = len(vdays)

	// Trash: remove a few episodic notes (they lived for weeks: not scratch).
	d.clock.Store(demoStart.AddDate(0, 0, 51).UnixNano())
	for i := 0; i < n && d.trashed < 10; i += len(dirs) {
		if i == 0 || i%20 == 0 || i%2 == 0 {
			continue // keep the hubs and the links' ends simple
		}
		_, err := st.Remove(inos["/episodic/notes"], fmt.Sprintf("m%04d.md", i))
		storetest.Must(t, err)
		d.trashed++
	}

	// Maintenance: working memories untouched for an hour get archived.
	d.clock.Store(demoStart.AddDate(0, 0, 52).UnixNano())
	_, err = lifecycle.Maintain(st, lifecycle.Options{})
	storetest.Must(t, err)
	return d
}

func quoteAll(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// reopen opens the demo's KV again as a store for user u (the first
// store closed).
func (d *demo) reopen(t testing.TB, u string) *store.Store {
	t.Helper()
	storetest.Must(t, d.st.Close())
	st, err := store.Open(d.kv, store.Options{User: u, Now: func() time.Time { return time.Unix(0, d.clock.Load()) }})
	storetest.Must(t, err)
	d.st = st
	return st
}
