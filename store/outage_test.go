package store

import (
	"errors"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/internal/testetcd"
)

// TestOutageKeepsTheCache: a store on etcd whose only member dies refuses
// an append (ErrUnavailable) and keeps serving the committed content it
// read before, without the refused bytes.
func TestOutageKeepsTheCache(t *testing.T) {
	t.Parallel()
	c := testetcd.StartCluster(t, 1)
	kv, err := backend.OpenEtcd(backend.EtcdOptions{Endpoints: c.Endpoints(), Prefix: testetcd.Prefix(t)})
	must(t, err)
	t.Cleanup(func() { kv.Close() })
	s, err := Open(kv, Options{ScratchAge: -1})
	must(t, err)
	t.Cleanup(func() { s.Close() })
	ino := writeFile(t, s, RootIno, "notes.md", []byte("acknowledged\n"))
	buf := make([]byte, 64)
	n, err := s.ReadAt(ino, buf, 0)
	must(t, err)
	if string(buf[:n]) != "acknowledged\n" {
		t.Fatalf("read %q", buf[:n])
	}
	c.Kill(0)
	must(t, s.Open(ino, false))
	if _, err := s.Append(ino, []byte("refused\n")); err != nil {
		t.Fatal(err)
	}
	err = s.Release(ino)
	if !errors.Is(err, backend.ErrUnavailable) {
		t.Fatalf("the append's commit with etcd down: %v, want ErrUnavailable", err)
	}
	n, err = s.ReadAt(ino, buf, 0)
	if err != nil || string(buf[:n]) != "acknowledged\n" {
		t.Fatalf("during the outage: %q, %v", buf[:n], err)
	}
	must(t, s.Open(ino, true))
	n, err = s.ReadAt(ino, buf, 0)
	s.Release(ino)
	if err != nil || string(buf[:n]) != "acknowledged\n" {
		t.Fatalf("opened again during the outage: %q, %v", buf[:n], err)
	}
}
