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
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
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

const (
	concWorkers = 8
	concRun     = 5 * time.Second
	// concMargin is how long past concRun the workers may take before
	// the run counts as deadlocked (generous: -race on a shared machine).
	concMargin = 90 * time.Second
	// concWorkerEnv makes the test binary a worker: "MNT|ID|MS|OUT".
	concWorkerEnv = "MNEMOFS_CONC_WORKER"
)

var (
	concDirs = []string{"working/conc/d0", "working/conc/d1", "working/conc/d2"}
	concLogs = []string{"working/conc/d0/events.jsonl", "working/conc/d1/events.jsonl", "working/conc/d2/a.log", "working/conc/d0/b.log"}
	concBody = strings.Fields("river stone lantern harbor meadow copper violet thunder orchard pebble candle falcon")
)

// concContent is a whole file: its unique word, a body of n bytes, and
// the sha256 of all that precedes the last line.
func concContent(r *rand.Rand, word string, n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "uniq %s\n", word)
	for b.Len() < n {
		b.WriteString(concBody[r.IntN(len(concBody))])
		if r.IntN(12) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	sum := sha256.Sum256(b.Bytes())
	fmt.Fprintf(&b, "\nsha256 %s\n", hex.EncodeToString(sum[:]))
	return b.Bytes()
}

// concCheck verifies a whole file and returns its unique word.
func concCheck(b []byte) (string, error) {
	i := bytes.LastIndex(b, []byte("\nsha256 "))
	if i < 0 {
		return "", fmt.Errorf("%d bytes: no checksum line at the end", len(b))
	}
	body, last := b[:i], b[i+len("\nsha256 "):]
	if len(last) != 65 || last[64] != '\n' {
		return "", fmt.Errorf("%d bytes: no checksum line at the end", len(b))
	}
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != string(last[:64]) {
		return "", fmt.Errorf("%d bytes: checksum mismatch (torn or mixed content)", len(b))
	}
	word, _, _ := strings.Cut(strings.TrimPrefix(string(body), "uniq "), "\n")
	return word, nil
}

// concLine is one appended line; its padding is derived from (w, s), so a
// line mixed from two writes does not parse.
type concLine struct {
	W   int    `json:"w"`
	S   int    `json:"s"`
	Pad string `json:"pad"`
}

func concPad(w, s, n int) string { return strings.Repeat(string(rune('a'+(w*7+s)%26)), n) }

func parseConcLine(l string) (concLine, error) {
	var c concLine
	if err := json.Unmarshal([]byte(l), &c); err != nil {
		return c, fmt.Errorf("line %.80q: %v", l, err)
	}
	if c.Pad != concPad(c.W, c.S, len(c.Pad)) {
		return c, fmt.Errorf("line %.80q: padding does not match its writer and sequence", l)
	}
	return c, nil
}

// TestConcurrencyWorker is a worker process of TestConcurrentProcesses
// (skipped when run directly). It writes what it did to the OUT file:
// "A LOG SEQ" for an acknowledged append, "M LOG SEQ" for one whose write
// succeeded but close failed, "C WORD" for every file it created; and
// "ERR ..." for a broken invariant it saw.
func TestConcurrencyWorker(t *testing.T) {
	spec := os.Getenv(concWorkerEnv)
	if spec == "" {
		t.Skip("worker process of TestConcurrentProcesses")
	}
	f := strings.Split(spec, "|")
	id, _ := strconv.Atoi(f[1])
	ms, _ := strconv.Atoi(f[2])
	out, err := os.Create(f[3])
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(out)
	errs := concWork(f[0], id, time.Duration(ms)*time.Millisecond, w)
	for _, e := range errs {
		fmt.Fprintf(w, "ERR %s\n", e)
	}
	if err := errors.Join(w.Flush(), out.Close()); err != nil {
		t.Fatal(err)
	}
}

