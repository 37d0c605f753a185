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
	// being added: enough that the workers go on while the adder waits
	// for a batch to be written (~30 ms for importBatch files, in which
	// two CPUs prepare ~1,500). At 128 they stood idle there: a 1M import
	// took 58-68 s, and 51-53 s at 2048 (held ahead: a few MiB).
	prepareAhead = 2048
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
// prepareAhead ahead of the reader, until items is closed and all are
// sent, or stop is closed.
// wait returns once stop is closed and no preparing runs any more (none
// touches the store after the import returns). The preparing is done by
// one worker per CPU: a goroutine per file grew a new stack for each
// parse of front matter (8% of an import's CPU).
func prepareAll(b *store.Bulk, src, to string, items <-chan item, stop <-chan struct{}) (_ <-chan *ready, wait func()) {
	out := make(chan *ready, prepareAhead)
	jobs := make(chan *ready, prepareAhead)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var fr fileReader // one a worker: it holds a directory open
			defer fr.close()
			for r := range jobs {
				select {
				case <-stop: // the import is over: what is left is not used
				default:
					r.prepare(b, &fr, src, to)
				}
				close(r.done)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(out)
		defer close(jobs)
		for it := range items {
			r := &ready{item: it, done: make(chan struct{})}
			select {
			case out <- r:
			case <-stop:
				return
			}
			// out holds at most prepareAhead, so jobs never blocks long;
			// a stop leaves r unprepared, and nobody waits for it then.
			select {
			case jobs <- r:
			case <-stop:
				return
			}
		}
	}()
	return out, func() { <-stop; wg.Wait() }
}

func (r *ready) prepare(b *store.Bulk, fr *fileReader, src, to string) {
	full := filepath.Join(src, filepath.FromSlash(r.rel))
	var data []byte
	ok := false
	if r.d.Type().IsRegular() {
		r.fi, data, ok = fr.read(full, prepareMax)
	}
	if !ok { // not a regular file, or no longer one
		r.fi, r.err = r.d.Info()
		if r.err != nil || !r.fi.Mode().IsRegular() || r.fi.Size() > prepareMax {
			return
		}
		if data, r.err = os.ReadFile(full); r.err != nil {
			return
		}
	}
	if r.fi.Size() > prepareMax {
		return // read when its turn comes
	}
	r.read = int64(len(data))
	r.f, r.err = b.Prepare(path.Join(to, r.rel), data, r.fi.ModTime().UnixNano())
}
