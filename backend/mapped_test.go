package backend

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestPinMapped: the tables PinMapped names exist and stay (mapped, on
// disk) while pinned, even when the engine retires them (here: DropAll,
// which retires every table as a compaction retires some); unpinned, the
// deletion goes through.
func TestPinMapped(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	fill := func(round int) {
		kv, err := OpenBadger(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b := kv.NewBatch()
		for i := range 2000 {
			if err := b.Set([]byte(fmt.Sprintf("k%05d", i)), []byte(fmt.Sprintf("value %d of round %d", i, round))); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := kv.Close(); err != nil { // the memtable becomes a table
			t.Fatal(err)
		}
	}
	fill(1)
	fill(2)
	kv, err := OpenBadger(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	m, ok := AsMapped(kv)
	if !ok {
		t.Fatal("Badger is not Mapped")
	}
	files, unpin, err := m.PinMapped()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("pinned %v, want the two tables", files)
	}
	var paths []string
	for _, f := range files {
		fi, err := os.Stat(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		// The hot tail is the table's index: more than nothing, less
		// than the table (2,000 keys: its blocks are most of it).
		if f.HotTail <= tableTrailer || f.HotTail >= fi.Size()/2 {
			t.Errorf("%s: hot tail of %d bytes in a table of %d", f.Path, f.HotTail, fi.Size())
		}
		paths = append(paths, f.Path)
	}
	if err := kv.(*badgerKV).db.DropAll(); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("a pinned table is gone: %v", err)
		}
	}
	unpin()
	gone := 0
	for _, p := range paths {
		if _, err := os.Stat(p); os.IsNotExist(err) {
			gone++
		}
	}
	if gone == 0 {
		t.Errorf("no table retired was deleted after the unpin (%v)", paths)
	}
}
