package access

import (
	"errors"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
)

// TestFlush: every access is stored once, in transactions that shrink to
// what the engine takes; what a failed flush did not store is pending
// again, with the accesses counted meanwhile.
func TestFlush(t *testing.T) {
	var c Counts
	for ino := uint64(1); ino <= 600; ino++ {
		c.Touch(ino, int64(ino))
		c.Touch(ino, int64(ino)+10)
	}
	stored := map[uint64]Stat{}
	txns := 0
	err := c.Flush(func(inos []uint64, pending map[uint64]Stat) error {
		if len(inos) > 100 {
			return backend.ErrTxnTooBig
		}
		txns++
		for _, ino := range inos {
			if _, dup := stored[ino]; dup {
				t.Errorf("inode %d stored twice", ino)
			}
			stored[ino] = pending[ino]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 600 || stored[7] != (Stat{Last: 17, Count: 2}) {
		t.Fatalf("stored %d inodes, inode 7 %+v; want 600, {17 2}", len(stored), stored[7])
	}
	if got := c.limit.Load(); got != 64 || txns != 10 {
		t.Errorf("limit %d in %d transactions, want 64 (256 halved until it fits 100) in 10", got, txns)
	}
	if _, ok := c.Pending(7); ok {
		t.Error("a stored access is still pending")
	}

	c.Touch(1, 100)
	c.Touch(1, 200)
	failed := errors.New("the cluster is out of reach")
	if err := c.Flush(func([]uint64, map[uint64]Stat) error { return failed }); !errors.Is(err, failed) {
		t.Fatalf("Flush = %v, want %v", err, failed)
	}
	c.Touch(1, 300)
	if a, _ := c.Pending(1); a != (Stat{Last: 300, Count: 3}) {
		t.Errorf("pending after a failed flush: %+v, want {300 3}", a)
	}
	if a, ok := c.Take(1); !ok || a.Count != 3 {
		t.Errorf("Take = %+v %v", a, ok)
	}
	if _, ok := c.Pending(1); ok {
		t.Error("taken, and still pending")
	}
}
