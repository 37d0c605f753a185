package transfer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync/atomic"
	"syscall"

	"github.com/mnemofs/mnemofs/store"
)

// Import: a plain directory copied into the store. New files go through
// the store's bulk writer (store.Bulk: one backend batch per importBatch
// files), existing ones are overwritten; directories keep their source's
// permission bits, files their bits and modification time, and everything
// the uid and gid of its source. What is imported belongs to the store's
// user (store.Options.User), as anything that user writes.

// Progress reports done out of total units.
type Progress func(done, total int64)

// Result summarises an import or an export.
type Result struct {
	Files    int64    `json:"files"`
	Dirs     int64    `json:"dirs"`
	Symlinks int64    `json:"symlinks"`
	Bytes    int64    `json:"bytes"`
	Skipped  []string `json:"skipped,omitempty"`
}

// importBatch is how many new files are written per batch.
const importBatch = 2000

// loadAfter: an import that gets past this many files goes on in a load
// (store.Bulk.StartLoad), if the store takes one. Starting and ending a
// load take a few hundred milliseconds of syncs, more than a batch of a
// few files takes in all.
const loadAfter = 10000

// Import copies the plain directory src into st under to ("/" or "" is
// the root). Existing files are overwritten; progress counts files (and
// directories and symlinks), its total 0 until the source's walk, which
// runs along with the import, is over.
func Import(st *store.Store, src, to string, progress Progress) (*Result, error) {
	return importFrom(st, src, to, progress, loadAfter)
}

// importFrom is Import, with a load from the file numbered loadAt on.
func importFrom(st *store.Store, src, to string, progress Progress, loadAt int) (*Result, error) {
	if progress == nil {
		progress = func(int64, int64) {}
	}
	src, err := filepath.Abs(src)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("import: %s is not a directory", src)
	}
	to = path.Clean("/" + to)
	res := &Result{}
	b := st.NewBulk()
	stop := make(chan struct{})
	w := walk(src, stop)
	defer func() { <-w.finished }()
	ready, wait := prepareAll(b, src, to, w.items, stop)
	defer wait()
	defer close(stop)
	n := 0
	for r := range ready {
		<-r.done
		if n == loadAt {
			// A load when the store takes one (the import command's own
			// store, opened for it): sorted tables written directly.
			// Otherwise, or if it cannot start, batches go on.
			_ = b.StartLoad()
		}
		if n%importBatch == 0 {
			if err := b.Flush(); err != nil {
				return res, err
			}
			progress(int64(n), w.total())
		}
		n++
		if err := importOne(b, src, to, r, res); err != nil {
			if errors.Is(err, errSkip) || errors.Is(err, store.ErrReserved) {
				// A name the store reserves is skipped as well, in the
				// same words.
				res.Skipped = append(res.Skipped, r.rel+": "+errSkip.Error())
				continue
			}
			// What was added before is imported.
			return res, errors.Join(fmt.Errorf("import %s: %w", r.rel, err), b.Finish())
		}
	}
	if err := b.Finish(); err != nil {
		return res, err
	}
	if err := <-w.err; err != nil {
		// What was found before is imported, as when a file fails.
		return res, fmt.Errorf("import: %w", err)
	}
	progress(int64(n), int64(n))
	return res, nil
}

// walking is the walk of an import's source, which runs while what it
// found is imported: at 1M files the walk alone took 3-4 s.
type walking struct {
	items    <-chan item
	err      <-chan error // once items is closed
	finished chan struct{}
	found    atomic.Int64
}

// total is what progress reports as the total: 0 (not known) until the
// walk is over.
func (w *walking) total() int64 {
	select {
	case <-w.finished:
		return w.found.Load()
	default:
		return 0
	}
}

// walk sends every path under src, in the order of filepath.WalkDir, until
// it ends or stop is closed.
func walk(src string, stop <-chan struct{}) *walking {
	items, errc := make(chan item, prepareAhead), make(chan error, 1)
	w := &walking{items: items, err: errc, finished: make(chan struct{})}
	go func() {
		defer close(w.finished)
		defer close(items)
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p == src {
				return nil
			}
			rel, _ := filepath.Rel(src, p)
			select {
			case items <- item{filepath.ToSlash(rel), d}:
				w.found.Add(1)
				return nil
			case <-stop:
				return filepath.SkipAll
			}
		})
		errc <- err
	}()
	return w
}

var errSkip = errors.New("not a regular file, directory or symlink; skipped")

func importOne(b *store.Bulk, src, to string, r *ready, res *Result) error {
	fi, err := r.fi, r.err
	if err != nil {
		return err
	}
	dst := path.Join(to, r.rel)
	full := filepath.Join(src, filepath.FromSlash(r.rel))
	var own store.Owner
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		own = store.Owner{Uid: sys.Uid, Gid: sys.Gid}
	} else { // asked only then: two system calls a file were 2% of an import
		own = store.Owner{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())}
	}
	switch {
	case fi.IsDir():
		err := b.AddDir(dst, uint32(fi.Mode().Perm()), own)
		res.Dirs++
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(full)
		if err != nil {
			return err
		}
		if err := b.AddSymlink(dst, target, own); err != nil {
			return err
		}
		res.Symlinks++
		return nil
	case fi.Mode().IsRegular():
		f, read := r.f, r.read
		if f == nil { // a large file, read now
			data, err := os.ReadFile(full)
			if err != nil {
				return err
			}
			if f, err = b.Prepare(dst, data, fi.ModTime().UnixNano()); err != nil {
				return err
			}
			read = int64(len(data))
		}
		res.Files++
		res.Bytes += read
		return b.Add(f, uint32(fi.Mode().Perm()), own)
	}
	return errSkip
}
