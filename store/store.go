package store

import (
	"errors"
	"log"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/store/internal/blobfs"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/cache"
	"github.com/mnemofs/mnemofs/store/changes"
	"github.com/mnemofs/mnemofs/store/internal/access"
	"github.com/mnemofs/mnemofs/store/internal/pack"
	"github.com/mnemofs/mnemofs/store/internal/rules"
)

// ChunkSize is the size of one content chunk.
const ChunkSize = 32 << 10

// MaxFileSize is the largest file the store accepts (EFBIG beyond).
const MaxFileSize = 1 << 40

// NameMax is the longest name in bytes (ENAMETOOLONG beyond).
const NameMax = 255

// DefaultTrees are created in a fresh store.
var DefaultTrees = []string{"episodic", "semantic", "working", "archive"}

// Store is an open mnemofs store, or a view of one for one user (ForUser,
// view.go): a view shares everything of the store it was made from (the
// KV, the caches, the locks, the write states), and has its own options
// and its own caches of what its user sees.
type Store struct {
	*core
	opts Options
	// proj caches what a store's user sees of partial logs (loglines.go).
	proj projections
	// lines caches which lines of partial logs the user sees (view.go).
	lines lineSets
	// view: made by ForUser; closing it closes nothing.
	view bool
}

// core is what a store and its views share.
type core struct {
	kv  backend.KV
	now func() time.Time
	log *log.Logger
	// packs caches decompressed packs, and packer packs trees (package
	// pack).
	packs  pack.Cache
	packer pack.Packer

	// mu serialises every mutation of the namespace and every commit, so
	// transactions never conflict and KV and cache change together.
	mu sync.Mutex
	// idNext and idEnd are the leased range of free inode numbers (mu).
	idNext, idEnd uint64
	// tmpfiles are the unnamed files CreateTemp made that Link may still
	// name (mu; tmpfile.go).
	tmpfiles map[uint64]bool
	// unsettled are the inodes rewritten in place whose live mark is
	// set, with when their last handle went (zero: open); filesMu
	// (inplace.go).
	unsettled map[uint64]time.Time
	// loading: a Bulk's load is open (bulkload.go), during which the KV
	// takes no other write: the flusher's chores wait.
	loading atomic.Bool
	// events waits for mu to be released (mu); see unlock.
	events []Change
	// changes counts the change events taken from under mu (or a bulk
	// batch's) not yet handed to OnChange, and keeps the removal log
	// (package changes).
	changes *changes.Log

	// icMu guards inodes, the cache of loaded inode records. Entries are
	// replaced or mutated only with mu held as well (or, for size and
	// times during writes, with the file's openFile.mu).
	icMu   sync.RWMutex
	inodes map[uint64]*Inode
	// forgets counts the cache's forgets (icMu): a load that saw another
	// count before its read does not cache what it read (inode()).
	forgets uint64

	// dcMu guards dc, the directory cache, and dcEpoch (dircache.go).
	dcMu    sync.RWMutex
	dc      map[uint64]*listing
	dcEpoch uint64

	// filesMu guards writes, the write state of every inode that has one
	// (writestate.go), and due, what falls due.
	filesMu sync.Mutex
	writes  map[uint64]*writeState
	due     dueQueue
	// staleOpen: open inodes another host changed (remote.go).
	staleOpen map[uint64]bool

	// tails caches the last chunk of recently committed files (appends).
	// It is updated after each commit and dropped on any other change of
	// a file's chunks (spill, truncation, purge, repair).
	tails *cache.Tails

	// access counts last_accessed/access_count updates not stored yet
	// (package access).
	access access.Counts

	// recs caches records as stored (record.go); every writer of a record
	// holds mu and calls Set or Forget after its transaction.
	recs *cache.Fill[uint64, Record]

	// rules is the stored policy and what is compiled from it (package
	// rules).
	rules *rules.Policy
	// internal: the inodes maintenance is writing (RewriteInternal;
	// filesMu).
	internal map[uint64]int
	// vacated: names memories just left, for a file created there to go
	// on with (saves.go; mu).
	vacated  map[entryName]vacancy
	vacatedQ []vacatedNote

	redWarned sync.Map // inodes warned of (warnUnmasked)

	// space refuses writes before the disk fills (nil: no check).
	space *spaceGuard

	// blobs holds large files' content; nil when Options.BlobDir is empty.
	blobs *blobfs.Dir
	// ptOn: passthrough sessions may start (passthrough.go).
	ptOn atomic.Bool

	// hot caches whole small files' committed content (hot.go); nil: off.
	hot *cache.Sized[uint64, hotEntry]

	// shared: other hosts change the KV too; stopWatch ends the watch of
	// their changes (remote.go).
	shared    bool
	stopWatch func()
	// hostID names this store's host among those of a shared store
	// (hosts.go).
	hostID    string
	lastSweep time.Time // flusher only

	// stageMu guards stageLive, the stages open states of this store
	// write (stage.go).
	stageMu   sync.Mutex
	stageLive map[uint64]bool
	grace     time.Duration // garbageGrace, but in tests

	stop chan struct{}
	done sync.WaitGroup
}

