package fusefs

// Concurrency: worker processes (this test binary re-executed) create,
// append to, rename, remove and read files in the same directories of one
// mount for a few seconds, while goroutines of the test read the views and
// search. Then:
//
//   - no lost or doubled append: every line whose write and close
//     succeeded is in its log exactly once, and no line is torn;
//   - no torn read: files are written whole under a temporary name, closed
//     and renamed into place, and each carries its own checksum, so a
//     reader sees an old or a new file, never a mix;
//   - no deadlock: a watchdog dumps the mount's goroutines and aborts the
//     FUSE connection if the run overruns by far;
//   - afterwards fsck is clean, and search and the views agree with the
//     tree: every surviving file is found by its unique word, no removed
//     one is, and by-type/ and meta/index.json list what the tree holds.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// fuseConn returns the /sys/fs/fuse/connections entry of the mount at mnt.
func fuseConn(mnt string) string {
	var st unix.Stat_t
	if unix.Stat(mnt, &st) != nil {
		return ""
	}
	return fmt.Sprintf("/sys/fs/fuse/connections/%d", unix.Minor(st.Dev))
}

func TestConcurrentProcesses(t *testing.T) {
	t.Parallel()
	if os.Getenv(concWorkerEnv) != "" {
		t.Skip("in a worker")
	}
	tf := testMount(t) // every removal goes to the trash
	for _, d := range concDirs {
		must(t, os.MkdirAll(tf.path(d), 0o755))
	}
	for _, l := range concLogs {
		must(t, os.WriteFile(tf.path(l), nil, 0o644))
	}
	conn := fuseConn(tf.dir)
	outDir := t.TempDir()

	// Readers of the generated trees inside the mount's process, so
	// that the race detector sees them against the store's writers.
	stop := make(chan struct{})
	var viewReads atomic.Int64
	var readers sync.WaitGroup
	var readerErrs []string
	var readerMu sync.Mutex
	for g := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				switch (g + i) % 5 {
				case 0:
					_, err = os.ReadDir(tf.path("search/" + concBody[i%len(concBody)]))
				case 1:
					_, err = os.ReadDir(tf.path("by-type/working/" + concDirs[i%len(concDirs)]))
				case 2:
					_, err = os.ReadFile(tf.path("meta/index.json"))
				case 3:
					_, err = os.ReadFile(tf.path("context/" + concBody[i%len(concBody)]))
				case 4:
					_, err = os.ReadDir(tf.path("recent"))
				}
				if err != nil && !errors.Is(err, os.ErrNotExist) {
					readerMu.Lock()
					readerErrs = append(readerErrs, err.Error())
					readerMu.Unlock()
				}
				viewReads.Add(1)
				time.Sleep(time.Millisecond)
			}
		}()
	}

	type worker struct {
		cmd    *exec.Cmd
		out    string
		stderr bytes.Buffer
	}
	var ws []*worker
	done := make(chan error, concWorkers)
	for id := range concWorkers {
		w := &worker{out: filepath.Join(outDir, fmt.Sprintf("w%d", id))}
		w.cmd = exec.Command(os.Args[0], "-test.run=^TestConcurrencyWorker$", "-test.count=1", "-test.timeout=0")
		w.cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|%d|%s", concWorkerEnv, tf.dir, id, concRun.Milliseconds(), w.out))
		w.cmd.Stdout, w.cmd.Stderr = &w.stderr, &w.stderr
		must(t, w.cmd.Start())
		ws = append(ws, w)
		go func() { done <- w.cmd.Wait() }()
	}
	watchdog := time.After(concRun + concMargin)
	var exitErrs []error
	for range concWorkers {
		select {
		case err := <-done:
			exitErrs = append(exitErrs, err)
		case <-watchdog:
			var dump bytes.Buffer
			pprof.Lookup("goroutine").WriteTo(&dump, 2)
			for _, w := range ws {
				w.cmd.Process.Kill()
			}
			close(stop)
			// Unblock every request so that the unmount can finish.
			if conn != "" {
				os.WriteFile(conn+"/abort", []byte("1"), 0)
			}
			t.Fatalf("workers still running %v after their %v run: deadlock? The FUSE connection was aborted. Goroutines of the mount:\n%s", concMargin, concRun, dump.String())
		}
	}
	close(stop)
	readers.Wait()
	for _, err := range exitErrs {
		if err != nil {
			t.Errorf("a worker failed: %v", err)
		}
	}
	for _, w := range ws {
		if w.cmd.ProcessState != nil && !w.cmd.ProcessState.Success() {
			t.Errorf("worker output:\n%s", w.stderr.String())
		}
	}
	for _, e := range readerErrs[:min(len(readerErrs), 10)] {
		t.Errorf("reading the views during the run: %s", e)
	}

	// What the workers did.
	type key struct{ w, s int }
	ackLog := map[key]string{}
	maybe := map[key]bool{}
	created := map[string]bool{}
	for id, w := range ws {
		b, err := os.ReadFile(w.out)
		must(t, err)
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Fields(l)
			switch {
			case len(f) == 0:
			case f[0] == "ERR":
				t.Errorf("worker %d: %s", id, strings.TrimPrefix(l, "ERR "))
			case f[0] == "C":
				created[f[1]] = true
			case f[0] == "A" || f[0] == "M":
				s, _ := strconv.Atoi(f[2])
				if f[0] == "A" {
					ackLog[key{id, s}] = f[1]
				} else {
					maybe[key{id, s}] = true
				}
			}
		}
	}

	// Appends: each acknowledged line once, in its log; nothing twice.
	seen := map[key]string{}
	for _, log := range concLogs {
		b := read(t, tf.path(log))
		if b != "" && !strings.HasSuffix(b, "\n") {
			t.Errorf("%s ends in a partial line", log)
		}
		for _, l := range strings.Split(strings.TrimSuffix(b, "\n"), "\n") {
			if l == "" {
				continue
			}
			c, err := parseConcLine(l)
			if err != nil {
				t.Errorf("%s: torn line: %v", log, err)
				continue
			}
			k := key{c.W, c.S}
			if prev, dup := seen[k]; dup {
				t.Errorf("line w=%d s=%d is there twice (%s and %s)", c.W, c.S, prev, log)
			}
			seen[k] = log
			if want, ok := ackLog[k]; ok && want != log {
				t.Errorf("line w=%d s=%d is in %s, written to %s", c.W, c.S, log, want)
			}
			if _, ok := ackLog[k]; !ok && !maybe[k] {
				t.Errorf("line w=%d s=%d in %s was never written", c.W, c.S, log)
			}
		}
	}
	lost := 0
	for k, log := range ackLog {
		if _, ok := seen[k]; !ok {
			if lost++; lost <= 10 {
				t.Errorf("acknowledged append w=%d s=%d to %s is lost", k.w, k.s, log)
			}
		}
	}
	if lost > 10 {
		t.Errorf("%d acknowledged appends lost in all", lost)
	}

	// Files at rest: whole, no temporary left behind.
	surviving := map[string]string{} // word → canonical path
	err := filepath.WalkDir(tf.path("working/conc"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel := "/" + strings.TrimPrefix(p, tf.dir+"/")
		if strings.HasSuffix(rel, ".log") || strings.HasSuffix(rel, ".jsonl") {
			return nil
		}
		if strings.HasPrefix(d.Name(), "tmp-") || strings.Contains(rel, "/tmpd-") {
			t.Errorf("%s: a temporary name left behind", rel)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		word, err := concCheck(b)
		if err != nil {
			t.Errorf("%s at rest: %v", rel, err)
			return nil
		}
		if prev, dup := surviving[word]; dup {
			t.Errorf("%s and %s hold the same file", prev, rel)
		}
		surviving[word] = rel
		return nil
	})
	must(t, err)

	// Search: every surviving file by its word, no removed one outside
	// the archive.
	for word := range created {
		rs := tf.eng.Search(mustQuery(t, word), views.Filter{})
		var paths []string
		for _, r := range rs {
			paths = append(paths, r.Path)
		}
		want := surviving[word]
		// Only the file holding the word matches it; a directory of
		// short files is also a sequence (search's sequence prior), whose
		// other members may follow it without a match of their own.
		switch {
		case want != "" && (len(paths) == 0 || paths[0] != want || slices.Contains(paths[1:], want)):
			t.Errorf("search %s finds %q, want %s first", word, paths, want)
		case want == "" && len(paths) != 0:
			t.Errorf("search %s finds %q for a file no longer in the tree", word, paths)
		}
	}
	// The same through the mount, for a few.
	i := 0
	for _, word := range slices.Sorted(maps.Keys(surviving)) {
		if i++; i > 10 {
			break
		}
		names := lsNames(t, tf.path("search/"+word))
		if want := "01-" + filepath.Base(surviving[word]); len(names) < 2 || names[1] != want {
			t.Errorf("search/%s lists %q, want [.results %s ...]", word, names, want)
		}
	}

	// by-type/working mirrors the files of each directory.
	for _, d := range concDirs {
		real, view := regularNames(t, tf.path(d)), regularNames(t, tf.path("by-type/working/"+d))
		if !slices.Equal(real, view) {
			t.Errorf("by-type/working/%s lists %q, the tree %q", d, view, real)
		}
	}
	// meta/index.json lists every memory of the tree and no other.
	var idx struct {
		Memories []store.Info `json:"memories"`
	}
	must(t, json.Unmarshal([]byte(read(t, tf.path("meta/index.json"))), &idx))
	indexed := map[string]bool{}
	for _, m := range idx.Memories {
		if strings.HasPrefix(m.Path, "/working/conc/") {
			indexed[m.Path] = true
		}
	}
	for _, p := range surviving {
		if !indexed[p] {
			t.Errorf("meta/index.json lacks %s", p)
		}
		delete(indexed, p)
	}
	for _, l := range concLogs {
		delete(indexed, "/"+l)
	}
	for p := range indexed {
		t.Errorf("meta/index.json lists %s, not in the tree", p)
	}

	rep, err := tf.st.Fsck(false)
	must(t, err)
	if !rep.Clean {
		t.Errorf("fsck: %v", rep.Problems)
	}
	t.Logf("%d appends acknowledged, %d files created, %d surviving, %d view reads", len(ackLog), len(created), len(surviving), viewReads.Load())
}

