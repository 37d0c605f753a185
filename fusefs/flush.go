package fusefs

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// The kernel sends FLUSH at every close of a file descriptor, not once per
// open: a process that forks while it writes a file (or any child that
// inherits the descriptor) closes its copy at exec (O_CLOEXEC), and the
// FLUSH that follows comes while the parent is still in the middle of
// its write. A commit then would publish half of the parent's rewrite
// (and on a shared store make the rest of it look like appends, rebased
// onto another host's version). So a FLUSH commits only when its caller
// opened the handle to write or wrote through it: what others wrote is
// committed by their own flush, or by the release at the last close. (A
// passthrough writer's writes do not come through here: its handle
// commits at its opener's flushes, which covers a process writing through
// a descriptor it opened; what a child writes through an inherited one is
// committed at the opener's close or the release.)

// The kernel names the calling thread (its id), not its process: tgid
// looks up the thread's process in /proc (0 when it cannot: the thread
// is gone, or is in another pid namespace), and each handle keeps the
// threads it has seen.

// tgid is the process (thread group) of thread tid, or 0.
func tgid(tid uint32) uint32 {
	b, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(tid), 10) + "/status")
	if err != nil {
		return 0
	}
	_, v, ok := strings.Cut(string(b), "\nTgid:")
	if !ok {
		return 0
	}
	f := strings.Fields(v)
	if len(f) == 0 {
		return 0
	}
	n, err := strconv.ParseUint(f[0], 10, 32)
	if err != nil {
		return 0
	}
	return uint32(n)
}

// writers is the set of processes (thread group ids) that opened a handle
// to write or wrote through it; past maxWriters, any flush commits.
type writers struct {
	mu   sync.Mutex
	pids []uint32
	tids map[uint32]bool // threads seen writing (of a process in pids)
	many bool
}

const maxWriters = 8

// wrote records the caller of ctx as one of the handle's writers.
func (h *fileHandle) wrote(ctx context.Context) {
	c, ok := fuse.FromContext(ctx)
	w := &h.writers
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.many || ok && w.tids[c.Pid] {
		return
	}
	p := uint32(0)
	if ok {
		p = tgid(c.Pid)
	}
	if p == 0 {
		w.many = true // an unknown caller: let any flush commit
		return
	}
	if w.tids == nil {
		w.tids = map[uint32]bool{}
	}
	if len(w.tids) < 64 {
		w.tids[c.Pid] = true
	}
	for _, q := range w.pids {
		if q == p {
			return
		}
	}
	if len(w.pids) == maxWriters {
		w.many = true
		return
	}
	w.pids = append(w.pids, p)
}

// flushes reports whether a FLUSH from the caller of ctx commits.
func (h *fileHandle) flushes(ctx context.Context) bool {
	c, ok := fuse.FromContext(ctx)
	w := &h.writers
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.many || !ok || w.tids[c.Pid] {
		return true
	}
	if len(w.pids) == 0 {
		// No one opened it to write or wrote through it (a reader's
		// close, the commonest flush): no process to look up in /proc.
		return false
	}
	p := tgid(c.Pid)
	if p == 0 {
		return true
	}
	for _, q := range w.pids {
		if q == p {
			return true
		}
	}
	return false
}

func (h *fileHandle) Flush(ctx context.Context) syscall.Errno {
	defer observe(latFlush, time.Now())
	if !h.flushes(ctx) {
		return 0
	}
	return errno(h.n.fsys.st.Flush(h.n.ino))
}
