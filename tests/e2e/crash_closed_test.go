package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCrashSIGKILLKeepsClosedFiles: files written and closed without fsync
// survive a SIGKILL of the mount that comes right after the last close (the
// kernel's page cache keeps what the store wrote; the mount's own crash
// recovery does the rest): new small files, a large one, a rewrite, a
// rename, and a log appended to line by line up to the kill (closes within
// moments of each other leave their commit for later).
func TestCrashSIGKILLKeepsClosedFiles(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	rng := rand.New(rand.NewPCG(crashSeed(t), 7))
	for round := range crashRounds(t, 3) {
		m := startMount(t, data, mnt)
		want := map[string][]byte{}
		put := func(rel string, b []byte) {
			p := filepath.Join(mnt, rel)
			check(t, os.MkdirAll(filepath.Dir(p), 0o755))
			check(t, os.WriteFile(p, b, 0o644))
			want[rel] = b
		}
		dir := fmt.Sprintf("notes/r%d", round)
		for k := range 50 {
			put(fmt.Sprintf("%s/n%02d.md", dir, k), []byte(fmt.Sprintf("---\ntags: [r%d]\n---\nnote %d %x\n", round, k, randBytes(rng, 16))))
		}
		put(dir+"/big.bin", randBytes(rng, 100<<10+rng.IntN(4096)))
		put(dir+"/n00.md", []byte("rewritten\n")) // O_TRUNC over a closed file
		check(t, os.Rename(filepath.Join(mnt, dir, "n01.md"), filepath.Join(mnt, dir, "moved.md")))
		want[dir+"/moved.md"] = want[dir+"/n01.md"]
		delete(want, dir+"/n01.md")
		// A log over 32 KiB (its content is a file of its own), then
		// appends in quick succession, the last one just before the kill.
		logRel := dir + "/events.log"
		put(logRel, bytes.Repeat([]byte("seed line of the log, long enough\n"), 1200))
		for k := range 200 {
			line := []byte(fmt.Sprintf("event %d of round %d\n", k, round))
			f, err := os.OpenFile(filepath.Join(mnt, logRel), os.O_WRONLY|os.O_APPEND, 0)
			check(t, err)
			_, err = f.Write(line)
			check(t, err)
			check(t, f.Close())
			want[logRel] = append(want[logRel], line...)
		}
		m.kill(t)
		clearDeadMount(t, mnt)

		m = startMount(t, data, mnt)
		var bad []string
		for rel, b := range want {
			got, err := os.ReadFile(filepath.Join(mnt, rel))
			switch {
			case err != nil:
				bad = append(bad, fmt.Sprintf("%s: %v", rel, err))
			case !bytes.Equal(got, b):
				bad = append(bad, fmt.Sprintf("%s: %d bytes, want %d", rel, len(got), len(b)))
			}
		}
		if _, err := os.Stat(filepath.Join(mnt, dir, "n01.md")); err == nil {
			bad = append(bad, dir+"/n01.md: still there after its rename")
		}
		if len(bad) > 0 {
			t.Fatalf("round %d: %d of %d closed files lost or damaged after SIGKILL:\n%s", round, len(bad), len(want), strings.Join(bad, "\n"))
		}
		sum, err := getxattr(filepath.Join(mnt, logRel), "user.mnemofs.sha256")
		check(t, err)
		if sum != sha(want[logRel]) {
			t.Fatalf("round %d: the log's sha256 xattr %s does not match its content", round, sum)
		}
		m.stop(t, syscall.SIGTERM)
		r := runMnemofs(t, "fsck", "--data", data)
		if r.code != 0 || !strings.Contains(r.stdout, "consistent") {
			t.Fatalf("round %d: fsck after the crash is not clean:\n%s", round, r)
		}
	}
}
