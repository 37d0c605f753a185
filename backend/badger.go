package backend

import (
	"errors"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// Options configures OpenBadger.
type Options struct {
	// InMemory keeps everything in RAM (tests).
	InMemory bool
	// EncryptionKey, when set (16, 24 or 32 bytes), encrypts data at rest.
	EncryptionKey []byte
	// Logger receives Badger's warnings; nil discards info and debug lines.
	Logger *log.Logger
	// Bulk tunes the store for a bulk load (an import): eight times the
	// memtable, more level-0 tables before writes stall, and larger
	// tables and base level, so that compaction rewrites less (a level-0
	// table spans every key family, and so most of the base level). It
	// costs memory (a 1M-file import peaked at 3.4-3.9 GiB, against 2.2
	// without it), so a mount does not use it. A memtable of 128 MiB
	// against 64: 1M files imported in 43.5 s against 46.9 (medians of
	// five alternated runs), 16 and 32 MiB were slower, 256 MiB no
	// faster and 4.8 GiB at peak (BENCHMARKS.md). A KV opened so also
	// takes loads (load.go), which an import uses past its first 10,000
	// files: then the batches' tuning matters only for those.
	Bulk bool
	// NoCompactions: no compaction while the KV is open. For a short job
	// that writes almost nothing: the index build after an import (import
	// --index), which a compaction of the import's tables running beside
	// it slowed by a fifth (a 1M build: 24.9 s against 20.4); the next
	// open compacts them. Level 0 would fill, and writes stall, if it
	// wrote much.
	NoCompactions bool
}

type badgerKV struct {
	db   *badger.DB
	dir  string
	stop chan struct{}
	done chan struct{}
	// writes counts committed writes; synced is what it was when the
	// last successful Sync began.
	writes, synced atomic.Uint64
	// closeMu keeps Sync off a closed DB (Badger's Sync panics there,
	// where its other calls return an error).
	closeMu sync.RWMutex
	closed  bool
	// bulk: opened with Options.Bulk, so it takes loads (load.go);
	// loading: one is open, and the value-log GC waits; load is it, for
	// Close to cancel (loadMu).
	bulk    bool
	loading atomic.Bool
	loadMu  sync.Mutex
	load    *badgerLoad
}

// gcInterval is how often the value log is garbage-collected: rewriting a
// file's last chunk on every append leaves old versions behind.
const gcInterval = time.Minute

// gc reclaims value-log space until a pass finds nothing worth rewriting.
func (b *badgerKV) gc() {
	defer close(b.done)
	t := time.NewTicker(gcInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			for !b.loading.Load() && b.db.RunValueLogGC(0.5) == nil {
			}
		}
	}
}

// Unsynced reports whether writes were committed since the last Sync (the
// store syncs on its own clock when so, store/durable.go).
func (b *badgerKV) Unsynced() bool { return b.writes.Load() != b.synced.Load() }

