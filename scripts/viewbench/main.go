// Command viewbench measures walking the generated views against the real
// tree (scripts/bench-views.sh runs it): at each store size, the same 1,000
// memories are listed with `ls -l` and stat'ed with `find -type f | xargs
// stat` through the real tree and through by-user/, by-tag/, by-type/ and
// by-date/, side by side in one run; at one size `ls -lR` walks the whole
// root (every view). Prints a Markdown table.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

var (
	bin    = flag.String("bin", "mnemofs", "mnemofs binary")
	work   = flag.String("work", "", "scratch directory (required)")
	scales = flag.String("scales", "2000,10000,100000", "store sizes")
	runs   = flag.Int("runs", 3, "runs of each walk (the median is reported)")
	lsR    = flag.Int("lsr", 10000, "store size at which to time ls -lR of the root (0: never)")
)

// the 1,000 memories every walk covers, and where they sit in each view.
const group = 1000

var places = []struct{ name, path string }{
	{"tree", "semantic/bench"},
	{"by-user", "by-user/u-bench/semantic/bench"},
	{"by-tag", "by-tag/t-bench/semantic/bench"},
	{"by-type", "by-type/semantic/semantic/bench"},
	{"by-date", "by-date/2026/01/15/semantic/bench"},
}

func main() {
	flag.Parse()
	if *work == "" {
		fmt.Fprintln(os.Stderr, "viewbench: -work is required")
		os.Exit(2)
	}
	fmt.Println("| memories | where | ls -l (ms) | × tree | find + stat (ms) | × tree |")
	fmt.Println("|---:|---|---:|---:|---:|---:|")
	var lsrLine string
	for _, f := range strings.Split(*scales, ",") {
		var n int
		fmt.Sscan(f, &n)
		rows, lsr, err := scale(n)
		if err != nil {
			fmt.Fprintln(os.Stderr, "viewbench:", err)
			os.Exit(1)
		}
		for _, r := range rows {
			fmt.Println(r)
		}
		if lsr != "" {
			lsrLine = lsr
		}
	}
	if lsrLine != "" {
		fmt.Println()
		fmt.Println(lsrLine)
	}
}

// write makes a source tree of n memories: group of them in semantic/bench
// (user u-bench, tag t-bench, created 2026-01-15), the rest spread over
// users, tags, dates and directories.
func write(dir string, n int) error {
	for i := 0; i < n; i++ {
		var p, fm string
		if i < group {
			p = filepath.Join(dir, "semantic/bench", fmt.Sprintf("note-%04d.md", i))
			fm = "user: u-bench\ntags: [t-bench]\ncreated: 2026-01-15"
		} else {
			top := []string{"semantic", "episodic", "working"}[i%3]
			p = filepath.Join(dir, top, fmt.Sprintf("d%03d", i%200), fmt.Sprintf("m-%06d.md", i))
			day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i%365)
			fm = fmt.Sprintf("user: u%02d\ntags: [t%02d, t%02d]\ncreated: %s", i%10, i%50, (i*7)%50, day.Format("2006-01-02"))
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		body := fmt.Sprintf("---\n%s\n---\nmemory %d about topic %d and the word w%d.\n", fm, i, i%97, i%1000)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func scale(n int) ([]string, string, error) {
	base := filepath.Join(*work, fmt.Sprint(n))
	src, data, mnt := filepath.Join(base, "src"), filepath.Join(base, "data"), filepath.Join(base, "mnt")
	for _, d := range []string{src, data, mnt} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, "", err
		}
	}
	if err := write(src, n); err != nil {
		return nil, "", err
	}
	if out, err := exec.Command(*bin, "import", src, "--data", data).CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("import: %v\n%s", err, out)
	}
	os.RemoveAll(src)
	m := exec.Command(*bin, "mount", "--data", data, mnt)
	pipe, _ := m.StdoutPipe()
	m.Stderr = os.Stderr
	if err := m.Start(); err != nil {
		return nil, "", err
	}
	os.WriteFile(filepath.Join(*work, "mount.pid"), []byte(fmt.Sprint(m.Process.Pid)), 0o644)
	defer func() {
		m.Process.Signal(syscall.SIGTERM)
		m.Wait()
		os.RemoveAll(base)
	}()
	sc := bufio.NewScanner(pipe)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "mnemofs: mounted") {
		return nil, "", fmt.Errorf("mount did not come up")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	// The index is built in the background: wait for it (a listing waits).
	exec.Command("ls", filepath.Join(mnt, "by-tag")).Run()
	var rows []string
	var treeLs, treeStat time.Duration
	for k, p := range places {
		dir := filepath.Join(mnt, p.path)
		ents, err := os.ReadDir(dir)
		if err != nil || len(ents) != group {
			return nil, "", fmt.Errorf("%s: %d entries (%v), want %d", p.path, len(ents), err, group)
		}
		ls := median(func() error { return quiet("ls", "-l", dir) })
		st := median(func() error { return quiet("sh", "-c", "find \"$1\" -type f | xargs stat >/dev/null", "sh", dir) })
		if k == 0 {
			treeLs, treeStat = ls, st
		}
		rows = append(rows, fmt.Sprintf("| %d | %s | %.1f | %.2f | %.1f | %.2f |", n, p.name, ms(ls), float64(ls)/float64(treeLs), ms(st), float64(st)/float64(treeStat)))
	}
	lsr := ""
	if n == *lsR {
		t0 := time.Now()
		out, err := exec.Command("sh", "-c", "ls -lR \"$1\" | wc -l", "sh", mnt).Output()
		if err != nil {
			return nil, "", err
		}
		lsr = fmt.Sprintf("`ls -lR` of the root at %d memories (every view included): %.1f s, %s lines.", n, time.Since(t0).Seconds(), strings.TrimSpace(string(out)))
	}
	return rows, lsr, nil
}

func quiet(name string, args ...string) error {
	c := exec.Command(name, args...)
	c.Stdout, c.Stderr = nil, os.Stderr
	return c.Run()
}

// median runs fn once to warm up, then *runs times, and returns the median.
func median(fn func() error) time.Duration {
	fn()
	var ds []time.Duration
	for i := 0; i < *runs; i++ {
		t0 := time.Now()
		if err := fn(); err != nil {
			fmt.Fprintln(os.Stderr, "viewbench:", err)
		}
		ds = append(ds, time.Since(t0))
	}
	sort.Slice(ds, func(a, b int) bool { return ds[a] < ds[b] })
	return ds[len(ds)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