const idLease = 4096

// Open opens a store on kv, initialising it if empty.
func Open(kv backend.KV, o Options) (*Store, error) {
	s := &Store{opts: o, core: &core{kv: kv, now: o.Now, log: o.Logger,
		inodes: map[uint64]*Inode{}, writes: map[uint64]*writeState{}, dc: map[uint64]*listing{}, vacated: map[entryName]vacancy{}, internal: map[uint64]int{}, stageLive: map[uint64]bool{}, grace: garbageGrace,
		stop: make(chan struct{}), tails: cache.NewTails(1024), changes: newChanges(kv, o.ReadOnly),
		recs: cache.NewFill[uint64, Record](4096)}}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = log.New(log.Writer(), "mnemofs: ", log.LstdFlags) // the mount's logger says it itself
	}
	if o.BlobDir != "" {
		s.blobs = blobfs.New(o.BlobDir)
		s.blobs.SetHeldMax(heldMax())
	}
	s.hot = newHot(o.CacheBytes)
	if o.SpaceDir != "" {
		s.space = &spaceGuard{dir: o.SpaceDir}
	}
	if s.opts.ScratchAge == 0 {
		s.opts.ScratchAge = 3 * time.Second
	}
	s.rules = newRules(s)
	if o.ReadOnly {
		// Nothing is written, whatever path asks: no start-up repairs, no
		// background commits, syncs or access counts (touch).
		s.kv = backend.ReadOnly(kv)
		if err := s.init(); err != nil {
			if errors.Is(err, backend.ErrReadOnly) {
				return nil, ErrNoStore
			}
			return nil, err
		}
		s.startWatch(kv)
		return s, nil
	}
	if err := s.init(); err != nil {
		return nil, err
	}
	if err := s.changes.OpenRemovals(); err != nil {
		return nil, err
	}
	s.startWatch(kv)
	if err := s.startUp(); err != nil {
		if s.stopWatch != nil {
			s.stopWatch()
		}
		return nil, err
	}
	s.done.Add(2)
	go s.flusher()
	go func() {
		defer s.done.Done()
		if err := s.changes.PruneRemovals(); err != nil {
			s.log.Printf("pruning the removal log: %v", err)
		}
	}()
	return s, nil
}

// ErrNoStore is returned by a read-only Open of a KV that holds no store
// yet (it cannot be initialised without writing).
var ErrNoStore = errors.New("store: no store here yet (a read-only open cannot create one)")

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.opts.ReadOnly }

// Close flushes pending metadata. It does not close the KV.
func (s *Store) Close() error {
	if s.view {
		return errors.New("store: a view (ForUser) is not closed: close the store it was made from")
	}
	close(s.stop)
	s.done.Wait()
	if s.shared && !s.opts.ReadOnly {
		s.DropLease("host/"+s.hostID, s.hostID) // best effort: it lapses anyway
	}
	if s.stopWatch != nil {
		s.stopWatch()
	}
	s.endSessions(0)
	s.settleAllInPlace()
	s.filesMu.Lock()
	var open []*openFile
	for _, w := range s.writes {
		if w.phase == phaseOpen {
			open = append(open, w.f)
		}
	}
	s.filesMu.Unlock()
	for _, f := range open {
		if err := s.commit(f); err != nil {
			s.log.Printf("commit of inode %d at close: %v", f.ino, err)
		}
	}
	err := s.flushAccess()
	if cerr := s.changes.CloseRemovals(); err == nil {
		err = cerr // the last write (changes/removals.go)
	}
	// Everything committed is durable once the store is closed, blob
	// data before the records (durable.go).
	if serr := s.syncCommitted(); err == nil {
		err = serr
	}
	if s.blobs != nil {
		s.blobs.CloseTemps()
	}
	return err
}