// OpenBadger opens (creating if needed) a Badger store in dir.
func OpenBadger(dir string, o Options) (KV, error) {
	if !o.InMemory {
		warmTables(dir) // a cold start's reads together (warm.go)
	}
	opt := badger.DefaultOptions(dir).
		WithInMemory(o.InMemory).
		// Values above 4 KiB (file chunks) go to the value log, keeping the
		// LSM small and fast for inodes, entries and small memories.
		WithValueThreshold(4 << 10).
		// One process owns the store and serialises its own writers, so
		// Badger's conflict detection is pure overhead.
		WithDetectConflicts(false).
		WithNumVersionsToKeep(1).
		WithLogger(quietLogger{o.Logger}).
		WithMetricsEnabled(false).
		// Memory: memories are small and reads are served from the
		// kernel's page cache; Badger's defaults (5 × 64 MiB memtables,
		// a 256 MiB block cache) would dominate the process's RSS.
		WithMemTableSize(16 << 20).
		WithNumMemtables(3).
		// Tables are not compressed: a read of a block is then a slice of
		// the mapped file, where Snappy gave each block read that missed
		// the cache a new buffer to decompress into. A build of the index
		// over a million memories read 11 GB that way, and the collector
		// that chased it left the mount 40 MiB larger (BENCHMARKS.md). The
		// cost is disk: about twice the bytes for text (archived memories
		// are packed with zstd all the same, store/internal/pack). No block
		// cache then: Badger charges a cached block of an uncompressed
		// table the capacity of its slice, the rest of the mapped file,
		// so a small cache took one block at a time and evicted it at the
		// next (a 1M build: 574k blocks added and evicted, 1.7M refused).
		// Tables written compressed by earlier versions are read all the
		// same, each block read decompressed anew until compactions
		// rewrite them. An encrypted store has its cache (below): its
		// blocks are decrypted into buffers of their own size.
		WithCompression(options.None).
		WithBlockCacheSize(0).
		WithNumCompactors(2).
		// A compaction holds every table it builds whole in memory until
		// it is written, up to 8 + its splits at once, and Badger's
		// default sizes grow twofold a level (8 MiB at the last level
		// of a 1 GB store): hundreds of MiB while a mount compacts. Tables
		// of 2 MiB at every level bound that to tens.
		WithBaseTableSize(2 << 20)
	opt.TableSizeMultiplier = 1 // no With method
	if o.NoCompactions {
		opt.NumCompactors = 0 // Badger: none at all (1 is refused)
	}
	if o.Bulk {
		// An import is a batch job: speed over memory, Badger's growth.
		opt = opt.WithMemTableSize(128 << 20).
			WithNumLevelZeroTables(10).WithNumLevelZeroTablesStall(20).
			WithBaseLevelSize(64 << 20).WithBaseTableSize(8 << 20)
		// Not growing: a load (load.go) writes its tables at the size of
		// the last levels' (8 MiB × the multiplier to the fifth), each
		// held whole in memory while it is built, several at once.
		opt.TableSizeMultiplier = 1
	}
	if o.InMemory {
		// No value log in memory: every value stays in the LSM, which
		// takes values up to the threshold.
		opt = opt.WithValueThreshold(1 << 20)
		opt.Dir, opt.ValueDir = "", ""
	}
	if len(o.EncryptionKey) > 0 {
		opt = opt.WithEncryptionKey(o.EncryptionKey).WithIndexCacheSize(64 << 20).WithBlockCacheSize(16 << 20)
	}
	db, err := badger.Open(opt)
	if err != nil && strings.Contains(err.Error(), "Create a new file") {
		// A memtable or value log file left empty by a killed process:
		// Badger's first open fails on it, after sizing it, and the next
		// one reads it as the empty file it is (dgraph-io/badger#2207).
		db, err = badger.Open(opt)
	}
	if err != nil {
		return nil, mapOpenErr(err)
	}
	kv := &badgerKV{db: db, dir: opt.Dir, stop: make(chan struct{}), done: make(chan struct{}), bulk: o.Bulk}
	if o.InMemory {
		close(kv.done)
	} else {
		go kv.gc()
	}
	return kv, nil
}

func mapOpenErr(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Cannot acquire directory lock"):
		return fmt.Errorf("%w: %v", ErrLocked, err)
	case errors.Is(err, badger.ErrEncryptionKeyMismatch),
		errors.Is(err, badger.ErrInvalidEncryptionKey),
		strings.Contains(msg, "Encryption key mismatch"):
		return fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	return mapErr(err)
}

func mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, badger.ErrKeyNotFound):
		return ErrNotFound
	case errors.Is(err, badger.ErrTxnTooBig):
		return ErrTxnTooBig
	case errors.Is(err, syscall.ENOSPC), strings.Contains(err.Error(), "no space left"):
		return fmt.Errorf("%w: %v", ErrNoSpace, err)
	}
	return err
}

func (b *badgerKV) View(fn func(Txn) error) error {
	return mapErr(b.db.View(func(t *badger.Txn) error { return fn(badgerTxn{t}) }))
}

func (b *badgerKV) Update(fn func(Txn) error) error {
	err := mapErr(b.db.Update(func(t *badger.Txn) error { return fn(badgerTxn{t}) }))
	if err == nil {
		b.writes.Add(1)
	}
	return err
}

func (b *badgerKV) NewBatch() Batch { return &badgerBatch{wb: b.db.NewWriteBatch(), kv: b} }

func (b *badgerKV) Sync() error {
	b.closeMu.RLock()
	defer b.closeMu.RUnlock()
	if b.closed {
		return ErrClosed
	}
	w := b.writes.Load()
	if err := b.db.Sync(); err != nil {
		return mapErr(err)
	}
	b.synced.Store(w) // a racing Sync may store an older count: one extra sync, no harm
	return nil
}

