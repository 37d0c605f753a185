package fusefs

import (
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
)

// Notifier carries the store's own changes to the kernel as cache
// invalidations. It implements store.Notifier. Events are queued and sent by
// one goroutine, so no lock of the store or of a FUSE handler is held while
// the kernel is told (the kernel may call back into the filesystem).
type Notifier struct {
	mu    sync.Mutex
	cond  *sync.Cond
	queue []event
	// pending counts the queued content invalidations per inode: an open
	// meanwhile must not keep the kernel's cached pages (ContentPending).
	// dropped are inodes whose invalidation a full queue dropped: the
	// next open drops the pages instead.
	pending map[uint64]int
	dropped map[uint64]bool
	fsys    *FS
	closed  bool
	done    chan struct{}
}

type event struct {
	parent  uint64
	name    string
	content bool
	// dir, when set, is the (generated) directory node of the entry.
	dir *fs.Inode
	// barrier, when set, is closed once every event before it was sent
	// (Drain).
	barrier chan struct{}
}

// drainWait bounds how long Drain waits for the queue.
const drainWait = 5 * time.Second

// Prefill puts data, the whole content of ino, into the kernel's page
// cache at once (the store calls it with no handle of ino open).
func (n *Notifier) Prefill(ino uint64, data []byte) {
	n.mu.Lock()
	f := n.fsys
	closed := n.closed
	n.mu.Unlock()
	if f == nil || closed {
		return
	}
	if v, ok := f.live.Load(ino); ok {
		v.(*fs.Inode).WriteCache(0, data)
	}
}

// NewNotifier returns a notifier; it sends nothing until Mount attaches it.
func NewNotifier() *Notifier {
	n := &Notifier{done: make(chan struct{}), pending: map[uint64]int{}, dropped: map[uint64]bool{}}
	n.cond = sync.NewCond(&n.mu)
	return n
}

// Entry queues the invalidation of name in directory parent.
func (n *Notifier) Entry(parent uint64, name string) { n.push(event{parent: parent, name: name}) }

// viewEntry queues the invalidation of name in the generated directory dir.
func (n *Notifier) viewEntry(dir *fs.Inode, name string) { n.push(event{dir: dir, name: name}) }

// Content queues the invalidation of the cached content of ino.
func (n *Notifier) Content(ino uint64) { n.push(event{parent: ino, content: true}) }

// Drain waits until the invalidations queued before the call have been
// sent to the kernel, at most drainWait (store.Drainer). It must not be
// called from a FUSE handler: the kernel may wait for that handler before
// it takes an invalidation.
func (n *Notifier) Drain() {
	b := make(chan struct{})
	if !n.push(event{barrier: b}) {
		return // nothing is sent: nothing to wait for
	}
	select {
	case <-b:
	case <-n.done: // stopped
	case <-time.After(drainWait):
	}
}

// push queues e, reporting whether it was.
func (n *Notifier) push(e event) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.closed && n.fsys != nil && len(n.queue) < 1<<16 {
		n.queue = append(n.queue, e)
		if e.content {
			n.pending[e.parent]++
		}
		n.cond.Signal()
		return true
	}
	if !n.closed && n.fsys != nil && e.content {
		n.dropped[e.parent] = true
	}
	return false
}

// ContentPending reports whether an invalidation of the content of ino
// is queued and not yet sent, or was dropped (the caller then drops the
// kernel's cached pages itself).
func (n *Notifier) ContentPending(ino uint64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dropped[ino] {
		delete(n.dropped, ino)
		return true
	}
	return n.pending[ino] > 0
}

// sent drops the pending mark of a content invalidation just sent.
func (n *Notifier) sent(ino uint64) {
	n.mu.Lock()
	if n.pending[ino]--; n.pending[ino] <= 0 {
		delete(n.pending, ino)
	}
	n.mu.Unlock()
}

func (n *Notifier) start(f *FS) {
	n.mu.Lock()
	n.fsys = f
	n.mu.Unlock()
	go n.run()
}

func (n *Notifier) stop() {
	n.mu.Lock()
	if n.fsys == nil || n.closed {
		n.closed = true
		n.mu.Unlock()
		return
	}
	n.closed = true
	n.cond.Signal()
	n.mu.Unlock()
	<-n.done
}

func (n *Notifier) run() {
	defer close(n.done)
	for {
		n.mu.Lock()
		for len(n.queue) == 0 && !n.closed {
			n.cond.Wait()
		}
		if n.closed {
			n.mu.Unlock()
			return
		}
		batch := n.queue
		n.queue = nil
		n.mu.Unlock()
		for _, e := range batch {
			if e.barrier != nil {
				close(e.barrier)
				continue
			}
			if e.dir != nil {
				e.dir.NotifyEntry(e.name)
				continue
			}
			v, ok := n.fsys.live.Load(e.parent)
			if ok && e.content {
				v.(*fs.Inode).NotifyContent(0, 0)
			} else if ok {
				v.(*fs.Inode).NotifyEntry(e.name)
			} // else the kernel holds nothing to invalidate
			if e.content {
				n.sent(e.parent)
			}
		}
	}
}