func mustQuery(t *testing.T, s string) views.Query {
	q, err := views.ParseQuery(s)
	must(t, err)
	return q
}

// regularNames lists the regular files of dir, sorted.
func regularNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestRecentWhileLogsGrow (a race detector test): recent/ and context/
// sort catalog entries by Modified without a lock while logs grow; the
// worker once changed Modified in place (a data race); entries are now
// replaced, never changed.
func TestRecentWhileLogsGrow(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	logs := []string{tf.path("working/a.jsonl"), tf.path("working/b.jsonl")}
	for _, l := range logs {
		must(t, os.WriteFile(l, []byte("{\"e\": \"start\"}\n"), 0o644))
	}
	end := time.Now().Add(3 * time.Second)
	done := make(chan error, 1)
	go func() {
		for i := 0; time.Now().Before(end); i++ {
			f, err := os.OpenFile(logs[i%2], os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				done <- err
				return
			}
			_, err = fmt.Fprintf(f, "{\"e\": \"event %d\"}\n", i)
			if err = errors.Join(err, f.Close()); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for time.Now().Before(end) {
		if _, err := os.ReadDir(tf.path("recent/working")); err != nil {
			t.Error(err)
		}
		if _, err := os.ReadFile(tf.path("context/event")); err != nil {
			t.Error(err)
		}
	}
	must(t, <-done)
}
