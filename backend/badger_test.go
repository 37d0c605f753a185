package backend

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// TestTablesUncompressed: the tables a store writes hold its values as
// they are (OpenBadger's WithCompression(None)), so that a read of a
// block is a slice of the mapped file: 1 MB of values that Snappy would
// shrink twentyfold takes at least 1 MB of tables, and reads back.
func TestTablesUncompressed(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "db")
	kv, err := OpenBadger(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	val := bytes.Repeat([]byte("memory "), 70) // 490 bytes, well under the value threshold
	b := kv.NewBatch()
	for i := range 2048 {
		if err := b.Set([]byte(fmt.Sprintf("k%05d", i)), val); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := kv.Close(); err != nil { // the memtable becomes a table
		t.Fatal(err)
	}
	var tables int64
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".sst") {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			tables += fi.Size()
		}
	}
	if raw := int64(2048 * len(val)); tables < raw {
		t.Fatalf("tables hold %d bytes for %d bytes of values: compressed", tables, raw)
	}
	kv, err = OpenBadger(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if err := kv.View(func(tx Txn) error {
		got, err := tx.Get([]byte("k01234"))
		if err == nil && !bytes.Equal(got, val) {
			err = fmt.Errorf("k01234 reads %q", got)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestReadsCompressedTables: a store whose tables an earlier version
// wrote with Snappy (Badger's default) opens and reads as before.
func TestReadsCompressedTables(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "db")
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil).WithCompression(options.Snappy))
	if err != nil {
		t.Fatal(err)
	}
	val := bytes.Repeat([]byte("memory "), 70)
	wb := db.NewWriteBatch()
	for i := range 2048 {
		if err := wb.Set([]byte(fmt.Sprintf("k%05d", i)), val); err != nil {
			t.Fatal(err)
		}
	}
	if err := wb.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	kv, err := OpenBadger(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	n := 0
	if err := kv.View(func(tx Txn) error {
		return tx.Scan([]byte("k"), nil, false, func(_, v []byte) bool {
			if bytes.Equal(v, val) {
				n++
			}
			return true
		})
	}); err != nil {
		t.Fatal(err)
	}
	if n != 2048 {
		t.Fatalf("read %d of 2048 values back", n)
	}
}
