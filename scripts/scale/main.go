// Command scale measures mnemofs at 100k memories: the import rate of small
// Markdown files (goal: at least 3000 files/s), the time a mount takes to
// become ready with them in the store (cold, after dropping the page cache,
// and warm), and the mount process's memory (VmRSS/VmHWM) after mounting,
// after its first search is answered (ls MNT/search/<two words>/, which
// waits for the index build; timed from the start of the mount), after any
// background work left has finished (it waits until the process is idle,
// and reports how long that took), after `find MNT/episodic -type f`, and
// after `cat` of 1000 files; then a second (warm) mount, timed to its
// ready line and its first search.
//
// It generates -n files of 0.6-1.4 KiB (two thirds with YAML front matter)
// in -work/src, imports them with `mnemofs import SRC --to /episodic/bulk`
// while unmounted, then mounts -work/data at -work/mnt. With -backend the
// store is elsewhere (etcd://...: -work/data holds only host-local state)
// and -store names the directory whose size is reported as the store's.
// With -import-only it stops after the import.
// Normally run through scripts/bench-scale.sh, which builds the binaries,
// starts etcd if asked, and cleans up:
//
//	go run ./scripts/scale -bin ./mnemofs -work /var/tmp/scale [-n 100000] [-backend etcd://HOST:PORT/PREFIX -store DIR]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	bin   = flag.String("bin", "", "mnemofs binary (required)")
	work  = flag.String("work", "", "scratch directory on disk (required): src/, data/ and mnt/ go here")
	n     = flag.Int("n", 100000, "files to generate and import")
	perD  = flag.Int("per-dir", 1000, "files per generated directory")
	ncat  = flag.Int("cat", 1000, "files to cat through the mount")
	debug = flag.Bool("v", false, "show mnemofs output")
	bkend = flag.String("backend", "", "mnemofs --backend (default: Badger in -work/data)")
	store = flag.String("store", "", "directory holding the store, for its size (default -work/data)")
	onlyI = flag.Bool("import-only", false, "stop after the import (no mount)")
	noIdx = flag.Bool("no-index", false, "import with --index=false (the index built by the first mount, not by the import)")
)

// global: mnemofs's global flags, which go before the subcommand.
func global(args ...string) []string {
	g := []string{"--data", data}
	if *bkend != "" {
		g = append(g, "--backend", *bkend)
	}
	return append(g, args...)
}

var mnt, data, src string

