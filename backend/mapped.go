package backend

import (
	"path/filepath"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/table"
)

// Mapped is implemented by engines that read their files through memory
// mappings which they unmap on their own (Badger: a table retired by a
// compaction). PinMapped names the files mapped now and keeps every one
// of them mapped until unpin is called, so that a caller may advise the
// kernel on their ranges (internal/resident) without racing an unmap
// that would let another mapping take the range meanwhile.
type Mapped interface {
	PinMapped() (paths []string, unpin func(), err error)
}

// AsMapped returns kv as a Mapped, if its engine is one.
func AsMapped(kv KV) (Mapped, bool) {
	if r, ok := kv.(readOnly); ok {
		kv = r.KV
	}
	m, ok := kv.(Mapped)
	return m, ok
}

// PinMapped pins Badger's tables: an iterator holds a reference on every
// table of every level when it is made (level 0's through their own
// iterators, the others' through a concatenating one), and a table is
// unmapped only when its last reference goes. A table listed both
// before and after the iterator was made was in the levels all along,
// so the iterator holds it; one that came or went meanwhile is left out.
func (b *badgerKV) PinMapped() ([]string, func(), error) {
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
	var paths []string
	for _, t := range b.db.Tables() {
		if before[t.ID] {
			paths = append(paths, table.NewFilename(t.ID, dir))
		}
	}
	return paths, func() { it.Close(); txn.Discard() }, nil
}
