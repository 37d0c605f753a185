package views

import (
	"time"

	"github.com/mnemofs/mnemofs/policy"
	"github.com/mnemofs/mnemofs/redact"
	"github.com/mnemofs/mnemofs/store"
)

// What the views need of the store, named here by the views: *store.Store
// has all of it (Store), and one user's view of it (store.ForUser) has
// what a reader's filter reads through (UserView).

// Reader reads a memory's inode, metadata and bytes: the engine's store,
// or one user's view of it.
type Reader interface {
	Attr(ino uint64) (store.Inode, error)
	Info(ino uint64) (store.Info, error)
	ReadAt(ino uint64, dest []byte, off int64) (int, error)
}

// UserView is one user's view of the store (store.ForUser): what it shows
// of the memories, and of a shared log, line by line (ForReader).
type UserView interface {
	Reader
	User() string
	Visible(ino uint64) bool
	SeesLine(ino uint64, n uint32) bool
	StatsFor(may func(ino uint64) bool) (store.Stats, error)
}

// Source is what the catalog, the index and the generated files read of
// the store: the memories, their paths, the rules that apply to them.
type Source interface {
	Reader
	Lookup(dir uint64, name string) (store.Inode, error)
	ReadDir(dir uint64) ([]store.Dirent, error)
	Path(ino uint64) (string, error)
	Ignored(p string, isDir bool) bool
	User() string
	ReadOnly() bool
	Shared() bool
	Policy() policy.Policy
	Redactor() *redact.Redactor
	StoreRedactions() []store.RedactionCount
	MemoriesFor(may func(ino uint64) bool, fn func(store.Info) error) error
	StatsFor(may func(ino uint64) bool) (store.Stats, error)
	// The build's reads: every memory's inode number, then the memories
	// by range scans; DuringPass and AfterPass let the store shed what
	// such a walk brought into its caches.
	MemoryInos(fn func(ino uint64) error) error
	ScanMemoriesPrepared(inos []uint64, limit int, prep func(*store.Scanned), fn func(*store.Scanned) bool)
	DuringPass()
	AfterPass()
}

// Changes is what the snapshot needs of the store: who it is, what it
// delivered, and what changed since a version.
type Changes interface {
	ID() (string, error)
	Versioned() bool
	Settled(wait time.Duration) (uint64, bool)
	ChangedSince(since uint64) (store.Since, error)
	DirLinks() (map[uint64]store.Link, error)
	Sync() error
}

// Vectors is where the embedder keeps the memories' vectors.
type Vectors interface {
	EmbedModel() ([]byte, error)
	ResetVectors(model []byte) error
	ScanVectors(fn func(ino uint64, val []byte, live bool) bool) error
	PutVector(ino uint64, val []byte) error
	DeleteVectors(inos ...uint64) error
}

// Store is everything an engine needs of the store (Start).
type Store interface {
	Source
	Changes
	Vectors
}

var (
	_ Store    = (*store.Store)(nil)
	_ UserView = (*store.Store)(nil)
)