func main() {
	flag.Parse()
	if *bin == "" || *work == "" {
		flag.Usage()
		os.Exit(2)
	}
	src, data, mnt = filepath.Join(*work, "src"), filepath.Join(*work, "data"), filepath.Join(*work, "mnt")
	for _, d := range []string{src, data, mnt} {
		check(os.MkdirAll(d, 0o755))
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		stopMount()
		os.Exit(130)
	}()
	defer stopMount()

	var rows [][2]string
	row := func(k, v string) {
		rows = append(rows, [2]string{k, v})
		fmt.Fprintf(os.Stderr, "scale: %s: %s\n", k, v)
	}
	t := time.Now()
	paths, bytes := generate()
	row("generate", fmt.Sprintf("%d files, %.1f MiB in %.1f s", len(paths), float64(bytes)/(1<<20), time.Since(t).Seconds()))

	// Import while unmounted, the source at rest: the generator's gigabyte
	// written back first, which would otherwise go on during the import
	// (the kernel's writeback on the same CPUs) and be timed with it.
	t = time.Now()
	syscall.Sync()
	row("sync after generating", fmt.Sprintf("%.1f s", time.Since(t).Seconds()))
	t = time.Now()
	iargs := []string{"import", src, "--to", "/episodic/bulk"}
	if *noIdx {
		iargs = append(iargs, "--index=false")
	}
	cmd := exec.Command(*bin, global(iargs...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	d := time.Since(t)
	if err != nil {
		fatal(fmt.Errorf("import: %v\n%s%s", err, out, stderr.String()))
	}
	rate := float64(len(paths)) / d.Seconds()
	goal := "meets the 3000 files/s goal"
	if rate < 3000 {
		goal = "BELOW the 3000 files/s goal"
	}
	what := "import"
	if *noIdx {
		what = "import --index=false"
	}
	row(what, fmt.Sprintf("%.1f s, **%.0f files/s** (%s); peak RSS %s; %s", d.Seconds(), rate, goal,
		mib(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss), lastLine(out)))
	if *store == "" {
		*store = data
	}
	row("store on disk", du(*store))
	if *onlyI {
		table(len(paths), rows)
		return
	}

	// Cold mount: page cache dropped (root only).
	cold := "page cache dropped"
	syscall.Sync()
	if os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0) != nil {
		cold = "page cache NOT dropped (not root)"
	}
	ready, statOK := mount()
	row("mount 1 (cold): ready line", fmt.Sprintf("%.0f ms (%s)", ms(ready), cold))
	row("mount 1 (cold): stat MNT/episodic works", fmt.Sprintf("%.0f ms", ms(statOK)))
	row("RSS after mount", rss())
	firstSearch(row, "mount 1 (cold)")
	busy, cpu := quiesce()
	row("background work after that", fmt.Sprintf("busy for %.1f s after the first search (%.1f s CPU)", busy.Seconds(), cpu.Seconds()))
	row("RSS once idle", rss())

	t = time.Now()
	found := countFind()
	row("find MNT/episodic -type f", fmt.Sprintf("%d files in %.2f s (%.0f files/s)", found, time.Since(t).Seconds(), float64(found)/time.Since(t).Seconds()))
	if found != len(paths) {
		row("WARNING", fmt.Sprintf("find saw %d files, %d were imported", found, len(paths)))
	}
	row("RSS after find", rss())

	r := rand.New(rand.NewSource(2))
	args := make([]string, 0, *ncat)
	for _, i := range r.Perm(len(paths))[:min(*ncat, len(paths))] {
		args = append(args, filepath.Join(mnt, "episodic", "bulk", paths[i]))
	}
	t = time.Now()
	c := exec.Command("cat", args...)
	stdout, _ := c.StdoutPipe()
	check(c.Start())
	nb, _ := io.Copy(io.Discard, stdout)
	check(c.Wait())
	row(fmt.Sprintf("cat %d random files", len(args)), fmt.Sprintf("%.0f ms (%.0f µs/file, %d bytes)", ms(time.Since(t)), float64(time.Since(t).Microseconds())/float64(len(args)), nb))
	row("RSS after cat", rss())

	t = time.Now()
	stopMount()
	row("unmount", fmt.Sprintf("%.0f ms", ms(time.Since(t))))

	ready, statOK = mount()
	row("mount 2 (warm): ready line", fmt.Sprintf("%.0f ms", ms(ready)))
	row("mount 2 (warm): stat MNT/episodic works", fmt.Sprintf("%.0f ms", ms(statOK)))
	row("RSS after mount 2", rss())
	firstSearch(row, "mount 2 (warm)")
	stopMount()
	logMu.Lock()
	for _, l := range mountLog {
		row("mount log", "`"+l+"`")
	}
	logMu.Unlock()

	table(len(paths), rows)
}

func table(n int, rows [][2]string) {
	fmt.Printf("| measure (%d files) | result |\n|---|---|\n", n)
	for _, r := range rows {
		fmt.Printf("| %s | %s |\n", r[0], r[1])
	}
}

// generate writes the source tree and returns the relative paths.
func generate() ([]string, int64) {
	words := strings.Fields(`the user prefers concise answers and dark mode meeting notes project deadline
		deploy staging production database migration review feedback bug fix release plan agent memory
		context budget summary decision rationale follow up tomorrow customer issue latency cache index
		python rust golang kubernetes terraform invoice travel flight hotel birthday recipe garden book`)
	types := []string{"episode", "fact", "preference", "task", "summary"}
	r := rand.New(rand.NewSource(1))
	var paths []string
	var total int64
	base := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
	var b strings.Builder
	for i := 0; i < *n; i++ {
		day := base.AddDate(0, 0, i / *perD)
		rel := filepath.Join(day.Format("2006-01-02"), fmt.Sprintf("%05d-%s-%s.md", i, words[r.Intn(len(words))], words[r.Intn(len(words))]))
		if i%*perD == 0 {
			check(os.MkdirAll(filepath.Join(src, filepath.Dir(rel)), 0o755))
		}
		b.Reset()
		title := fmt.Sprintf("%s %s %d", words[r.Intn(len(words))], words[r.Intn(len(words))], i)
		if i%3 != 0 {
			fmt.Fprintf(&b, "---\nid: mem-%06d\ntype: %s\ntags: [%s, %s]\nimportance: %.2f\ncreated: %s\n",
				i, types[r.Intn(len(types))], words[r.Intn(len(words))], words[r.Intn(len(words))],
				r.Float64(), day.Add(time.Duration(i%*perD)*time.Minute).Format(time.RFC3339))
			if i%5 == 0 {
				fmt.Fprintf(&b, "users: [user-%d]\nentities: [%s]\n", r.Intn(50), words[r.Intn(len(words))])
			}
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, "# %s\n\n", title)
		size := 600 + r.Intn(800)
		for b.Len() < size {
			if r.Intn(8) == 0 {
				b.WriteString("\n- ")
			}
			b.WriteString(words[r.Intn(len(words))])
			b.WriteByte(' ')
			if r.Intn(12) == 0 {
				b.WriteString(".\n")
			}
		}
		b.WriteByte('\n')
		check(os.WriteFile(filepath.Join(src, rel), []byte(b.String()), 0o644))
		paths = append(paths, rel)
		total += int64(b.Len())
	}
	return paths, total
}

var (
	mountCmd   *exec.Cmd
	mountStart time.Time
	logMu      sync.Mutex
	mountLog   []string // the mount's stderr lines
)

// mount starts `mnemofs mount` and returns the time until its ready line
// and until stat MNT/episodic succeeds.
func mount() (ready, statOK time.Duration) {
	t := time.Now()
	mountStart = t
	mountCmd = exec.Command(*bin, global("mount", mnt)...)
	out, err := mountCmd.StdoutPipe()
	check(err)
	errPipe, err := mountCmd.StderrPipe()
	check(err)
	check(mountCmd.Start())
	logDone := make(chan struct{})
	go func() {
		defer close(logDone)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			if *debug {
				fmt.Fprintln(os.Stderr, sc.Text())
			}
			logMu.Lock()
			mountLog = append(mountLog, sc.Text())
			logMu.Unlock()
		}
	}()
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "mnemofs: mounted") {
			ready = time.Since(t)
			break
		}
	}
	if ready == 0 {
		<-logDone
		err := mountCmd.Wait()
		mountCmd = nil
		fatal(fmt.Errorf("mnemofs mount exited without its ready line: %v\n%s", err, strings.Join(mountLog, "\n")))
	}
	go io.Copy(io.Discard, out)
	for {
		if _, err := os.Stat(filepath.Join(mnt, "episodic")); err == nil {
			return ready, time.Since(t)
		}
		if time.Since(t) > time.Minute {
			fatal(fmt.Errorf("stat %s/episodic still fails after a minute", mnt))
		}
		time.Sleep(time.Millisecond)
	}
}

