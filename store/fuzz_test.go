package store

import (
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mnemofs/mnemofs/backend"
)

var (
	fuzzOnce  sync.Once
	fuzzStore *Store
	fuzzDir   uint64
)

// FuzzNames: any name is either refused with EINVAL or ENAMETOOLONG, or
// created, found, listed and given a path under its directory (never
// elsewhere), and removed again.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"a.md", ".", "..", "", "a/b", "a\x00b", "../../etc", strings.Repeat("x", 255),
		strings.Repeat("y", 256), "名前.md", "\xff\xfe", " ", "-rf", ".hidden", "a\\b", "%2F"} {
		f.Add(s)
	}
	fuzzOnce.Do(func() {
		kv, err := backend.OpenBadger("", backend.Options{InMemory: true})
		if err != nil {
			f.Fatal(err)
		}
		fuzzStore, err = Open(kv, Options{ScratchAge: -1})
		if err != nil {
			f.Fatal(err)
		}
		d, err := fuzzStore.Mkdir(RootIno, "fz", 0o755, Owner{})
		if err != nil {
			f.Fatal(err)
		}
		fuzzDir = d.Ino
	})
	s := fuzzStore
	f.Fuzz(func(t *testing.T, name string) {
		i, err := s.Create(fuzzDir, name, 0o644, Owner{})
		if err != nil {
			if !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENAMETOOLONG) {
				t.Fatalf("create %q: unexpected error %v", name, err)
			}
			if checkName(name) == nil {
				t.Fatalf("create %q refused (%v) but the name is valid", name, err)
			}
			return
		}
		if checkName(name) != nil || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." || len(name) > NameMax {
			t.Fatalf("created an invalid name %q", name)
		}
		got, err := s.Lookup(fuzzDir, name)
		if err != nil || got.Ino != i.Ino {
			t.Fatalf("lookup %q: %v, ino %d want %d", name, err, got.Ino, i.Ino)
		}
		if p, err := s.Path(i.Ino); err != nil || p != "/fz/"+name {
			t.Fatalf("path of %q: %q, %v", name, p, err)
		}
		ents, err := s.ReadDir(fuzzDir)
		if err != nil || len(ents) != 1 || ents[0].Name != name {
			t.Fatalf("listing after creating %q: %v %v", name, ents, err)
		}
		if _, err := s.Remove(fuzzDir, name); err != nil {
			t.Fatalf("remove %q: %v", name, err)
		}
		if _, err := s.Lookup(fuzzDir, name); !errors.Is(err, syscall.ENOENT) {
			t.Fatalf("lookup after removing %q: %v", name, err)
		}
	})
}
