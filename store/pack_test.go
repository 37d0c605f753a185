package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/internal/storetest"
	"github.com/mnemofs/mnemofs/lifecycle"
	"github.com/mnemofs/mnemofs/store"
)

// TestArchivedSessionsArePacked: archiving a session compresses its turns
// into a pack that reads back byte for byte (also after a reopen); a write,
// a truncate or a removal takes a member out; the pack goes with its last
// member; fsck is clean throughout and finds a broken membership.
func TestArchivedSessionsArePacked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clock := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	open := func() (*store.Store, backend.KV) {
		kv, err := backend.OpenBadger(filepath.Join(dir, "db"), backend.Options{})
		storetest.Must(t, err)
		s, err := store.Open(kv, store.Options{BlobDir: filepath.Join(dir, "blobs"), ScratchAge: -1, Now: func() time.Time { return clock }})
		storetest.Must(t, err)
		return s, kv
	}
	s, kv := open()
	d := storetest.MkdirAll(t, s, "/episodic/sessions/2026-01-10")
	want := map[uint64][]byte{}
	for k := range 20 {
		body := fmt.Sprintf("---\nspeaker: %s\nimportance: 0.1\n---\nTurn %d: we talked about the trip to Lisbon and the hotel near the river.\n",
			[]string{"alice", "bob"}[k%2], k)
		want[storetest.WriteFile(t, s, d, fmt.Sprintf("turn-%02d.md", k), []byte(body))] = []byte(body)
	}
	clock = clock.Add(60 * 24 * time.Hour)
	r, err := lifecycle.Maintain(s, lifecycle.Options{})
	storetest.Must(t, err)
	if len(r.Errors) != 0 {
		t.Fatal(r.Errors)
	}
	ps, err := s.Packs()
	storetest.Must(t, err)
	if ps.Packs != 1 || ps.Files != 21 { // the turns and the summary written before the move
		t.Fatalf("packs %+v", ps)
	}
	t.Logf("packed %+v", ps)
	if ps.Compressed*3 > ps.RawBytes {
		t.Errorf("a session of similar turns compressed only to %d of %d bytes", ps.Compressed, ps.RawBytes)
	}
	check := func(when string) {
		t.Helper()
		for ino, b := range want {
			if got := storetest.ReadAll(t, s, ino); !bytes.Equal(got, b) {
				p, _ := s.Path(ino)
				t.Fatalf("%s: %s reads %q, want %q", when, p, got, b)
			}
		}
		storetest.FsckClean(t, s)
	}
	check("packed")
	err = kv.View(func(tx backend.Txn) error {
		for ino := range want {
			if _, err := tx.Get(backend.ChunkKey(ino, 0)); !errors.Is(err, backend.ErrNotFound) {
				return fmt.Errorf("inode %d still has its chunk (%v)", ino, err)
			}
		}
		return nil
	})
	storetest.Must(t, err)

	// Survives a restart.
	storetest.Must(t, s.Close())
	storetest.Must(t, kv.Close())
	s, kv = open()
	defer kv.Close()
	defer s.Close()
	check("reopened")

	inos := make([]uint64, 0, len(want))
	for ino := range want {
		inos = append(inos, ino)
	}
	// An append unpacks: old bytes and new.
	storetest.AppendBytes(t, s, inos[0], []byte("and one more line\n"))
	want[inos[0]] = append(want[inos[0]], "and one more line\n"...)
	// A truncate unpacks.
	storetest.Must(t, s.Truncate(inos[1], 7))
	want[inos[1]] = want[inos[1]][:7]
	check("after a write and a truncate")
	if ps, _ = s.Packs(); ps.Files != 19 {
		t.Fatalf("after two unpacks: %+v", ps)
	}

	// fsck finds a member whose key is gone, and repairs it.
	storetest.Must(t, kv.Update(func(tx backend.Txn) error { return tx.Delete(backend.MemberKey(1, inos[2])) }))
	if fr, _ := s.Fsck(false); fr.Clean {
		t.Fatal("fsck missed a lost membership key")
	}
	fr, err := s.Fsck(true)
	storetest.Must(t, err)
	if fr.Repaired == 0 {
		t.Fatal("nothing repaired")
	}
	storetest.FsckClean(t, s)

	// Removing every packed member for real drops the pack.
	for _, ino := range inos[2:] {
		p, err := s.Path(ino)
		storetest.Must(t, err)
		dirIno, err := s.Resolve(filepath.Dir(p))
		storetest.Must(t, err)
		_, err = s.Remove(dirIno, filepath.Base(p)) // to the trash
		storetest.Must(t, err)
		p, err = s.Path(ino)
		storetest.Must(t, err)
		dirIno, err = s.Resolve(filepath.Dir(p))
		storetest.Must(t, err)
		_, err = s.Remove(dirIno, filepath.Base(p)) // from the trash: gone
		storetest.Must(t, err)
		delete(want, ino)
	}
	sum, err := s.Lookup(d, "summary.md") // d moved with the session
	storetest.Must(t, err)
	ps, _ = s.Packs()
	if ps.Files != 1 || ps.Packs != 1 { // the summary is left
		t.Fatalf("before the last member goes: %+v", ps)
	}
	storetest.Rewrite(t, s, sum.Ino, []byte("a new summary\n"))
	if ps, _ = s.Packs(); ps.Packs != 0 || ps.Files != 0 {
		t.Fatalf("the pack outlived its members: %+v", ps)
	}
	check("after the last member left")
}

// TestLargeSessionSplitsIntoPacks: a session of more files than one pack
// takes is packed into several (bounded transactions), all readable.
func TestLargeSessionSplitsIntoPacks(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	s := storetest.NewStore(t, store.Options{ScratchAge: -1, Now: func() time.Time { return clock }})
	d := storetest.MkdirAll(t, s, "/episodic/sessions/long")
	want := map[uint64]string{}
	for k := range store.PackFiles + 100 {
		body := fmt.Sprintf("---\nimportance: 0.1\n---\nturn %d of a long session about the weather\n", k)
		want[storetest.WriteFile(t, s, d, fmt.Sprintf("t%04d.md", k), []byte(body))] = body
	}
	clock = clock.Add(60 * 24 * time.Hour)
	r, err := lifecycle.Maintain(s, lifecycle.Options{})
	storetest.Must(t, err)
	if len(r.Errors) != 0 {
		t.Fatal(r.Errors)
	}
	ps, err := s.Packs()
	storetest.Must(t, err)
	if ps.Packs != 2 || ps.Files != store.PackFiles+100 { // the summary (over one chunk) is not packed
		t.Fatalf("packs %+v", ps)
	}
	for ino, body := range want {
		if got := string(storetest.ReadAll(t, s, ino)); got != body {
			t.Fatalf("inode %d: %q", ino, got)
		}
	}
	storetest.FsckClean(t, s)
}
