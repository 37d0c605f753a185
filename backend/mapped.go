package backend

import (
	"path/filepath"
	"slices"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/table"

	"github.com/mnemofs/mnemofs/internal/resident"
)

// Mapped is implemented by engines that read their files through memory
// mappings which they unmap on their own (Badger: a table retired by a
// compaction). PinMapped names the files mapped now and keeps every one
// of them mapped until unpin is called, so that a caller may advise the
// kernel on their ranges (internal/resident) without racing an unmap
// that would let another mapping take the range meanwhile.
type Mapped interface {
	PinMapped() (files []resident.File, unpin func(), err error)
}

// AsMapped returns kv as a Mapped, if its engine is one.
func AsMapped(kv KV) (Mapped, bool) {
	if r, ok := kv.(readOnly); ok {
		kv = r.KV
	}
	m, ok := kv.(Mapped)
	return m, ok
}

// tableTrailer bounds what a table holds after its index: the index's
// length, the checksum and the checksum's length (table.Builder.Finish).
const tableTrailer = 64

// PinMapped pins Badger's tables: an iterator holds a reference on every
// table of every level when it is made (level 0's through their own
// iterators, the others' through a concatenating one), and a table is
// unmapped only when its last reference goes. A table listed both
// before and after the iterator was made was in the levels all along,
// so the iterator holds it; one that came or went meanwhile is left out.
// A table's hot part is its index, at its end: every lookup reads the
// Bloom filters of the tables on its way and the block offsets of the
// one that may hold the key. The files are in the order of their levels,
// the upper (hotter) ones first.
func (b *badgerKV) PinMapped() ([]resident.File, func(), error) {
	if b.dir == "" {
		return nil, func() {}, nil // in memory: no files
	}
	dir, err := filepath.Abs(b.dir)
	if err != nil {
		return nil, nil, err
	}
	before := map[uint64]bool{}
	for _, t := range b.db.Tables() {
		before[t.ID] = true
	}
	txn := b.db.NewTransaction(false)
	it := txn.NewIterator(badger.IteratorOptions{})
	var files []resident.File
	tables := b.db.Tables()
	// The upper levels' first: a lookup reads the filter of every table
	// of level 0 and of one table a level below, and the upper levels
	// have fewer and smaller indexes.
	slices.SortStableFunc(tables, func(a, b badger.TableInfo) int { return a.Level - b.Level })
	for _, t := range tables {
		if before[t.ID] {
			files = append(files, resident.File{Path: table.NewFilename(t.ID, dir), HotTail: int64(t.IndexSz) + tableTrailer})
		}
	}
	return files, func() { it.Close(); txn.Discard() }, nil
}
