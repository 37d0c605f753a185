package views

import (
	"sync"

	"github.com/mnemofs/mnemofs/store"
)

// Warming a shared store's caches ahead of the index build. On etcd each
// memory the build reads costs a few round trips to the cluster (its
// inode, its record, its content), one memory after another: at 100k
// memories that was over ten minutes of waiting with the CPU idle. So the
// build's reads are done ahead of it, warmWorkers at a time, at most
// warmAhead memories ahead: they fill the store's inode, record and
// content caches (on a shared store the content cache keeps a small file
// at its first read), and the build finds them there. On a store of one
// host the reads are local and this is not done.

const (
	warmWorkers = 16
	warmAhead   = 512
)

// warmer reads memories ahead of the build.
type warmer struct {
	slots chan struct{} // one per memory read ahead and not yet built
	stop  chan struct{}
	wg    sync.WaitGroup
}

// warm starts reading inos ahead; the build calls built after each one
// and end when it is done (or stopped).
func (ix *indexer) warm(inos []uint64) *warmer {
	w := &warmer{slots: make(chan struct{}, warmAhead), stop: make(chan struct{})}
	if !ix.src.Shared() || len(inos) < warmWorkers {
		return w
	}
	work := make(chan uint64)
	for range warmWorkers {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			buf := make([]byte, store.HotFileMax)
			for ino := range work {
				if in, err := ix.src.Info(ino); err == nil && in.Size <= store.HotFileMax {
					ix.src.ReadAt(ino, buf, 0)
				}
			}
		}()
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer close(work)
		for _, ino := range inos {
			select {
			case w.slots <- struct{}{}:
			case <-w.stop:
				return
			}
			select {
			case work <- ino:
			case <-w.stop:
				return
			}
		}
	}()
	return w
}

// built frees the slot of one memory the build has done.
func (w *warmer) built() {
	select {
	case <-w.slots:
	default:
	}
}

// end stops reading ahead and waits for the readers.
func (w *warmer) end() {
	close(w.stop)
	w.wg.Wait()
}

// changedInos lists the memories a batch of changes has the engine read
// (in the order it applies them; the warmer's slots follow that order).
func changedInos(cs []store.Change) []uint64 {
	inos := make([]uint64, 0, len(cs))
	for _, c := range cs {
		inos = append(inos, c.Ino)
	}
	return inos
}

// warmAttrs reads the inodes of inos into the store's cache, warmWorkers
// at a time, on a shared store: a start from a snapshot looks at the
// inode of each node changed since, which on etcd was a round trip each,
// one after another (1,000 memories whose records changed: 1.2 s).
func (ix *indexer) warmAttrs(inos []uint64) {
	if !ix.src.Shared() || len(inos) < warmWorkers {
		return
	}
	work := make(chan uint64)
	var wg sync.WaitGroup
	for range warmWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ino := range work {
				ix.src.Attr(ino)
			}
		}()
	}
	for _, ino := range inos {
		work <- ino
	}
	close(work)
	wg.Wait()
}
