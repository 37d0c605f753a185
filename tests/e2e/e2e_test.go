package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testfuse"
)

// statInfo is what must survive an unmount/remount for one path.
type statInfo struct {
	Ino, Size, Nlink uint64
	Mode, Uid, Gid   uint32
	Mtime            int64
	Target           string
	Xattrs           map[string]string
	Names            []string // directory entries
}

func collect(t *testing.T, root, rel string) statInfo {
	t.Helper()
	p := filepath.Join(root, rel)
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatalf("lstat %s: %v", rel, err)
	}
	si := statInfo{Ino: st.Ino, Size: uint64(st.Size), Nlink: uint64(st.Nlink), Mode: st.Mode,
		Uid: st.Uid, Gid: st.Gid, Mtime: st.Mtim.Nano()}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFLNK:
		si.Target, _ = os.Readlink(p)
		return si // user xattrs are not allowed on symlinks
	case syscall.S_IFDIR:
		ents, err := os.ReadDir(p)
		if err != nil {
			t.Fatalf("readdir %s: %v", rel, err)
		}
		for _, e := range ents {
			si.Names = append(si.Names, e.Name())
		}
	}
	si.Xattrs = map[string]string{}
	buf := make([]byte, 64<<10)
	n, err := syscall.Listxattr(p, buf)
	if err != nil {
		t.Fatalf("listxattr %s: %v", rel, err)
	}
	for _, k := range strings.Split(string(buf[:n]), "\x00") {
		if k != "" && !strings.Contains(k, "access") { // reads change access_*
			v, err := getxattr(p, k)
			if err != nil {
				t.Errorf("getxattr %s %s: %v", rel, k, err)
			}
			si.Xattrs[k] = v
		}
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		// The generated ones are read by name (listings leave them out).
		for _, k := range []string{"sha256", "size", "version", "created", "lineage", "path", "type"} {
			if v, err := getxattr(p, "user.mnemofs."+k); err == nil {
				si.Xattrs["user.mnemofs."+k] = v
			}
		}
	}
	return si
}

