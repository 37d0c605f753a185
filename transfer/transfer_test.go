package transfer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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

func TestImportExportRoundTrip(t *testing.T) {
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
	s := storetest.NewStore(t, store.Options{})
	res, err := Import(s, src, "/episodic/imp", nil)
	storetest.Must(t, err)
	if res.Files != int64(len(files)) || res.Symlinks != 1 {
		t.Fatalf("import %+v", res)
	}
	// Import twice: files are overwritten, not duplicated.
	_, err = Import(s, src, "/episodic/imp", nil)
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
