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
	pin    Pin
	budget int64
	base   int64 // file-backed resident bytes at the start (the binary's own text, libraries)
	stop   chan struct{}
	poke   chan struct{}
	wg     sync.WaitGroup
	trims  int
	kept   int64 // the pinned files' hot parts at the last trim, left resident
	mu     sync.Mutex
	once   sync.Once
}

// Pin keeps the files an engine maps (and unmaps on its own) mapped until
// unpin, and names them (backend.Mapped.PinMapped).
type Pin func() (files []File, unpin func(), err error)

// File is a file an engine maps whole, from its start to its end, and
// how much of its end is hot: read by almost every lookup (a Badger
// table's index), left resident by a trim.
type File struct {
	Path    string
	HotTail int64
}

// Start checks every interval (and when poked) whether the file-backed
// resident memory grew by more than budget bytes since the start, beside
// the pinned files' hot parts (up to budget bytes of them), and if so
// trims the mappings of files under dir (those pin names among them; pin
// may be nil). Stop ends it.
func Start(dir string, budget int64, every time.Duration, pin Pin) *Trimmer {
	t := &Trimmer{dir: filepath.Clean(dir), pin: pin, budget: budget, stop: make(chan struct{}), poke: make(chan struct{}, 1)}
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
	t.mu.Lock()
	kept := t.kept
	t.mu.Unlock()
	if err != nil || n-t.base-kept <= t.budget {
		return false
	}
	n, kept, err = Trim(t.dir, t.pin, t.budget)
	if err != nil || n == 0 {
		return false
	}
	t.mu.Lock()
	t.trims++
	t.kept = kept
	t.mu.Unlock()
	return true
}

// Trims is how many times the budget was passed.
func (t *Trimmer) Trims() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.trims
}

// Stop ends the checks (a second call does nothing).
func (t *Trimmer) Stop() {
	t.once.Do(func() { close(t.stop) })
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

// Trim drops from the resident set every mapping of a snapshot (*.snap)
// under dir, and of the files pin names (nil: none) while pinned, except
// their hot tails, as many as fit in keepMax bytes in the order pin gives
// them (the hottest first), and returns how many bytes of mappings it
// covered and how many it left for being hot.
func Trim(dir string, pin Pin, keepMax int64) (trimmed, kept int64, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return 0, 0, err
	}
	pinned := map[string]int64{} // path → hot tail
	if pin != nil {
		files, unpin, err := pin()
		if err != nil {
			return 0, 0, err
		}
		defer unpin()
		page, room := int64(os.Getpagesize()), keepMax
		for _, f := range files {
			hot := max(f.HotTail, 0)
			if hot+page > room {
				hot = 0 // no room: trimmed whole
			} else if hot > 0 {
				room -= hot + page
			}
			pinned[f.Path] = hot
		}
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	prefix := abs + "/"
	page := uint64(os.Getpagesize())
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		path := strings.Join(fields[5:], " ")
		hot, isPinned := pinned[path]
		if !strings.HasPrefix(path, prefix) || !(strings.HasSuffix(path, ".snap") || isPinned) {
			continue // (a deleted file's path ends " (deleted)": never pinned)
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
		if hot > 0 {
			// The file ends in the mapping's last page: its hot tail
			// starts at most a page and the tail before the end.
			keep := min(uint64(hot)+page, end-start)
			cut := (end - keep) &^ (page - 1)
			kept += int64(end - cut)
			end = cut
		}
		if end <= start {
			continue
		}
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED)
		if errno == 0 {
			trimmed += int64(end - start)
		}
	}
	return trimmed, kept, sc.Err()
}
