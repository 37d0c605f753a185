package transfer

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/mnemofs/mnemofs/store"
)

// An import reads and prepares (store.Bulk.Prepare: redaction, parsing,
// the hash) the files ahead of the one it adds, on every CPU, and adds
// them in the order of the walk: the store's part (names, inode numbers,
// the batch) stays serial and the same as one file at a time.

const (
	// prepareAhead is how many items may be prepared ahead of the one
	// being added.
	prepareAhead = 128
	// prepareMax: a larger file is read only when its turn comes, so that
	// what is held ahead stays small.
	prepareMax = 1 << 20
)

// item is one path of the source tree, relative to its root.
type item struct {
	rel string
	d   fs.DirEntry
}

// ready is an item and what was prepared of it; done is closed when the
// preparing is over. fi and err are always set; f, with read (the bytes
// read from the source), for a regular file up to prepareMax.
type ready struct {
	item
	fi   fs.FileInfo
	err  error
	f    *store.NewFile
	read int64
	done chan struct{}
}

// prepareAll prepares items in parallel and sends them in order, at most
// prepareAhead ahead of the reader, until all are sent or stop is closed.
// wait returns once stop is closed and no preparing runs any more (none
// touches the store after the import returns).
func prepareAll(b *store.Bulk, src, to string, items []item, stop <-chan struct{}) (_ <-chan *ready, wait func()) {
	out := make(chan *ready, prepareAhead)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(out)
		for _, it := range items {
			r := &ready{item: it, done: make(chan struct{})}
			select {
			case out <- r:
			case <-stop:
				return
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; close(r.done); wg.Done() }()
				r.prepare(b, src, to)
			}()
		}
	}()
	return out, func() { <-stop; wg.Wait() }
}

func (r *ready) prepare(b *store.Bulk, src, to string) {
	r.fi, r.err = r.d.Info()
	if r.err != nil || !r.fi.Mode().IsRegular() || r.fi.Size() > prepareMax {
		return
	}
	data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(r.rel)))
	if err != nil {
		r.err = err
		return
	}
	r.read = int64(len(data))
	r.f, r.err = b.Prepare(path.Join(to, r.rel), data, r.fi.ModTime().UnixNano())
}
