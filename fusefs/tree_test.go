package fusefs

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/store"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	must(t, err)
	return string(b)
}

func wantErrno(t *testing.T, err error, want syscall.Errno) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("got error %v, want %v", err, want)
	}
}

func ino(t *testing.T, p string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	must(t, syscall.Lstat(p, &st))
	return st.Ino
}

func TestFreshTree(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	ents, err := os.ReadDir(tf.dir)
	must(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	// The guide and the real trees; the generated ones open by name.
	if got := strings.Join(names, " "); got != "MNEMOFS.md archive episodic semantic working" {
		t.Fatalf("root lists %q", got)
	}
	for _, g := range []string{"by-date", "by-tag", "by-type", "by-user", "context", "history", "meta", "recent", "search"} {
		if fi, err := os.Stat(tf.path(g)); err != nil || !fi.IsDir() {
			t.Fatalf("%s by name: %v", g, err)
		}
	}
	if ino(t, tf.dir) != store.RootIno {
		t.Fatalf("root inode %d", ino(t, tf.dir))
	}
	// Generated names cannot be made or removed.
	wantErrno(t, os.Mkdir(tf.path("meta"), 0o755), syscall.EEXIST)
	wantErrno(t, os.WriteFile(tf.path("meta/new"), nil, 0o644), syscall.EROFS)
	wantErrno(t, os.Remove(tf.path("meta/index.json")), syscall.EROFS)
	wantErrno(t, os.Rename(tf.path("meta"), tf.path("x")), syscall.EROFS)
}

func TestWriteReadOffsets(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("episodic/a.txt")
	must(t, os.WriteFile(p, []byte("hello world"), 0o644))
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	must(t, err)
	_, err = f.WriteAt([]byte("WORLD"), 6)
	must(t, err)
	// Write past the end leaves a zero-filled gap.
	_, err = f.WriteAt([]byte("!"), 20)
	must(t, err)
	buf := make([]byte, 5)
	_, err = f.ReadAt(buf, 6)
	must(t, err)
	if string(buf) != "WORLD" {
		t.Fatalf("read back %q", buf)
	}
	must(t, f.Close())
	want := "hello WORLD" + strings.Repeat("\x00", 9) + "!"
	if got := read(t, p); got != want {
		t.Fatalf("content %q, want %q", got, want)
	}
	// Append with O_APPEND, twice, from two descriptors.
	for _, line := range []string{"one\n", "two\n"} {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		must(t, err)
		_, err = f.WriteString(line)
		must(t, err)
		must(t, f.Close())
	}
	if got := read(t, p); got != want+"one\ntwo\n" {
		t.Fatalf("after append %q", got)
	}
	// Truncate down, then up: the cut bytes must not come back.
	must(t, os.Truncate(p, 3))
	must(t, os.Truncate(p, 6))
	if got := read(t, p); got != "hel\x00\x00\x00" {
		t.Fatalf("after truncate %q", got)
	}
	// O_TRUNC through the shell's usual path.
	must(t, os.WriteFile(p, []byte("new"), 0o644))
	if got := read(t, p); got != "new" {
		t.Fatalf("after O_TRUNC %q", got)
	}
}

func TestLargeFileAcrossChunks(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("semantic/big.bin")
	data := make([]byte, 3*store.ChunkSize+12345)
	for i := range data {
		data[i] = byte(i*7 + i/251)
	}
	must(t, os.WriteFile(p, data, 0o644))
	if got := read(t, p); got != string(data) {
		t.Fatal("large file differs after round trip")
	}
	// Overwrite a range spanning a chunk boundary.
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	must(t, err)
	patch := bytes.Repeat([]byte{0xAB}, 1000)
	_, err = f.WriteAt(patch, store.ChunkSize-500)
	must(t, err)
	must(t, f.Close())
	copy(data[store.ChunkSize-500:], patch)
	if got := read(t, p); got != string(data) {
		t.Fatal("patched large file differs")
	}
}

func TestRename(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	a, b := tf.path("working/a"), tf.path("semantic/b")
	must(t, os.WriteFile(a, []byte("A"), 0o644))
	must(t, os.WriteFile(b, []byte("B"), 0o644))
	ia := ino(t, a)
	// Over an existing file, across directories.
	must(t, os.Rename(a, b))
	if read(t, b) != "A" || ino(t, b) != ia {
		t.Fatal("rename over did not move the file")
	}
	_, err := os.Stat(a)
	wantErrno(t, err, syscall.ENOENT)
	// RENAME_NOREPLACE refuses an existing target.
	must(t, os.WriteFile(a, []byte("A2"), 0o644))
	wantErrno(t, unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_NOREPLACE), syscall.EEXIST)
	// RENAME_EXCHANGE swaps.
	must(t, unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE))
	if read(t, a) != "A" || read(t, b) != "A2" {
		t.Fatal("exchange did not swap")
	}
	// Directories: move a tree, not into itself, not over a non-empty one.
	must(t, os.MkdirAll(tf.path("working/d1/sub"), 0o755))
	must(t, os.WriteFile(tf.path("working/d1/sub/f"), []byte("f"), 0o644))
	wantErrno(t, os.Rename(tf.path("working/d1"), tf.path("working/d1/sub/x")), syscall.EINVAL)
	must(t, os.Mkdir(tf.path("episodic/d2"), 0o755))
	must(t, os.WriteFile(tf.path("episodic/d2/g"), nil, 0o644))
	wantErrno(t, syscall.Rename(tf.path("working/d1"), tf.path("episodic/d2")), syscall.ENOTEMPTY)
	must(t, os.Rename(tf.path("working/d1"), tf.path("episodic/d1")))
	if read(t, tf.path("episodic/d1/sub/f")) != "f" {
		t.Fatal("moved tree lost its content")
	}
	var st syscall.Stat_t
	must(t, syscall.Stat(tf.path("episodic"), &st))
	if st.Nlink != 4 { // ., .., d1, d2
		t.Fatalf("episodic nlink %d, want 4", st.Nlink)
	}
	out, err := tf.st.Fsck(false)
	must(t, err)
	if !out.Clean {
		t.Fatalf("fsck after renames: %v", out.Problems)
	}
}

