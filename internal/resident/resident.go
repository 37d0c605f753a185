package resident

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Trimmer trims the mapped files under one directory past a budget.
type Trimmer struct {
	dir    string
	budget int64
	base   int64 // file-backed resident bytes at the start (the binary's own text, libraries)
	stop   chan struct{}
	poke   chan struct{}
	wg     sync.WaitGroup
	trims  int
	mu     sync.Mutex
}

// Start checks every interval (and when poked) whether the file-backed resident memory
// grew by more than budget bytes since the start, and if so trims the
// mappings of files under dir. Stop ends it.
func Start(dir string, budget int64, every time.Duration) *Trimmer {
	t := &Trimmer{dir: filepath.Clean(dir), budget: budget, stop: make(chan struct{}), poke: make(chan struct{}, 1)}
	t.base, _ = FileRSS()
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tick.C:
				t.Check()
			case <-t.poke:
				t.Check()
				// A burst of pokes (searches) checks once a millisecond at most.
				time.Sleep(time.Millisecond)
			}
		}
	}()
	return t
}

// Poke asks for a check soon, without waiting for it: after work that may
// have touched many mapped pages (a search).
func (t *Trimmer) Poke() {
	select {
	case t.poke <- struct{}{}:
	default:
	}
}

// Check trims now if the budget is passed; it reports whether it did.
func (t *Trimmer) Check() bool {
	n, err := FileRSS()
	if err != nil || n-t.base <= t.budget {
		return false
	}
	if n, err := Trim(t.dir); err != nil || n == 0 {
		return false
	}
	t.mu.Lock()
	t.trims++
	t.mu.Unlock()
	return true
}

// Trims is how many times the budget was passed.
func (t *Trimmer) Trims() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.trims
}

// Stop ends the checks.
func (t *Trimmer) Stop() {
	close(t.stop)
	t.wg.Wait()
}

// FileRSS is the process's file-backed resident memory (RssFile in
// /proc/self/status), in bytes.
func FileRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("RssFile:")); ok {
			f := strings.Fields(string(rest))
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, os.ErrNotExist
}

// advice is how Trim lets go of a mapped file: 0 for one it keeps.
func advice(name string) int {
	name = strings.TrimSuffix(name, " (deleted)")
	switch {
	case strings.HasSuffix(name, ".snap"):
		return unix.MADV_DONTNEED
	case strings.HasSuffix(name, ".sst"):
		return unix.MADV_PAGEOUT
	}
	return 0
}

// Trim drops from the resident set every mapping of a file under dir that
// advice names, and returns how many bytes of mappings it covered.
func Trim(dir string) (int64, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return 0, err
	}
	prefix := abs + "/"
	var total int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		path := strings.Join(fields[5:], " ")
		adv := advice(path)
		if !strings.HasPrefix(path, prefix) || adv == 0 {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		// The mapping may be gone meanwhile (a table compacted away):
		// madvise on an unmapped range fails with ENOMEM, harmlessly.
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), uintptr(adv))
		if errno == 0 {
			total += int64(end - start)
		}
	}
	return total, sc.Err()
}