// concWork is the worker's loop; it returns the invariants it saw broken
// and the system calls that failed unexpectedly.
func concWork(mnt string, id int, d time.Duration, out *bufio.Writer) []string {
	r := rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	var errs []string
	fail := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	// gone: a name another worker moved or removed meanwhile.
	gone := func(err error) bool {
		return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.ENOTDIR)
	}
	// pick returns a random entry of a random directory that is a
	// memory written whole (no log, no temporary name), or "".
	pick := func() string {
		dir := concDirs[r.IntN(len(concDirs))]
		ents, err := os.ReadDir(p(dir))
		if err != nil {
			fail("readdir %s: %v", dir, err)
			return ""
		}
		var names []string
		for _, e := range ents {
			if n := e.Name(); e.Type().IsRegular() && !strings.HasPrefix(n, "tmp-") && !strings.HasSuffix(n, ".log") && !strings.HasSuffix(n, ".jsonl") {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return ""
		}
		return filepath.Join(dir, names[r.IntN(len(names))])
	}
	// whole writes a new file under a temporary name and returns it.
	whole := func(dir string, n int) (string, bool) {
		word := fmt.Sprintf("w%dq%dz", id, n)
		size := 100 + r.IntN(4000)
		if r.IntN(10) == 0 {
			size = 40<<10 + r.IntN(80<<10) // past the chunk size
		}
		data := concContent(r, word, size)
		tmp := filepath.Join(dir, fmt.Sprintf("tmp-%d-%d", id, n))
		fh, err := os.OpenFile(p(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			fail("create %s: %v", tmp, err)
			return "", false
		}
		for rest := data; len(rest) > 0 && err == nil; { // in pieces: a reader must not see them
			k := min(len(rest), 1+r.IntN(len(data)))
			_, err = fh.Write(rest[:k])
			rest = rest[k:]
		}
		if err = errors.Join(err, fh.Close()); err != nil {
			fail("write %s: %v", tmp, err)
			return "", false
		}
		fmt.Fprintf(out, "C %s\n", word)
		return tmp, true
	}
	seq, n := 0, 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		n++
		switch k := r.IntN(100); {
		case k < 30: // append lines
			log := concLogs[r.IntN(len(concLogs))]
			fh, err := os.OpenFile(p(log), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				fail("open %s: %v", log, err)
				continue
			}
			var written []int
			for range 1 + r.IntN(3) {
				seq++
				line, _ := json.Marshal(concLine{W: id, S: seq, Pad: concPad(id, seq, r.IntN(300))})
				if _, err := fh.Write(append(line, '\n')); err != nil {
					fail("append to %s: %v", log, err)
					break
				}
				written = append(written, seq)
			}
			tag := "A"
			if err := fh.Close(); err != nil {
				fail("close %s: %v", log, err)
				tag = "M"
			}
			for _, s := range written {
				fmt.Fprintf(out, "%s %s %d\n", tag, log, s)
			}
		case k < 50: // a whole file, then into place: its own name or a shared one
			dir := concDirs[r.IntN(len(concDirs))]
			tmp, ok := whole(dir, n)
			if !ok {
				continue
			}
			dest := filepath.Join(concDirs[r.IntN(len(concDirs))], fmt.Sprintf("u-%d-%d.txt", id, n))
			if r.IntN(2) == 0 {
				dest = filepath.Join(concDirs[r.IntN(len(concDirs))], fmt.Sprintf("shared-%d.txt", r.IntN(6)))
			}
			if err := os.Rename(p(tmp), p(dest)); err != nil {
				fail("rename %s %s: %v", tmp, dest, err)
			}
		case k < 62: // move someone's file, maybe over another
			src := pick()
			if src == "" {
				continue
			}
			dest := filepath.Join(concDirs[r.IntN(len(concDirs))], fmt.Sprintf("m-%d-%d.txt", id, n))
			if r.IntN(2) == 0 {
				dest = filepath.Join(concDirs[r.IntN(len(concDirs))], fmt.Sprintf("shared-%d.txt", r.IntN(6)))
			}
			if err := os.Rename(p(src), p(dest)); err != nil && !gone(err) {
				fail("rename %s %s: %v", src, dest, err)
			}
		case k < 90: // read a file whole, or a log's complete lines
			if r.IntN(4) == 0 {
				log := concLogs[r.IntN(len(concLogs))]
				b, err := os.ReadFile(p(log))
				if err != nil {
					fail("read %s: %v", log, err)
					continue
				}
				if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
					for _, l := range strings.Split(string(b[:i]), "\n") {
						if _, err := parseConcLine(l); err != nil {
							fail("torn read of %s: %v", log, err)
							break
						}
					}
				}
				continue
			}
			src := pick()
			if src == "" {
				continue
			}
			b, err := os.ReadFile(p(src))
			if err != nil {
				if !gone(err) {
					fail("read %s: %v", src, err)
				}
				continue
			}
			if _, err := concCheck(b); err != nil {
				fail("torn read of %s: %v", src, err)
			}
		case k < 95: // remove a file (to the trash: the mount keeps all)
			if src := pick(); src != "" {
				if err := os.Remove(p(src)); err != nil && !gone(err) {
					fail("remove %s: %v", src, err)
				}
			}
		default: // a directory with a file in it, moved into place whole
			dir := concDirs[r.IntN(len(concDirs))]
			tmpd := filepath.Join(dir, fmt.Sprintf("tmpd-%d-%d", id, n))
			if err := os.Mkdir(p(tmpd), 0o755); err != nil {
				fail("mkdir %s: %v", tmpd, err)
				continue
			}
			tmp, ok := whole(tmpd, n)
			if !ok {
				continue
			}
			if err := os.Rename(p(tmp), p(filepath.Join(tmpd, "inner.txt"))); err != nil {
				fail("rename %s: %v", tmp, err)
			}
			dest := filepath.Join(concDirs[r.IntN(len(concDirs))], fmt.Sprintf("sub-%d-%d", id, n))
			if err := os.Rename(p(tmpd), p(dest)); err != nil {
				fail("rename %s %s: %v", tmpd, dest, err)
			}
		}
		if len(errs) > 20 {
			break
		}
	}
	return errs
}

// fuseConn returns the /sys/fs/fuse/connections entry of the mount at mnt.
func fuseConn(mnt string) string {
	var st unix.Stat_t
	if unix.Stat(mnt, &st) != nil {
		return ""
	}
	return fmt.Sprintf("/sys/fs/fuse/connections/%d", unix.Minor(st.Dev))
}

func TestConcurrentProcesses(t *testing.T) {
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
		switch {
		case want != "" && (len(paths) != 1 || paths[0] != want):
			t.Errorf("search %s finds %q, want [%s]", word, paths, want)
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
		if want := "01-" + filepath.Base(surviving[word]); len(names) != 2 || names[1] != want {
			t.Errorf("search/%s lists %q, want [.results %s]", word, names, want)
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
