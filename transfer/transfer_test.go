package transfer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mnemofs/mnemofs/internal/storetest"
	"github.com/mnemofs/mnemofs/store"
)

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// stores are the ways an import writes: batches (a mounted store's KV,
// here in memory), and a load (the import command's own store) from the
// first file or after the first 100.
var stores = []struct {
	name   string
	open   func(testing.TB, store.Options) *store.Store
	loadAt int
}{
	{"batches", storetest.NewStore, 0},
	{"load", storetest.NewBulkStore, 0},
	{"batches-then-load", storetest.NewBulkStore, 100},
}

type importer func(s *store.Store, src, to string) (*Result, error)

// eachStore runs test for each of stores, in parallel.
func eachStore(t *testing.T, test func(*testing.T, func(testing.TB, store.Options) *store.Store, importer)) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			test(t, st.open, func(s *store.Store, src, to string) (*Result, error) {
				return importFrom(s, src, to, nil, st.loadAt)
			})
		})
	}
}

func TestImportExportRoundTrip(t *testing.T) { eachStore(t, testImportExportRoundTrip) }

func testImportExportRoundTrip(t *testing.T, open func(testing.TB, store.Options) *store.Store, imp importer) {
	src := t.TempDir()
	files := map[string][]byte{
		"a.md":             []byte("---\nuser: x\n---\nhi"),
		"sub/b.bin":        {0, 1, 2, 255},
		"sub/deep/c.txt":   bytes.Repeat([]byte("c"), 3*store.ChunkSize+7),
		"sub/empty":        nil,
		"名前 with space.md": []byte("utf8"),
	}
	for p, b := range files {
		storetest.Must(t, os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755))
		storetest.Must(t, os.WriteFile(filepath.Join(src, p), b, 0o640))
	}
	storetest.Must(t, os.Symlink("a.md", filepath.Join(src, "link")))
	s := open(t, store.Options{})
	res, err := imp(s, src, "/episodic/imp")
	storetest.Must(t, err)
	if res.Files != int64(len(files)) || res.Symlinks != 1 {
		t.Fatalf("import %+v", res)
	}
	// Import twice: files are overwritten, not duplicated.
	_, err = imp(s, src, "/episodic/imp")
	storetest.Must(t, err)
	out := filepath.Join(t.TempDir(), "out")
	_, err = Export(s, out, "/episodic/imp", nil)
	storetest.Must(t, err)
	for p, b := range files {
		got, err := os.ReadFile(filepath.Join(out, p))
		storetest.Must(t, err)
		if !bytes.Equal(got, b) {
			t.Fatalf("%s differs", p)
		}
		fi, _ := os.Stat(filepath.Join(out, p))
		if fi.Mode().Perm() != 0o640 {
			t.Fatalf("%s mode %v", p, fi.Mode())
		}
	}
	if l, _ := os.Readlink(filepath.Join(out, "link")); l != "a.md" {
		t.Fatalf("link %q", l)
	}
	ino, err := s.Resolve("/episodic/imp/a.md")
	storetest.Must(t, err)
	in, err := s.Info(ino)
	storetest.Must(t, err)
	if len(in.Users) != 1 || in.Users[0] != "x" || in.SHA256 != sha(files["a.md"]) {
		t.Fatalf("imported metadata %+v", in)
	}
	r, err := s.Fsck(false)
	storetest.Must(t, err)
	if !r.Clean {
		t.Fatalf("fsck: %v", r.Problems)
	}
}

// TestImportInWalkOrder imports more files than are prepared ahead (in
// parallel), large ones read in turn among them: every file arrives whole,
// with its metadata, and inode numbers follow the walk as with one file at
// a time.
func TestImportInWalkOrder(t *testing.T) { eachStore(t, testImportInWalkOrder) }

func testImportInWalkOrder(t *testing.T, open func(testing.TB, store.Options) *store.Store, imp importer) {
	src := t.TempDir()
	var names []string
	want := map[string][]byte{}
	for d := 0; d < 3; d++ {
		for i := 0; i < 2*prepareAhead; i++ {
			p := filepath.Join(fmt.Sprintf("d%d", d), fmt.Sprintf("f%04d.md", i))
			b := []byte(fmt.Sprintf("---\nuser: u%d\ntags: [t%d]\n---\nnote %d of %d\n", i%5, d, i, d))
			if i%97 == 0 {
				b = append(b, bytes.Repeat([]byte{byte(i)}, prepareMax+store.ChunkSize+1)...)
			}
			storetest.Must(t, os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755))
			storetest.Must(t, os.WriteFile(filepath.Join(src, p), b, 0o644))
			names = append(names, p)
			want[p] = b
		}
	}
	s := open(t, store.Options{})
	res, err := imp(s, src, "/episodic/w")
	storetest.Must(t, err)
	if res.Files != int64(len(names)) || res.Dirs != 3 {
		t.Fatalf("import %+v", res)
	}
	var total int64
	last := uint64(0)
	for _, p := range names { // WalkDir's order: lexical
		ino, err := s.Resolve("/episodic/w/" + filepath.ToSlash(p))
		storetest.Must(t, err)
		if ino <= last {
			t.Fatalf("%s: inode %d after %d: not in walk order", p, ino, last)
		}
		last = ino
		in, err := s.Info(ino)
		storetest.Must(t, err)
		b := want[p]
		total += int64(len(b))
		var i, d int
		fmt.Sscanf(p, "d%d/f%04d.md", &d, &i)
		if in.SHA256 != sha(b) || len(in.Users) != 1 || in.Users[0] != fmt.Sprintf("u%d", i%5) {
			t.Fatalf("%s: metadata %+v", p, in)
		}
		got := make([]byte, len(b)+1)
		n, err := s.ReadAt(ino, got, 0)
		if err != nil && err != io.EOF || !bytes.Equal(got[:n], b) {
			t.Fatalf("%s: read %d bytes (%v), want %d", p, n, err, len(b))
		}
	}
	if res.Bytes != total {
		t.Fatalf("bytes %d, want %d", res.Bytes, total)
	}
}
