package backend

import (
	"bytes"
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/ristretto/v2/z"
)

// Loader is implemented by a KV that can take new keys as sorted tables
// written directly, with no log, memtable or compaction (Badger's
// StreamWriter): an import's millions of new keys. A load is for a store
// that only the loading process writes: while it is open every other
// write fails. Its keys become visible table by table as they are
// written, so a crash leaves any prefix of each key family: a caller
// loads what others point at first, and the pointers in a later load.
type Loader interface {
	// TakesLoads reports whether NewLoad may start one at all (it may
	// still refuse, as below).
	TakesLoads() bool
	// NewLoad starts a load, or returns ErrNoLoad when this KV cannot
	// take one now (it was not opened for a bulk load, or the load would
	// first have to rewrite a large store).
	NewLoad() (Load, error)
}

// Load is one load (Loader).
type Load interface {
	// Set adds a key that is new or replaces an older one. Keys with the
	// same first byte (a key family) must come in strictly increasing
	// order; Set refuses one that does not, and the load is then spoilt
	// (Cancel it). The key and value are copied.
	Set(key, val []byte) error
	// Flush writes everything set, makes it durable and visible, and
	// ends the load.
	Flush() error
	// Cancel ends the load without Flush. What was already written to
	// tables stays (unreferenced keys, which the caller must tolerate).
	Cancel()
}

// ErrNoLoad is NewLoad's answer when a load cannot be taken now; the
// caller writes through batches instead.
var ErrNoLoad = errors.New("backend: no load possible now")

// AsLoader returns kv as a Loader, if its engine is one.
func AsLoader(kv KV) (Loader, bool) {
	l, ok := kv.(Loader)
	return l, ok
}

const (
	// loadMaxStore: a load into a store whose tables hold more than this
	// is refused when Badger would first flatten them (every table into
	// one level, a rewrite of the whole store).
	loadMaxStore = 64 << 20
	// loadBuffer: how much a load encodes before handing it to Badger.
	loadBuffer = 16 << 20
	// loadMarker: a key written and then dropped, by prefix, to make
	// Badger flush its memtables (StreamWriter wants them empty). No key
	// family uses the byte 0xff.
	loadMarker = "\xffload"
)

type badgerLoad struct {
	b       *badgerKV
	sw      *badger.StreamWriter
	version uint64
	buf     *z.Buffer
	last    map[byte][]byte // each family's last key
	err     error
}

// TakesLoads: a KV opened with Options.Bulk.
func (b *badgerKV) TakesLoads() bool { return b.bulk }

// NewLoad starts a Badger StreamWriter on top of what the store holds
// (PrepareIncremental: its tables go one level above the store's top
// level). Only a KV opened with Options.Bulk takes one.
func (b *badgerKV) NewLoad() (Load, error) {
	if !b.bulk {
		return nil, ErrNoLoad
	}
	// Empty the memtables: StreamWriter refuses to start otherwise.
	// DropPrefix flushes every memtable to level 0 before it drops.
	if err := b.db.Update(func(t *badger.Txn) error { return t.Set([]byte(loadMarker), nil) }); err != nil {
		return nil, err
	}
	if err := b.db.DropPrefix([]byte(loadMarker)); err != nil {
		return nil, err
	}
	top, size := b.topLevel()
	// Level 0 or 1 on top: the load would go to level 0 (which Badger
	// does not allow) after a flatten of the whole store.
	if top >= 0 && top <= 1 {
		if size > loadMaxStore {
			return nil, ErrNoLoad
		}
		if err := b.db.Flatten(2); err != nil {
			return nil, err
		}
	}
	if !b.loadFits() {
		return nil, ErrNoLoad
	}
	b.loading.Store(true)
	sw := b.db.NewStreamWriter()
	if err := sw.PrepareIncremental(); err != nil {
		sw.Cancel()
		b.loading.Store(false)
		return nil, fmt.Errorf("backend: starting a load: %w", err)
	}
	l := &badgerLoad{b: b, sw: sw, version: b.db.MaxVersion() + 1,
		buf: z.NewBuffer(loadBuffer*2, "mnemofs.load"), last: map[byte][]byte{}}
	b.loadMu.Lock()
	b.load = l
	b.loadMu.Unlock()
	return l, nil
}

// topLevel returns the first level holding tables (-1: none) and the
// size of every level.
func (b *badgerKV) topLevel() (top int, size int64) {
	top = -1
	for _, l := range b.db.Levels() {
		if l.NumTables > 0 && top < 0 {
			top = l.Level
		}
		size += l.Size
	}
	return top, size
}

// loadFits reports whether the level StreamWriter will write to is free
// of tables (PrepareIncremental: the one above the top level, or, with
// tables in level 0, which it flattens, the one above the last level):
// tables of one level must not overlap.
func (b *badgerKV) loadFits() bool {
	levels := b.db.Levels()
	top, _ := b.topLevel()
	switch {
	case top < 0:
		return true // an empty store: the last level
	case top == 0:
		return levels[len(levels)-2].NumTables == 0
	}
	return top >= 2
}

func (l *badgerLoad) Set(key, val []byte) error {
	if l.err != nil {
		return l.err
	}
	if len(key) == 0 || key[0] == loadMarker[0] {
		return fmt.Errorf("backend: load: bad key %q", key)
	}
	if last, ok := l.last[key[0]]; ok && bytes.Compare(key, last) <= 0 {
		// StreamWriter would panic in its own goroutine.
		l.err = fmt.Errorf("backend: load: key %q after %q, out of order", key, last)
		return l.err
	}
	l.last[key[0]] = append(l.last[key[0]][:0], key...)
	badger.KVToBuffer(&pb.KV{Key: key, Value: val, Version: l.version, StreamId: uint32(key[0])}, l.buf)
	if l.buf.LenNoPadding() >= loadBuffer {
		return l.write()
	}
	return nil
}

// write hands the buffer to the StreamWriter (which copies what it keeps).
func (l *badgerLoad) write() error {
	if err := l.sw.Write(l.buf); err != nil {
		l.err = mapErr(err)
		return l.err
	}
	l.buf.Reset()
	return nil
}

func (l *badgerLoad) Flush() error {
	defer l.end()
	if l.err != nil {
		l.sw.Cancel()
		return l.err
	}
	if err := l.write(); err != nil {
		l.sw.Cancel()
		return err
	}
	if err := l.sw.Flush(); err != nil {
		return mapErr(err)
	}
	l.b.writes.Add(1)
	return nil
}

func (l *badgerLoad) Cancel() {
	if l.buf != nil {
		l.sw.Cancel()
		l.end()
	}
}

func (l *badgerLoad) end() {
	if l.buf != nil {
		_ = l.buf.Release()
		l.buf = nil
	}
	l.b.loadMu.Lock()
	if l.b.load == l {
		l.b.load = nil
	}
	l.b.loadMu.Unlock()
	l.b.loading.Store(false)
}