func TestPersistenceAcrossRemount(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	for _, f := range []string{"episodic/", "semantic/", "working/", "archive/", "meta/index.json",
		"meta/schema.json", "meta/stats.json", "meta/errors"} {
		if _, err := os.Stat(filepath.Join(mnt, f)); err != nil {
			t.Errorf("fresh store: %s missing: %v", f, err)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	md := []byte("---\ntags: [persist]\n---\nhello, persistent world\n")
	bin := randBytes(r, 200<<10+7)
	check(t, os.MkdirAll(p("semantic/notes"), 0o750))
	check(t, os.WriteFile(p("semantic/notes/a.md"), md, 0o640))
	check(t, os.WriteFile(p("working/bin.dat"), bin, 0o600))
	check(t, os.WriteFile(p("episodic/empty"), nil, 0o644))
	check(t, os.MkdirAll(p("custom/deep/er"), 0o755))
	check(t, os.WriteFile(p("custom/deep/er/run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755))
	check(t, os.Chmod(p("custom/deep"), 0o711))
	check(t, os.WriteFile(p("working/tomove.txt"), []byte("moving"), 0o644))
	check(t, os.Rename(p("working/tomove.txt"), p("semantic/moved.txt")))
	check(t, os.Symlink("../semantic/notes/a.md", p("working/link")))
	check(t, os.Symlink("/nonexistent/target", p("custom/dangling")))
	check(t, os.Link(p("working/bin.dat"), p("custom/hard.dat")))
	check(t, syscall.Setxattr(p("semantic/notes/a.md"), "user.color", []byte("blue"), 0))
	check(t, syscall.Setxattr(p("working/bin.dat"), "user.bin", []byte{0, 1, 0xff, 'x'}, 0))
	check(t, syscall.Setxattr(p("semantic/notes"), "user.dir", []byte("d"), 0))
	check(t, syscall.Setxattr(p("episodic/empty"), "user.empty", nil, 0))
	old := time.Date(2020, 1, 2, 3, 4, 5, 123456789, time.UTC)
	check(t, os.Chtimes(p("semantic/notes/a.md"), old, old))
	check(t, os.Chtimes(p("custom/deep"), old.Add(time.Hour), old.Add(time.Hour)))

	// System metadata as xattrs ("" means any non-empty value).
	for k, want := range map[string]string{"sha256": sha(md), "size": strconv.Itoa(len(md)), "version": "1",
		"created": "", "modified": ""} {
		if v, err := getxattr(p("semantic/notes/a.md"), "user.mnemofs."+k); err != nil || v == "" || want != "" && v != want {
			t.Errorf("user.mnemofs.%s = %q, %v; want %q", k, v, err, want)
		}
	}

	paths := []string{"semantic", "semantic/notes", "semantic/notes/a.md", "working", "working/bin.dat",
		"episodic/empty", "custom", "custom/deep", "custom/deep/er", "custom/deep/er/run.sh",
		"semantic/moved.txt", "working/link", "custom/dangling", "custom/hard.dat"}
	before := map[string]statInfo{}
	for _, rel := range paths {
		before[rel] = collect(t, mnt, rel)
	}
	if before["custom/hard.dat"].Ino != before["working/bin.dat"].Ino || before["working/bin.dat"].Nlink != 2 {
		t.Errorf("hard link: ino %d vs %d, nlink %d", before["custom/hard.dat"].Ino, before["working/bin.dat"].Ino, before["working/bin.dat"].Nlink)
	}
	if got := time.Unix(0, before["semantic/notes/a.md"].Mtime); !got.Equal(old) {
		t.Errorf("mtime after utimes = %v, want %v", got, old)
	}
	m.stop(t, syscall.SIGTERM)
	if ents, err := os.ReadDir(mnt); err != nil || len(ents) != 0 {
		t.Fatalf("mountpoint after unmount: %v entries, %v", len(ents), err)
	}

	startMount(t, data, mnt)
	for _, rel := range paths {
		got, want := collect(t, mnt, rel), before[rel]
		slices.Sort(got.Names)
		slices.Sort(want.Names)
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if !bytes.Equal(gj, wj) {
			t.Errorf("%s changed across remount:\n got %s\nwant %s", rel, gj, wj)
		}
	}
	for rel, want := range map[string][]byte{"semantic/notes/a.md": md, "working/bin.dat": bin,
		"custom/hard.dat": bin, "semantic/moved.txt": []byte("moving"), "episodic/empty": {}} {
		if got, err := os.ReadFile(p(rel)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s after remount: %d bytes (err %v), want %d bytes", rel, len(got), err, len(want))
		}
	}
	if got, err := os.ReadFile(p("working/link")); err != nil || !bytes.Equal(got, md) {
		t.Errorf("reading through symlink after remount: %q, %v", got, err)
	}
}

func TestRmMovesOldFilesToTrash(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	startMount(t, data, mnt)
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	check(t, os.MkdirAll(p("semantic/proj"), 0o755))
	check(t, os.WriteFile(p("semantic/proj/old.md"), []byte("keep me"), 0o644))
	check(t, os.WriteFile(p("semantic/proj/.old.md.swp"), []byte("swap"), 0o644))
	time.Sleep(3500 * time.Millisecond)
	check(t, os.WriteFile(p("semantic/proj/young.md"), []byte("young"), 0o644))
	for _, n := range []string{"old.md", ".old.md.swp", "young.md"} {
		check(t, os.Remove(p("semantic/proj/"+n)))
		if _, err := os.Lstat(p("semantic/proj/" + n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still visible after rm: %v", n, err)
		}
	}
	if b, err := os.ReadFile(p("archive/trash/semantic/proj/old.md")); err != nil || string(b) != "keep me" {
		t.Errorf("old file not in archive/trash/semantic/proj/old.md: %q, %v", b, err)
	}
	for _, n := range []string{".old.md.swp", "young.md"} {
		if _, err := os.Lstat(p("archive/trash/semantic/proj/" + n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s should be really deleted, not trashed: %v", n, err)
		}
	}
}

// makeTree writes the import fixture and returns nothing: snapshot it.
func makeTree(t *testing.T, root string) {
	r := rand.New(rand.NewPCG(7, 8))
	files := []struct {
		rel  string
		data []byte
		perm os.FileMode
	}{
		{"a/b/c/deep.txt", []byte("deep\n"), 0o644},
		{"a/bin.dat", append(randBytes(r, 64<<10), 0, 0, 0), 0o600},
		{"a/b/empty", nil, 0o644},
		{"big.bin", randBytes(r, 3<<20), 0o644},
		{"odd.bin", randBytes(r, 1<<20+17), 0o640},
		{"name with spaces.txt", []byte("spaces\n"), 0o644},
		{"日本語/ファイル 名.md", []byte("---\ntags: [日本]\n---\n内容\n"), 0o644},
		{"émoji-🧠.bin", randBytes(r, 1000), 0o644},
		{"script.sh", []byte("#!/bin/sh\nexit 0\n"), 0o755},
		{"overwrite.txt", []byte("new"), 0o644},
	}
	for _, f := range files {
		p := filepath.Join(root, f.rel)
		check(t, os.MkdirAll(filepath.Dir(p), 0o755))
		check(t, os.WriteFile(p, f.data, f.perm))
		check(t, os.Chmod(p, f.perm))
	}
	check(t, os.MkdirAll(filepath.Join(root, "a/empty dir"), 0o755))
	check(t, os.Chmod(filepath.Join(root, "a/b"), 0o750))
	check(t, os.Symlink("a/b/c/deep.txt", filepath.Join(root, "link")))
	check(t, os.Symlink("/nonexistent/target", filepath.Join(root, "a/dangling")))
}

func TestImportExportRoundTrip(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	makeTree(t, src)
	want := snapshot(t, src)

	t.Run("unmounted", func(t *testing.T) {
		data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
		r := mustRun(t, "import", src, "--to", "/semantic/imp", "--data", data)
		if !strings.Contains(r.stdout, "imported 10 files") {
			t.Errorf("import summary: %q", r.stdout)
		}
		mustRun(t, "export", out, "--from", "/semantic/imp", "--data", data)
		compareTrees(t, "export after unmounted import", want, snapshot(t, out))
		r = mustRun(t, "fsck", "--data", data)
		if !strings.Contains(r.stdout, "consistent") {
			t.Errorf("fsck after import: %s", r)
		}
	})

	t.Run("mounted", func(t *testing.T) {
		testfuse.Require(t)
		data, mnt, out := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "out")
		startMount(t, data, mnt)
		pre := filepath.Join(mnt, "semantic/pre")
		check(t, os.Mkdir(pre, 0o755))
		// Names looked up as missing just before the import (negative dentries).
		for _, n := range []string{"name with spaces.txt", "a", "big.bin", "link"} {
			if _, err := os.Lstat(filepath.Join(pre, n)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s exists before import: %v", n, err)
			}
		}
		if _, err := os.Stat(filepath.Join(mnt, "semantic/fresh")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("semantic/fresh exists before import: %v", err)
		}
		if ents, _ := os.ReadDir(pre); len(ents) != 0 {
			t.Fatalf("pre not empty: %v", ents)
		}
		// A file cached by the kernel that the import overwrites.
		stale := strings.Repeat("old content, longer than the new one\n", 10)
		check(t, os.WriteFile(filepath.Join(pre, "overwrite.txt"), []byte(stale), 0o644))
		if b, _ := os.ReadFile(filepath.Join(pre, "overwrite.txt")); string(b) != stale {
			t.Fatalf("overwrite.txt read back %q", b)
		}

		mustRun(t, "import", src, "--to", "/semantic/pre", "--data", data)
		mustRun(t, "import", src, "--to", "/semantic/fresh", "--data", data)
		for _, n := range []string{"name with spaces.txt", "a", "big.bin", "link"} {
			if _, err := os.Lstat(filepath.Join(pre, n)); err != nil {
				t.Errorf("imported %q not visible through the mount right away: %v", n, err)
			}
		}
		compareTrees(t, "mount view of import into existing dir", want, snapshot(t, pre))
		compareTrees(t, "mount view of import into new dir", want, snapshot(t, filepath.Join(mnt, "semantic/fresh")))
		if t.Failed() {
			// Tell a missing kernel-cache invalidation from lost data.
			time.Sleep(1500 * time.Millisecond)
			t.Logf("re-checking after 1.5 s (past the kernel cache timeouts):")
			compareTrees(t, "mount view 1.5 s after import into existing dir", want, snapshot(t, pre))
			compareTrees(t, "mount view 1.5 s after import into new dir", want, snapshot(t, filepath.Join(mnt, "semantic/fresh")))
		}

		mustRun(t, "export", out, "--from", "/semantic/pre", "--data", data)
		compareTrees(t, "export while mounted", want, snapshot(t, out))
	})
}

// statsJSON is the part of `mnemofs stats --json` the tests check.
type statsJSON struct {
	Memories int    `json:"memories"`
	Bytes    uint64 `json:"bytes"`
	Trees    map[string]struct {
		Files int    `json:"files"`
		Bytes uint64 `json:"bytes"`
	} `json:"trees"`
}

func checkStatsFsck(t *testing.T, data, when string, files map[string]string) {
	t.Helper()
	r := mustRun(t, "stats", "--json", "--data", data)
	var st statsJSON
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("%s: stats --json is not JSON: %v\n%s", when, err, r.stdout)
	}
	var total uint64
	trees := map[string]int{}
	for rel, c := range files {
		total += uint64(len(c))
		trees[strings.Split(rel, "/")[0]]++
	}
	if st.Memories != len(files) || st.Bytes != total {
		t.Errorf("%s: stats says %d memories / %d bytes, want %d / %d", when, st.Memories, st.Bytes, len(files), total)
	}
	for tree, n := range trees {
		if st.Trees[tree].Files != n {
			t.Errorf("%s: stats tree %s has %d files, want %d", when, tree, st.Trees[tree].Files, n)
		}
	}
	if r := mustRun(t, "stats", "--data", data); !strings.Contains(r.stdout, fmt.Sprintf("memories: %d", len(files))) {
		t.Errorf("%s: stats text: %q", when, r.stdout)
	}
	if r := mustRun(t, "fsck", "--data", data); !strings.Contains(r.stdout, "consistent") {
		t.Errorf("%s: fsck: %s", when, r)
	}
	var rep struct {
		Clean    bool     `json:"clean"`
		Problems []string `json:"problems"`
	}
	r = mustRun(t, "fsck", "--json", "--data", data)
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || !rep.Clean {
		t.Errorf("%s: fsck --json: %v %+v\n%s", when, err, rep, r.stdout)
	}
}

func TestStatsAndFsck(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	files := map[string]string{
		"semantic/k.md":  "---\ntags: [a]\n---\nknowledge\n",
		"working/w.txt":  "work in progress",
		"episodic/e.log": strings.Repeat("event\n", 1000),
		"custom/c.bin":   "\x00\x01\x02",
	}
	check(t, os.MkdirAll(filepath.Join(mnt, "custom"), 0o755))
	for rel, c := range files {
		check(t, os.WriteFile(filepath.Join(mnt, rel), []byte(c), 0o644))
	}
	checkStatsFsck(t, data, "mounted", files)
	m.stop(t, syscall.SIGTERM)
	checkStatsFsck(t, data, "unmounted", files)
}