// Size sums the disk blocks of the store's files (Badger's own figures are
// refreshed once a minute, and its value log is a sparse, preallocated
// file): SSTables count as lsm, everything else as vlog.
func (b *badgerKV) Size() (lsm, vlog int64) {
	if b.dir == "" {
		return b.db.Size()
	}
	ents, err := os.ReadDir(b.dir)
	if err != nil {
		return b.db.Size()
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		n := fi.Size()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			n = st.Blocks * 512
		}
		if strings.HasSuffix(e.Name(), ".sst") {
			lsm += n
		} else {
			vlog += n
		}
	}
	return lsm, vlog
}

func (b *badgerKV) Close() error {
	select {
	case <-b.done:
	default:
		close(b.stop)
		<-b.done
	}
	b.loadMu.Lock()
	l := b.load
	b.loadMu.Unlock()
	if l != nil {
		l.Cancel() // Badger's Close waits for writes a load has blocked
	}
	b.closeMu.Lock()
	defer b.closeMu.Unlock()
	b.closed = true
	return mapErr(b.db.Close())
}

type badgerTxn struct{ t *badger.Txn }

func (t badgerTxn) Get(key []byte) ([]byte, error) {
	it, err := t.t.Get(key)
	if err != nil {
		return nil, mapErr(err)
	}
	v, err := it.ValueCopy(nil)
	return v, mapErr(err)
}

func (t badgerTxn) Set(key, val []byte) error { return mapErr(t.t.Set(key, val)) }

func (t badgerTxn) Delete(key []byte) error { return mapErr(t.t.Delete(key)) }

// ScanRef is Scan with the values as Badger holds them (ScanRef).
func (t badgerTxn) ScanRef(prefix, start []byte, fn func(key, val []byte) bool) error {
	var err error
	t.iterate(prefix, start, func(item *badger.Item) bool {
		more := false
		if err = item.Value(func(v []byte) error { more = fn(item.Key(), v); return nil }); err != nil {
			err = mapErr(err)
			return false
		}
		return more
	})
	return err
}

func (t badgerTxn) Scan(prefix, start []byte, keysOnly bool, fn func(key, val []byte) bool) error {
	if !keysOnly {
		// The values copied: a caller of Scan may keep them.
		return t.ScanRef(prefix, start, func(k, v []byte) bool { return fn(k, append([]byte(nil), v...)) })
	}
	t.iterate(prefix, start, func(item *badger.Item) bool { return fn(item.Key(), nil) })
	return nil
}

// iterate calls fn with each item of prefix from start (the prefix when
// nil), in order, until fn returns false. Values are not read ahead.
func (t badgerTxn) iterate(prefix, start []byte, fn func(*badger.Item) bool) {
	o := badger.DefaultIteratorOptions
	o.Prefix, o.PrefetchValues = prefix, false
	it := t.t.NewIterator(o)
	defer it.Close()
	if start == nil {
		start = prefix
	}
	for it.Seek(start); it.ValidForPrefix(prefix) && fn(it.Item()); it.Next() {
	}
}

type badgerBatch struct {
	wb *badger.WriteBatch
	kv *badgerKV
}

func (b *badgerBatch) Set(k, v []byte) error { return mapErr(b.wb.Set(k, v)) }
func (b *badgerBatch) Delete(k []byte) error { return mapErr(b.wb.Delete(k)) }
func (b *badgerBatch) Cancel()               { b.wb.Cancel() }

func (b *badgerBatch) Flush() error {
	// Counted even when it fails: part of it may be committed.
	defer b.kv.writes.Add(1)
	return mapErr(b.wb.Flush())
}

// quietLogger forwards Badger's warnings and errors, drops info and debug.
type quietLogger struct{ l *log.Logger }

func (q quietLogger) Errorf(f string, a ...any) {
	if q.l != nil && !strings.Contains(fmt.Sprintf(f, a...), "Encryption key mismatch") { // reported as ErrBadKey
		q.l.Printf("badger: error: "+f, a...)
	}
}
func (q quietLogger) Warningf(f string, a ...any) {
	if q.l != nil {
		q.l.Printf("badger: warning: "+f, a...)
	}
}
func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Debugf(string, ...any) {}