func TestMkdirRmdirSymlinkLink(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	d := tf.path("working/dir")
	must(t, os.Mkdir(d, 0o750))
	wantErrno(t, os.Mkdir(d, 0o750), syscall.EEXIST)
	must(t, os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o644))
	wantErrno(t, syscall.Rmdir(d), syscall.ENOTEMPTY)
	must(t, os.Symlink("f", filepath.Join(d, "l")))
	if got, _ := os.Readlink(filepath.Join(d, "l")); got != "f" {
		t.Fatalf("readlink %q", got)
	}
	if read(t, filepath.Join(d, "l")) != "x" {
		t.Fatal("reading through symlink")
	}
	must(t, os.Link(filepath.Join(d, "f"), filepath.Join(d, "h")))
	var st syscall.Stat_t
	must(t, syscall.Stat(filepath.Join(d, "f"), &st))
	if st.Nlink != 2 || ino(t, filepath.Join(d, "h")) != st.Ino {
		t.Fatalf("hard link: nlink %d", st.Nlink)
	}
	for _, n := range []string{"f", "h", "l"} {
		must(t, syscall.Unlink(filepath.Join(d, n)))
	}
	must(t, syscall.Rmdir(d))
	_, err := os.Stat(d)
	wantErrno(t, err, syscall.ENOENT)
}

func TestTrashAndScratch(t *testing.T) {
	t.Parallel()
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	later := func() { now.Add(int64(time.Minute)) }
	tf := mountAt(t, t.TempDir(), store.Options{Now: clock})
	p := tf.path("episodic/notes.md")
	must(t, os.WriteFile(p, []byte("keep me"), 0o644))
	swp := tf.path("episodic/.notes.md.swp")
	must(t, os.WriteFile(swp, []byte("scratch"), 0o644))
	young := tf.path("episodic/young.md")
	must(t, os.WriteFile(young, []byte("young"), 0o644))
	later() // the first two are now a minute old
	must(t, os.Remove(p))
	must(t, os.Remove(swp))
	must(t, os.WriteFile(young+"2", nil, 0o644))
	must(t, os.Remove(young+"2")) // lived no time at all
	if got := read(t, tf.path("archive/trash/episodic/notes.md")); got != "keep me" {
		t.Fatalf("trash holds %q", got)
	}
	for _, gone := range []string{"archive/trash/episodic/.notes.md.swp", "archive/trash/episodic/young.md2"} {
		_, err := os.Stat(tf.path(gone))
		wantErrno(t, err, syscall.ENOENT)
	}
	// A second removal of the same name does not overwrite the first.
	// (Written again at once, the file would be the next version of the
	// removed one: a save, store/saves.go.)
	later()
	must(t, os.WriteFile(p, []byte("second"), 0o644))
	later()
	must(t, os.Remove(p))
	ents, err := os.ReadDir(tf.path("archive/trash/episodic"))
	must(t, err)
	if len(ents) != 2 {
		t.Fatalf("trash has %d entries, want 2", len(ents))
	}
	// Removing inside the trash deletes for real.
	must(t, os.Remove(tf.path("archive/trash/episodic/notes.md")))
	_, err = os.Stat(tf.path("archive/trash/episodic/notes.md"))
	wantErrno(t, err, syscall.ENOENT)
}

