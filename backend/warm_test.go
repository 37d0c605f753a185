package backend

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// readLog is a table of size bytes that records which bytes were read.
type readLog struct {
	size int64
	read []bool
}

func (r *readLog) ReadAt(b []byte, off int64) (int, error) {
	for k := range b {
		if off+int64(k) < r.size {
			r.read[off+int64(k)] = true
		}
	}
	return len(b), nil
}

// TestWarmReads: the reads before a table's open cover its first block,
// its index and footer (found from the footer), and the block before the
// index; a footer that makes no sense gives the file's end; a small table
// is read whole.
func TestWarmReads(t *testing.T) {
	t.Parallel()
	footer := func(size, idx, ck int64) []byte {
		b := make([]byte, size)
		binary.BigEndian.PutUint32(b[size-4:], uint32(ck))
		binary.BigEndian.PutUint32(b[size-8-ck:], uint32(idx))
		return b
	}
	covered := func(r *readLog, from, to int64) bool {
		for k := from; k < to; k++ {
			if !r.read[k] {
				return false
			}
		}
		return true
	}
	const size = 8 << 20
	for _, idx := range []int64{40 << 10, 600 << 10} {
		data := footer(size, idx, 4)
		r := &readLog{size: size, read: make([]bool, size)}
		warmReads(&readerOf{data, r}, size, make([]byte, warmTail))
		start := size - 8 - 4 - idx
		if !covered(r, 0, warmBlock) || !covered(r, start-warmBlock, size) {
			t.Errorf("index of %d bytes: the first block, the index and the block before it not all read", idx)
		}
		if covered(r, size/2, size/2+1) {
			t.Errorf("index of %d bytes: the middle of the table was read", idx)
		}
	}
	bad := footer(size, 0, 0)
	binary.BigEndian.PutUint32(bad[size-4:], 1<<30) // a checksum longer than the file
	r := &readLog{size: size, read: make([]bool, size)}
	warmReads(&readerOf{bad, r}, size, make([]byte, warmTail))
	if !covered(r, size-warmTail, size) || covered(r, size/2, size/2+1) {
		t.Error("a footer not understood: not its last bytes read, or more")
	}
	small := footer(20<<10, 16<<10, 4)
	r = &readLog{size: int64(len(small)), read: make([]bool, len(small))}
	warmReads(&readerOf{small, r}, int64(len(small)), make([]byte, warmTail))
	if !covered(r, 0, int64(len(small))) {
		t.Error("a small table not read whole")
	}
}

// readerOf reads data and records the reads in log.
type readerOf struct {
	data []byte
	log  *readLog
}

func (r *readerOf) ReadAt(b []byte, off int64) (int, error) {
	r.log.ReadAt(b, off)
	return copy(b, r.data[off:]), nil
}

// TestWarmTablesOpens: on a real store's tables, the reads before the
// open cover each table's index where Badger's table reader finds it (and
// its first block); the store then opens as usual.
func TestWarmTablesOpens(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "db")
	kv, err := OpenBadger(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := kv.NewBatch()
	for i := range 300000 { // many keys: an index (and Bloom filter) past the last bytes read anyway
		if err := b.Set(fmt.Appendf(nil, "key%07d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(b.Flush(), kv.Close()); err != nil {
		t.Fatal(err)
	}
	ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no table written")
	}
	bigIndex := false
	for _, p := range ssts {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		mf, err := z.OpenMmapFile(p, os.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := table.OpenTable(mf, table.Options{})
		if err != nil {
			t.Fatal(err)
		}
		size, idx := int64(len(data)), int64(tb.IndexSize())
		bigIndex = bigIndex || idx > warmTail
		tb.DecrRef()
		r := &readLog{size: size, read: make([]bool, size)}
		warmReads(&readerOf{data, r}, size, make([]byte, warmTail))
		for _, span := range [][2]int64{{0, min(warmBlock, size)}, {size - idx - 64, size}} {
			for k := max(span[0], 0); k < span[1]; k++ {
				if !r.read[k] {
					t.Fatalf("%s (%d bytes, index %d): byte %d of [%d, %d) not read", filepath.Base(p), size, idx, k, span[0], span[1])
				}
			}
		}
	}
	if !bigIndex {
		t.Errorf("no table's index is larger than %d bytes: the footer's reading is not tested", warmTail)
	}
	warmTables(dir)
	warmTables(filepath.Join(dir, "missing")) // nothing there: nothing done
	kv, err = OpenBadger(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kv.Close()
}
