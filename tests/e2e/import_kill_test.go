package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestImportKilledDuringLoad: `mnemofs import` of a tree big enough to go
// on in a Badger load (past 10,000 files) is killed (SIGKILL) while it
// loads. The next command that opens the store undoes the load and says
// so; fsck then finds the store consistent, with the files written in
// batches before the load whole and none of the load's; the same import
// run again brings every file.
func TestImportKilledDuringLoad(t *testing.T) {
	if onEtcd() {
		t.Skip("a load is Badger's (backend.Loader); etcd imports through batches")
	}
	t.Parallel()
	src, data := t.TempDir(), t.TempDir()
	const dirs, per = 40, 1000
	want := map[string]string{} // the files' content
	pad := strings.Repeat("words of a long turn ", 150)
	for d := range dirs {
		check(t, os.Mkdir(filepath.Join(src, fmt.Sprintf("s%02d", d)), 0o755))
		for f := range per {
			want[fmt.Sprintf("s%02d/t%04d.md", d, f)] = fmt.Sprintf("---\nuser: u%d\n---\nturn %d of session %d: %s\n", f%3, f, d, pad)
		}
	}
	// Written by 8 workers: one at a time took most of the test's time.
	rels := make(chan string)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var err error
			for rel := range rels {
				if err == nil {
					err = os.WriteFile(filepath.Join(src, rel), []byte(want[rel]), 0o644)
				}
			}
			errs <- err
		})
	}
	for rel := range want {
		rels <- rel
	}
	close(rels)
	wg.Wait()
	for range 8 {
		check(t, <-errs)
	}

	// The progress bar is drawn only on a terminal: give it one.
	ctl, tty := openPTY(t)
	cmd := exec.Command(mnemofsBin, "import", src, "--to", "/episodic/imp", "--data", data)
	cmd.Stderr = tty
	check(t, cmd.Start())
	tty.Close()
	ctl.SetReadDeadline(time.Now().Add(5 * time.Minute))
	stderr := ctl
	// Progress comes as "(N/total, …)" every 2,000 files. The load starts
	// at 10,000, and its first tables are written some 3,000 files (8 MiB)
	// later. Killed once 20,000 are in.
	count := regexp.MustCompile(`\((\d+)/`)
	sc := bufio.NewScanner(stderr)
	sc.Split(func(b []byte, eof bool) (int, []byte, error) {
		if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
			return i + 1, b[:i], nil
		}
		if eof && len(b) > 0 {
			return len(b), b, nil
		}
		return 0, nil, nil
	})
	killed := false
	for sc.Scan() {
		if m := count.FindStringSubmatch(sc.Text()); m != nil {
			if n, _ := strconv.Atoi(m[1]); n >= 20000 {
				check(t, cmd.Process.Signal(syscall.SIGKILL))
				killed = true
				break
			}
		}
	}
	go func() { _, _ = bufio.NewReader(stderr).WriteTo(new(bytes.Buffer)) }()
	err := cmd.Wait()
	if !killed {
		t.Fatalf("the import ended before it was killed (%v): the source is too small for this machine", err)
	}

	// inodes runs fsck, which must find the store consistent, and
	// returns the inodes it counted.
	checked := regexp.MustCompile(`checked (\d+) inodes`)
	inodes := func(r result) int {
		m := checked.FindStringSubmatch(r.stdout)
		if m == nil || !strings.Contains(r.stdout, "consistent") {
			t.Fatalf("fsck:\n%s", r)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	// exported compares what export gives of one directory with the source.
	exported := func(dir string) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "out")
		mustRun(t, "export", out, "--from", "/episodic/imp/"+dir, "--data", data)
		got := snapshot(t, out)
		if len(got) != per {
			t.Fatalf("%s: %d files exported, want %d", dir, len(got), per)
		}
		for name, n := range got {
			if n.data != want[dir+"/"+name] {
				t.Fatalf("%s/%s: %q", dir, name, n.data)
			}
		}
	}

	r := mustRun(t, "fsck", "--data", data)
	if !strings.Contains(r.stderr, "an import was interrupted") {
		t.Fatalf("fsck after the kill did not undo the load:\n%s", r)
	}
	if n := inodes(r); n >= 12000 {
		t.Fatalf("%d inodes after the kill: want those of the batches before the load (10,000 items)", n)
	}
	exported("s00") // from the batches
	if r := runMnemofs(t, "export", filepath.Join(t.TempDir(), "out"), "--from", "/episodic/imp/s39", "--data", data); r.code == 0 {
		t.Fatalf("s39, from the load, is there after the kill:\n%s", r)
	}

	mustRun(t, "import", src, "--to", "/episodic/imp", "--data", data)
	if n := inodes(mustRun(t, "fsck", "--data", data)); n < dirs*per+dirs {
		t.Fatalf("%d inodes after the import again", n)
	}
	exported("s00")
	exported("s39")
}