func TestFrontMatterAndMeta(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	good := "---\nid: m1\nuser: alice\nentities: [user:bob, project:beta]\ntags: [food, travel]\nimportance: 0.8\ncreated: 2024-05-01\nmood: happy\n---\nAlice likes ramen.\n"
	must(t, os.WriteFile(tf.path("semantic/alice.md"), []byte(good), 0o644))
	bad := "---\nuser: [unclosed\n---\nbody\n"
	must(t, os.WriteFile(tf.path("semantic/bad.md"), []byte(bad), 0o644))
	must(t, os.WriteFile(tf.path("episodic/e.json"), []byte(`{"metadata":{"user":"carol","tags":"a, b"},"text":"hi"}`), 0o644))
	// Bytes are kept exactly, good or broken.
	if read(t, tf.path("semantic/bad.md")) != bad || read(t, tf.path("semantic/alice.md")) != good {
		t.Fatal("bytes changed")
	}
	buf := make([]byte, 1024)
	n, err := unix.Getxattr(tf.path("semantic/bad.md"), "user.mnemofs.error", buf)
	must(t, err)
	if !strings.Contains(string(buf[:n]), "YAML") {
		t.Fatalf("error xattr %q", buf[:n])
	}
	if errs := read(t, tf.path("meta/errors")); !strings.Contains(errs, "/semantic/bad.md") {
		t.Fatalf("meta/errors: %q", errs)
	}
	var idx struct {
		Memories []store.Info `json:"memories"`
	}
	must(t, json.Unmarshal([]byte(read(t, tf.path("meta/index.json"))), &idx))
	byPath := map[string]store.Info{}
	for _, m := range idx.Memories {
		byPath[m.Path] = m
	}
	a := byPath["/semantic/alice.md"]
	if a.ID != "m1" || strings.Join(a.Users, ",") != "bob,alice" || strings.Join(a.Tags, ",") != "food,travel" ||
		a.Importance == nil || *a.Importance != 0.8 || a.Created.Format("2006-01-02") != "2024-05-01" ||
		a.Extra["mood"] != "happy" || a.Type != "semantic" {
		t.Fatalf("alice metadata %+v", a)
	}
	if e := byPath["/episodic/e.json"]; strings.Join(e.Users, ",") != "carol" || strings.Join(e.Tags, ",") != "a,b" {
		t.Fatalf("json metadata %+v", e)
	}
	// Reading changes neither bytes nor mtime, but counts the access.
	var before, after syscall.Stat_t
	must(t, syscall.Stat(tf.path("semantic/alice.md"), &before))
	time.Sleep(20 * time.Millisecond)
	read(t, tf.path("semantic/alice.md"))
	must(t, syscall.Stat(tf.path("semantic/alice.md"), &after))
	if before.Mtim != after.Mtim {
		t.Fatal("reading changed mtime")
	}
	n, err = unix.Getxattr(tf.path("semantic/alice.md"), "user.mnemofs.access_count", buf)
	must(t, err)
	if string(buf[:n]) == "0" {
		t.Fatal("access not counted")
	}
	var stats store.Stats
	must(t, json.Unmarshal([]byte(read(t, tf.path("meta/stats.json"))), &stats))
	if stats.Memories != 3 || stats.Trees["semantic"].Files != 2 || stats.Errors != 1 {
		t.Fatalf("stats %+v", stats)
	}
	var health struct {
		IndexBacklog *uint64 `json:"index_backlog"`
		Growth       any     `json:"growth"`
		Warnings     []string
	}
	must(t, json.Unmarshal([]byte(read(t, tf.path("meta/stats.json"))), &health))
	if health.IndexBacklog == nil || health.Growth == nil || health.Warnings == nil {
		t.Fatalf("stats.json lacks the index backlog, growth or warnings: %+v", health)
	}
	if !strings.Contains(read(t, tf.path("meta/schema.json")), "importance_score") {
		t.Fatal("schema.json lacks aliases")
	}
}

func TestVisibleAtOnceAcrossDescriptors(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("working/shared")
	w, err := os.Create(p)
	must(t, err)
	_, err = w.WriteString("first")
	must(t, err)
	// A reader sees written bytes before the writer closes.
	if got := read(t, p); got != "first" {
		t.Fatalf("reader saw %q before close", got)
	}
	must(t, w.Close())
	if got := read(t, p); got != "first" {
		t.Fatalf("reader saw %q after close", got)
	}
}
