package fusefs

// The worker side of TestConcurrentProcesses: what one child process
// does and how its log lines and file contents are checked.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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
	t.Parallel()
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
