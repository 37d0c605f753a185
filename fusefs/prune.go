package fusefs

import (
	"sync"
	"weak"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Bounded nodes. The kernel keeps a dentry for every name it looked up
// until memory pressure evicts it, and go-fuse keeps the Inode (with ours
// inside) for as long as the kernel does: a `find` over a million
// memories would hold a million nodes, about a GiB, for good. The pruner
// keeps the nodes the kernel was handed (newNode, and the generated
// children) in the order they were made, and once there are more than
// Config.MaxNodes it asks the kernel to forget the oldest: in one
// FUSE_NOTIFY_PRUNE per batch where the kernel has it (Linux 6.18,
// protocol 7.45), else by invalidating each one's entry. The kernel drops
// only what nothing uses (an open file, a working directory and a
// directory with cached children stay); a dropped entry is looked up again
// when next needed, as after a cold start. What it drops reaches go-fuse
// as FORGET, and the node is freed.
//
// The queue holds weak pointers: a node go-fuse discarded (a second
// lookup of a known inode builds one it then drops) or that the kernel
// forgot on its own is not kept alive by it. A node the kernel already
// knows is not queued again when looked up again, so the order is that of
// creation, not of use: a hot node is dropped in its turn and comes back
// with one LOOKUP.

// DefaultMaxNodes is Config.MaxNodes when it is 0.
const DefaultMaxNodes = 1 << 16

// pruneBatch is how many nodes one notification names.
const pruneBatch = 512

type pruner struct {
	max  int
	mu   sync.Mutex
	q    []weak.Pointer[fs.Inode] // from head: oldest first
	head int
	wake chan struct{}
	done chan struct{}
	stop chan struct{}
	// send asks the kernel to forget nodes (set by start).
	send func([]*fs.Inode)
	how  string // how send does it (logged by tests)
	// pruned counts the nodes named to the kernel (tests).
	pruned int
}

func newPruner(max int) *pruner {
	if max <= 0 {
		max = DefaultMaxNodes
	}
	return &pruner{max: max, wake: make(chan struct{}, 1), done: make(chan struct{}), stop: make(chan struct{})}
}

// add queues a node handed to the kernel.
func (p *pruner) add(n *fs.Inode) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.q = append(p.q, weak.Make(n))
	over := len(p.q)-p.head > p.max
	p.mu.Unlock()
	if over {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// start runs the pruner for srv until stopped; byEntry: invalidate each
// node's entry even if the kernel takes FUSE_NOTIFY_PRUNE.
func (p *pruner) start(srv *fuse.Server, byEntry bool) {
	if !byEntry && srv.KernelSettings().SupportsNotify(fuse.NOTIFY_PRUNE) {
		p.how = "FUSE_NOTIFY_PRUNE"
		p.send = func(ns []*fs.Inode) {
			if len(ns) > 0 {
				ns[0].NotifyPrune(ns)
			}
		}
	} else {
		p.how = "entry invalidation"
		p.send = func(ns []*fs.Inode) {
			for _, n := range ns {
				if name, parent := n.Parent(); parent != nil {
					parent.NotifyEntry(name)
				}
			}
		}
	}
	go p.run()
}

func (p *pruner) run() {
	defer close(p.done)
	for {
		select {
		case <-p.stop:
			return
		case <-p.wake:
			p.prune()
		}
	}
}

// prune names the oldest nodes to the kernel until at most 7/8 of max
// are queued. It holds no lock while the kernel is told: the kernel may
// wait for a request in flight, which may be adding a node.
func (p *pruner) prune() {
	for {
		p.mu.Lock()
		excess := len(p.q) - p.head - p.max*7/8
		if excess <= 0 {
			p.compact()
			p.mu.Unlock()
			return
		}
		batch := make([]*fs.Inode, 0, min(excess, pruneBatch))
		for ; excess > 0 && len(batch) < pruneBatch; excess-- {
			w := p.q[p.head]
			p.q[p.head] = weak.Pointer[fs.Inode]{}
			p.head++
			if n := w.Value(); n != nil && !n.IsRoot() {
				batch = append(batch, n)
			}
		}
		p.pruned += len(batch)
		p.mu.Unlock()
		select {
		case <-p.stop:
			return
		default:
		}
		p.send(batch)
	}
}

// compact moves the queue to the front of its array once most of it was
// taken (p.mu held).
func (p *pruner) compact() {
	if p.head > 1024 && p.head > len(p.q)/2 {
		n := copy(p.q, p.q[p.head:])
		clear(p.q[n:])
		p.q, p.head = p.q[:n], 0
		if cap(p.q) > 4*p.max && cap(p.q) > 4*n {
			p.q = append([]weak.Pointer[fs.Inode](nil), p.q...)
		}
	}
}

// Pruned reports how many nodes the kernel was asked to forget.
func (p *pruner) Pruned() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pruned
}

func (p *pruner) close() {
	if p == nil || p.send == nil {
		return
	}
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}
