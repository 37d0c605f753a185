package views

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
)

// TestSnapshotAfterAnOlderBinary: a memory removed by a program that
// writes no removal log (an older mnemofs: here its keys are deleted
// behind the store's back) after the snapshot was written: the start
// finds the log does not cover it, walks the inodes, and the views are
// what a build gives. A clean stop and start after that uses the log.
func TestSnapshotAfterAnOlderBinary(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "index", "views.snap")
	a := openSession(t, dir, snap, "")
	for i := range 10 {
		a.write(t, fmt.Sprintf("/episodic/notes/n%02d.md", i), frontText("alice", "t", fmt.Sprintf("note %d about the heron by the weir", i)))
	}
	notes, gone := a.lookup(t, "/episodic/notes"), a.lookup(t, "/episodic/notes/n03.md")
	a.close(t)

	kv, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = kv.Update(func(tx backend.Txn) error {
		for _, k := range [][]byte{backend.DirentKey(notes, "n03.md"), backend.InodeKey(gone), backend.MetaKey(gone)} {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}

	c := openSession(t, dir, snap, "")
	got := c.view(t)
	c.close(t)
	if !strings.Contains(c.log.String(), "walk of every inode") {
		t.Errorf("the start did not walk the inodes; its log:\n%s", c.log.String())
	}
	if _, ok := got.Entries[gone]; ok {
		t.Error("the memory removed behind the store's back is still in the catalog")
	}
	d := openSession(t, dir, "", "")
	want := d.view(t)
	d.close(t)
	sameView(t, got, want)

	e := openSession(t, dir, snap, "")
	e.view(t)
	e.close(t)
	if !strings.Contains(e.log.String(), "removals from the store's log") {
		t.Errorf("a start after a clean stop did not use the removal log; its log:\n%s", e.log.String())
	}
}
