package main

import (
	"path"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// inproc is the -inproc target: the same files written to an in-memory
// store through the store's API and the same queries asked of the views
// engine directly, with no mount. It is for quick iteration on the search
// code; the reported numbers are those of the mount (bench-locomo.sh).
type inproc struct {
	st   *store.Store
	eng  *views.Engine
	dirs map[string]uint64
}

func newInproc() *inproc {
	kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
	check(err, "-inproc")
	eng := views.NewEngine(nil)
	st, err := store.Open(kv, store.Options{OnChange: eng.Handle})
	check(err, "-inproc")
	eng.Start(st)
	return &inproc{st: st, eng: eng, dirs: map[string]uint64{}}
}

// write stores every turn of c as the mount would: create (or for the
// jsonl layout, open the session's log), write (append), close.
func (p *inproc) write(c *conv) {
	for _, t := range c.Order {
		dir, name, body := turnFile(c, t)
		parent := p.mkdirAll(dir)
		in, err := p.st.Lookup(parent, name)
		if err != nil {
			in, err = p.st.Create(parent, name, 0o644, store.Owner{})
		}
		check(err, "-inproc: create")
		check(p.st.Open(in.Ino, false), "-inproc: open")
		_, err = p.st.Append(in.Ino, body)
		check(err, "-inproc: write")
		check(p.st.Flush(in.Ino), "-inproc: flush")
		check(p.st.Release(in.Ino), "-inproc: release")
	}
}

func (p *inproc) mkdirAll(dir string) uint64 {
	if ino, ok := p.dirs[dir]; ok {
		return ino
	}
	parent := uint64(store.RootIno)
	if d := path.Dir(dir); d != "." {
		parent = p.mkdirAll(d)
	}
	in, err := p.st.Lookup(parent, path.Base(dir))
	if err != nil {
		in, err = p.st.Mkdir(parent, path.Base(dir), 0o755, store.Owner{})
		check(err, "-inproc: mkdir")
	}
	p.dirs[dir] = in.Ino
	return in.Ino
}

// query asks by-user/<user>/search/<name>/ of the engine and returns the
// results in rank order.
func (p *inproc) query(user, name string) ([]hit, time.Duration) {
	t0 := time.Now()
	q, err := views.ParseQuery(name)
	check(err, "-inproc: query")
	var out []hit
	for _, r := range p.eng.Search(q, views.Filter{Users: []string{user}}) {
		out = append(out, hit{Name: r.Name, Path: r.Path, Line: int(r.Line)})
	}
	return out, time.Since(t0)
}