// KV returns the backend under the store.
func (s *Store) KV() backend.KV { return s.kv }

// Now returns the store's clock.
func (s *Store) Now() time.Time { return s.now() }

func putInode(t backend.Txn, i *Inode) error { return t.Set(backend.InodeKey(i.Ino), i.encode()) }

// inode returns the cached inode, loading it from the KV. The pointer is
// shared: read fields under icMu, change them only under mu + icMu.
func (s *Store) inode(ino uint64) (*Inode, error) {
	s.icMu.RLock()
	i := s.inodes[ino]
	epoch := s.forgets
	s.icMu.RUnlock()
	if i != nil {
		return i, nil
	}
	for try := 0; ; try++ {
		i, err := s.loadInode(ino)
		if err != nil {
			return nil, err
		}
		s.icMu.Lock()
		if c := s.inodes[ino]; c != nil {
			i = c
		} else if s.forgets != epoch && try < 8 {
			// A forget came while it was read: what was read may be
			// older than what was forgotten (another host's change).
			// Read again rather than cache it.
			epoch = s.forgets
			s.icMu.Unlock()
			continue
		} else {
			s.inodes[ino] = i
		}
		s.icMu.Unlock()
		return i, nil
	}
}

// loadInode reads the inode record of ino from the KV.
func (s *Store) loadInode(ino uint64) (*Inode, error) {
	var v []byte
	err := s.kv.View(func(t backend.Txn) error {
		var err error
		v, err = t.Get(backend.InodeKey(ino))
		return err
	})
	if errors.Is(err, backend.ErrNotFound) {
		return nil, syscall.ENOENT
	}
	if err != nil {
		return nil, err
	}
	i, err := decodeInode(v)
	if err != nil {
		return nil, err
	}
	if i.legacy {
		// Written before inodes counted their xattrs: count them once,
		// so the count is right when the inode is next written.
		n := 0
		err := s.kv.View(func(t backend.Txn) error {
			return t.Scan(backend.XattrPrefix(ino), nil, true, func(_, _ []byte) bool { n++; return true })
		})
		if err != nil {
			return nil, err
		}
		i.Xattrs, i.legacy = uint32(n), false
	}
	return i, nil
}

// Attr returns a copy of the inode's attributes.
func (s *Store) Attr(ino uint64) (Inode, error) {
	c, err := s.attrWhole(ino)
	if err != nil {
		return c, err
	}
	if b, ok, err := s.partialOf(ino); ok && err == nil {
		c.Size = uint64(len(b)) // the part of a shared log the user sees
	}
	return c, nil
}

// attrWhole is Attr as the operator sees it: a shared log's whole size.
func (s *Store) attrWhole(ino uint64) (Inode, error) {
	s.syncPT(ino)
	i, err := s.inode(ino)
	if err != nil {
		return Inode{}, err
	}
	s.icMu.RLock()
	c := *i
	c.Links = append([]Link(nil), i.Links...)
	s.icMu.RUnlock()
	return c, nil
}

func (s *Store) forget(ino uint64) {
	s.icMu.Lock()
	delete(s.inodes, ino)
	s.forgets++
	s.icMu.Unlock()
	s.hot.Remove(ino) // only frees memory: entries are checked at each read
}

func (s *Store) notifyEntry(parent uint64, name string) {
	if s.opts.Notify != nil {
		s.opts.Notify.Entry(parent, name)
	}
}

func (s *Store) notifyContent(ino uint64) {
	if s.opts.Notify != nil {
		s.opts.Notify.Content(ino)
	}
}