// stopMount unmounts and waits for the mount process to exit.
func stopMount() {
	if mountCmd == nil || mountCmd.Process == nil {
		return
	}
	c := mountCmd
	mountCmd = nil
	if err := exec.Command(*bin, "unmount", mnt).Run(); err != nil {
		c.Process.Signal(syscall.SIGTERM)
	}
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		c.Process.Kill()
		exec.Command("fusermount3", "-uz", mnt).Run()
	}
}

func countFind() int {
	c := exec.Command("find", filepath.Join(mnt, "episodic"), "-type", "f")
	out, err := c.StdoutPipe()
	check(err)
	check(c.Start())
	sc := bufio.NewScanner(out)
	found := 0
	for sc.Scan() {
		found++
	}
	check(c.Wait())
	return found
}

// firstSearch times ls MNT/search/<two words>/, which waits for the
// mount's index build, from the start of the mount.
func firstSearch(row func(k, v string), label string) {
	t := time.Now()
	es, err := os.ReadDir(filepath.Join(mnt, "search", "deploy staging"))
	check(err)
	row(label+": first search answered", fmt.Sprintf("%.0f ms after the mount started (%.0f ms for the ls; %d entries)", ms(time.Since(mountStart)), ms(time.Since(t)), len(es)))
	row(label+": RSS after the first search", rss())
}

func du(dir string) string {
	out, err := exec.Command("du", "-sh", dir).Output()
	if err != nil {
		return "?"
	}
	return strings.Fields(string(out))[0]
}

func lastLine(b []byte) string {
	ls := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(ls[len(ls)-1])
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

func check(err error) {
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "scale:", err)
	stopMount()
	os.Exit(1)
}
