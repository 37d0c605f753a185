package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testenv"
)

// walkCorpus writes n memories under src, as an agent's memory folder
// holds them: the four trees, files at the top, a folder of its own;
// front matter with users, tags and dates (so that every view shows
// them); every seventh names Zermatt. It returns each memory's size by
// path.
func walkCorpus(t *testing.T, src string, n int) map[string]int {
	t.Helper()
	r := rand.New(rand.NewPCG(50, 2000))
	dirs := []string{"semantic/people", "semantic/projects", "episodic/trips", "working", "notes", ""}
	users := []string{"alice", "bob", "carol"}
	tags := []string{"food", "travel", "work", "health"}
	sizes := map[string]int{}
	for i := range n {
		dir := dirs[i%len(dirs)]
		p := filepath.Join(dir, fmt.Sprintf("m%04d.md", i))
		body := fmt.Sprintf("Memory %d about %s and %s.", i, tags[r.IntN(len(tags))], users[r.IntN(len(users))])
		if i%7 == 0 {
			body += " The trip to Zermatt is in June."
		}
		body += strings.Repeat(" More words for size.", r.IntN(60))
		text := fmt.Sprintf("---\nuser: %s\ntags: [%s]\ncreated: 2026-0%d-1%d\n---\n%s\n", users[i%len(users)], tags[i%len(tags)], 1+i%9, i%10, body)
		check(t, os.MkdirAll(filepath.Join(src, dir), 0o755))
		check(t, os.WriteFile(filepath.Join(src, p), []byte(text), 0o644))
		sizes[p] = len(text)
	}
	return sizes
}

// count runs a shell pipeline in dir and returns the number it prints.
func count(t *testing.T, dir, pipeline string) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", pipeline)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", pipeline, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("%s printed %q", pipeline, out)
	}
	return n
}

// TestWalksMeetEachMemoryOnce: at 2,000 memories, grep -rl, find, du,
// tar and rsync over the root of a mount meet each memory once (and the
// guide), nothing from the trash and nothing of the generated trees,
// which still answer by their paths.
func TestWalksMeetEachMemoryOnce(t *testing.T) {
	t.Parallel()
	const n = 2000
	src, data, mnt := t.TempDir(), t.TempDir(), t.TempDir()
	sizes := walkCorpus(t, src, n)
	mustRun(t, "import", "--data", data, src)
	imported := time.Now()
	startMount(t, data, mnt)
	// Forget some (rm moves them to the trash), once they are older than
	// the 3 s within which a removal counts as a scratch file's.
	time.Sleep(time.Until(imported.Add(3500 * time.Millisecond)))
	removed := 0
	for p := range sizes {
		if i, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(p)[1:], ".md")); i%7 == 0 && i%3 == 0 {
			check(t, os.Remove(filepath.Join(mnt, p)))
			delete(sizes, p)
			removed++
		}
	}
	if _, err := os.Stat(filepath.Join(mnt, "archive/trash/semantic/people/m0000.md")); err != nil {
		t.Fatalf("a removed memory is not in the trash: %v", err)
	}
	zermatt, blocks := 0, int64(0)
	for p, size := range sizes {
		i, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(p)[1:], ".md"))
		if i%7 == 0 {
			zermatt++
		}
		blocks += int64(size+511) / 512
	}
	var guide syscall.Stat_t
	check(t, syscall.Stat(filepath.Join(mnt, "MNEMOFS.md"), &guide))
	blocks += guide.Blocks
	live := len(sizes)
	t.Logf("%d memories, %d removed to the trash, %d live, %d name Zermatt", n, removed, live, zermatt)

	if got := count(t, mnt, "grep -rli zermatt . | wc -l"); got != zermatt {
		t.Errorf("grep -rl zermatt over the root: %d files, want %d (each live memory once)", got, zermatt)
	}
	if got := count(t, mnt, "grep -rli zermatt . | grep -v -e '^./semantic/' -e '^./episodic/' -e '^./working/' -e '^./notes/' -e '^./m[0-9]*.md$' | wc -l"); got != 0 {
		t.Errorf("grep -rl zermatt over the root finds %d files outside the real trees (trash, views, history)", got)
	}
	if got := count(t, mnt, "find . -type f | wc -l"); got != live+1 {
		t.Errorf("find -type f over the root: %d files, want %d (the live memories and the guide)", got, live+1)
	}
	if got := count(t, mnt, "find . -type f -path '*trash*' -o -type f -path './by-*' -o -type f -path './history/*' | wc -l"); got != 0 {
		t.Errorf("find over the root reaches the trash or the generated trees: %d files", got)
	}
	if got := count(t, mnt, "du -s -B512 . | cut -f1"); int64(got) != blocks {
		t.Errorf("du -s of the root: %d blocks, want %d (the live memories and the guide)", got, blocks)
	}
	if got := count(t, mnt, "tar -cf - . | tar -tf - | grep -v '/$' | wc -l"); got != live+1 {
		t.Errorf("tar of the root: %d files, want %d", got, live+1)
	}
	if _, err := exec.LookPath("rsync"); err == nil || testenv.Required() { // else the rest holds without it
		dest := t.TempDir()
		if out, err := exec.Command("rsync", "-a", mnt+"/", dest+"/").CombinedOutput(); err != nil {
			t.Fatalf("rsync -a: %v %s", err, out)
		}
		if got := count(t, dest, "find . -type f | wc -l"); got != live+1 {
			t.Errorf("rsync -a of the root copied %d files, want %d", got, live+1)
		}
	} else if os.Getenv("MNEMOFS_REQUIRE_FUSE") == "1" {
		t.Error("rsync is needed for this test (apt-get install rsync)")
	}

	// Every generated tree, by its path.
	for _, p := range []string{
		"archive/trash/semantic/people/m0000.md",
		"by-user/bob/semantic/projects/m0001.md",
		"by-tag/travel/semantic/projects/m0001.md",
		"by-type/semantic/semantic/projects/m0001.md",
		"by-date/2026/02/11/semantic/projects/m0001.md",
		"recent",
		"search/zermatt june/.results",
		"search/zermatt june/01-" + mustFirstResult(t, mnt, "zermatt june"),
		"by-user/bob/search/zermatt k:3/.results",
		"context/zermatt budget:300",
		"meta/index.json",
		"meta/stats.json",
	} {
		if _, err := os.Stat(filepath.Join(mnt, p)); err != nil {
			t.Errorf("%s by path: %v", p, err)
		}
	}
	p := filepath.Join(mnt, "semantic/projects/m0001.md")
	check(t, os.WriteFile(p, []byte("edited\n"), 0o644))
	if b, err := os.ReadFile(filepath.Join(mnt, "history/semantic/projects/m0001.md/v1.md")); err != nil || !strings.Contains(string(b), "Memory 1 ") {
		t.Errorf("history/semantic/projects/m0001.md/v1.md: %v %.40q", err, b)
	}
	ents, err := os.ReadDir(filepath.Join(mnt, "by-user"))
	if err != nil || len(ents) != 3 {
		t.Errorf("ls by-user: %v %v", ents, err)
	}
}

// mustFirstResult is the name of the first result of a search, without
// its rank.
func mustFirstResult(t *testing.T, mnt, q string) string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(mnt, "search", q))
	check(t, err)
	for _, e := range ents {
		if name, ok := strings.CutPrefix(e.Name(), "01-"); ok {
			return name
		}
	}
	t.Fatalf("search/%s has no first result", q)
	return ""
}
