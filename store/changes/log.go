package changes

import (
	"sync"
	"sync/atomic"

	"github.com/mnemofs/mnemofs/backend"
)

// Log is a store's account of its changes: the removal log, what changed
// since a version, and the change events taken and not yet delivered.
type Log struct {
	kv backend.KV
	// shared: other hosts change the KV too.
	shared   bool
	readOnly bool
	// settings begins the key of every store-wide setting; statistics are
	// the settings that say nothing of memories (ChangedSince).
	settings   []byte
	statistics [][]byte

	// removalsMu orders readers of the removal log with its pruning
	// (removals.go).
	removalsMu sync.RWMutex
	// delivering counts change events taken from under the namespace
	// lock (or a bulk batch's) not yet handed to the handler (Settled).
	delivering atomic.Int64
}

// Options are what a Log needs to know of its store.
type Options struct {
	// MultiHost: other hosts change the KV too (it is a backend.Watcher).
	MultiHost bool
	// ReadOnly: nothing is written.
	ReadOnly bool
	// Settings begins the key of every store-wide setting; Statistics
	// are keys under it that say nothing of memories. ChangedSince reports
	// a write of any other (Since.Settings).
	Settings   []byte
	Statistics [][]byte
}

// New returns the log of the store on kv.
func New(kv backend.KV, o Options) *Log {
	return &Log{kv: kv, shared: o.MultiHost, readOnly: o.ReadOnly, settings: o.Settings, statistics: o.Statistics}
}

// Taken counts a batch of change events taken from under the namespace
// lock (or a bulk batch's events, before its first write) and not yet
// handed to the handler: Settled waits until it is.
func (l *Log) Taken() { l.delivering.Add(1) }

// Handed says a batch counted by Taken was handed to the handler.
func (l *Log) Handed() { l.delivering.Add(-1) }
