package backend

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	fillAndClose(t, dir)
	if tables, raw := tableBytes(t, dir), int64(2048*len(testVal)); tables < raw {
		t.Fatalf("tables hold %d bytes for %d bytes of values: compressed", tables, raw)
	}
	kv, err := OpenBadger(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if err := kv.View(func(tx Txn) error {
		got, err := tx.Get([]byte("k01234"))
		if err == nil && !bytes.Equal(got, testVal) {
			err = fmt.Errorf("k01234 reads %q", got)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// fillAndClose writes fillValues into a new store in dir and closes it:
// its memtable becomes a table.
func fillAndClose(t *testing.T, dir string) {
	t.Helper()
	kv, err := OpenBadger(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := kv.NewBatch()
	fillValues(t, b.Set)
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := kv.Close(); err != nil {
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
	wb := db.NewWriteBatch()
	fillValues(t, wb.Set)
	if err := wb.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if tables, raw := tableBytes(t, dir), int64(2048*len(testVal)); tables*4 > raw {
		t.Fatalf("tables hold %d bytes for %d bytes of values: not compressed, nothing tested", tables, raw)
	}
	kv, err := OpenBadger(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	n := 0
	if err := kv.View(func(tx Txn) error {
		return tx.Scan([]byte("k"), nil, false, func(_, v []byte) bool {
			if bytes.Equal(v, testVal) {
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

// testVal is a value Snappy shrinks twentyfold, well under the value
// threshold (kept in the tables).
var testVal = bytes.Repeat([]byte("memory "), 70)

// fillValues sets 2,048 keys to testVal through set.
func fillValues(t *testing.T, set func(k, v []byte) error) {
	t.Helper()
	for i := range 2048 {
		if err := set([]byte(fmt.Sprintf("k%05d", i)), testVal); err != nil {
			t.Fatal(err)
		}
	}
}

// tableBytes is the size of the tables in dir.
func tableBytes(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".sst") {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			n += fi.Size()
		}
	}
	return n
}

// TestNoCompactions: a KV opened with NoCompactions leaves its level-0
// tables where they are, and reads and writes as any; the next open
// without it compacts them.
func TestNoCompactions(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "db")
	l0 := func(kv KV) int { return kv.(*badgerKV).db.Levels()[0].NumTables }
	for i := range 8 { // each close flushes its memtable: a level-0 table
		kv, err := OpenBadger(dir, Options{NoCompactions: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := kv.Update(func(tx Txn) error { return tx.Set([]byte(fmt.Sprintf("k%d", i)), testVal) }); err != nil {
			t.Fatal(err)
		}
		if err := kv.Close(); err != nil {
			t.Fatal(err)
		}
	}
	kv, err := OpenBadger(dir, Options{NoCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	n := l0(kv)
	time.Sleep(2500 * time.Millisecond) // Badger's compactors start within a second, at random
	if n < 8 || l0(kv) != n {
		t.Fatalf("level 0 holds %d tables, then %d, with no compactions: want 8 and no change", n, l0(kv))
	}
	if err := kv.View(func(tx Txn) error {
		got, err := tx.Get([]byte("k7"))
		if err == nil && !bytes.Equal(got, testVal) {
			err = fmt.Errorf("k7 reads %q", got)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	kv, err = OpenBadger(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	for deadline := time.Now().Add(20 * time.Second); l0(kv) >= n; {
		if time.Now().After(deadline) {
			t.Fatalf("level 0 still holds %d tables 20 s after an open with compactions", l0(kv))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestOpenBadgerAfterEmptyMemtable: a memtable file a killed process left
// empty does not keep the store from opening (dgraph-io/badger#2207: the
// first open fails on it), and what was written stays.
func TestOpenBadgerAfterEmptyMemtable(t *testing.T) {
	dir := t.TempDir()
	kv, err := OpenBadger(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Update(func(tx Txn) error { return tx.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "00009.mem"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	kv, err = OpenBadger(dir, Options{})
	if err != nil {
		t.Fatalf("opening with an empty memtable file: %v", err)
	}
	defer kv.Close()
	var got []byte
	if err := kv.View(func(tx Txn) error { v, err := tx.Get([]byte("k")); got = v; return err }); err != nil || string(got) != "v" {
		t.Fatalf("after the reopen: %q, %v", got, err)
	}
}

// TestVersionWhileWriting: Version may be called while commits run (the
// views' snapshot writer asks for it at any time): no data race, and it
// never goes back.
func TestVersionWhileWriting(t *testing.T) {
	kv, err := OpenBadger("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	v := kv.(Versioned)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 2000; i++ {
			if err := kv.Update(func(t Txn) error { return t.Set([]byte{'z', byte(i), byte(i >> 8)}, []byte("v")) }); err != nil {
				panic(err)
			}
		}
	}()
	var last uint64
	for {
		select {
		case <-done:
			if got := v.Version(); got < last || got == 0 {
				t.Fatalf("version %d after %d", got, last)
			}
			return
		default:
		}
		got := v.Version()
		if got < last {
			t.Fatalf("version went back: %d after %d", got, last)
		}
		last = got
	}
}
