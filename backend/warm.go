package backend

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Opening a store whose files are not in the page cache (after a reboot,
// or once other work has pushed them out). Badger opens its tables three
// at a time, and opening one reads its index at the end of the file and
// its first and last blocks: a few random reads each, one after another.
// At a million memories (about 700 tables) that was 0.8 s of a cold
// mount's start, most of the time to its first search. warmTables reads
// those parts of every table first, warmWorkers at a time, so that the
// disk sees them together; Badger then finds them in the page cache. It
// only reads: a file it cannot make sense of is read at its ends, or
// skipped.

const (
	warmWorkers = 32
	// warmBlock: what is read at the start (the first block) and before
	// the index (the last block and then some).
	warmBlock = 8 << 10
	// warmTail: read at the end when the footer does not say where the
	// index is.
	warmTail = 256 << 10
)

// warmTables reads the parts of dir's tables that Badger's open reads.
func warmTables(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	work := make(chan string)
	var wg sync.WaitGroup
	for range warmWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, warmTail)
			for p := range work {
				warmTable(p, buf)
			}
		}()
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".sst") {
			work <- filepath.Join(dir, e.Name())
		}
	}
	close(work)
	wg.Wait()
}

// warmTable reads one table's first block, its index and the block before
// it.
func warmTable(p string, buf []byte) {
	f, err := os.Open(p)
	if err != nil {
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		warmReads(f, fi.Size(), buf)
	}
}

// warmReads makes the reads of warmTable in a table of size bytes. Badger's
// table ends with the index, its length (4 bytes, big endian), the index's
// checksum and the checksum's length (4 bytes).
func warmReads(r io.ReaderAt, size int64, buf []byte) {
	if size < 8 {
		return
	}
	r.ReadAt(buf[:min(warmBlock, size)], 0)
	tail := min(int64(warmBlock), size)
	if _, err := r.ReadAt(buf[:tail], size-tail); err != nil {
		return
	}
	start := size - int64(len(buf)) // the footer not understood: the end
	if ck := int64(binary.BigEndian.Uint32(buf[tail-4 : tail])); ck+8 <= tail {
		idx := int64(binary.BigEndian.Uint32(buf[tail-8-ck : tail-4-ck]))
		if s := size - 8 - ck - idx - warmBlock; idx > 0 && s >= -warmBlock {
			start = s
		}
	}
	for off := max(start, 0); off < size-tail; off += int64(len(buf)) {
		r.ReadAt(buf[:min(int64(len(buf)), size-tail-off)], off)
	}
}
