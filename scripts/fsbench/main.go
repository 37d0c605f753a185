// Command fsbench measures per-operation filesystem latency and sequential
// throughput with plain syscalls, so a FUSE mount (mnemofs, go-fuse's
// loopback) can be compared with the native disk under the same workload.
//
// It works in DIR/working/bench/run-* (a mnemofs mount already has
// working/; elsewhere it is created) and measures: create+write 1 KiB+close,
// stat (existing and missing names), open+read 1 KiB+close, readdir of a
// directory of -files entries with an lstat of each (per entry; warm, and
// cold after the 1 s kernel attribute TTL has expired), append of one line,
// rename into another directory, unlink of a file made moments before, and
// unlink of a file older than 3 s (which mnemofs moves to archive/trash/);
// then a 64 MiB sequential write (1 MiB writes, fsync, close) and read
// (cold after dropping the page cache, which needs root, then warm).
//
//	go run ./scripts/fsbench -label native /var/tmp/somedir
//	go run ./scripts/fsbench -json -n 500 /mnt/mnemofs > r.json
//	go run ./scripts/fsbench table r1.json r2.json ...   # Markdown summary
//	go run ./scripts/fsbench loopback -no-passthrough MNT ORIG  # baseline
//
// Latencies are reported in microseconds (median, p95, mean).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Result is one measured operation.
type Result struct {
	Name   string  `json:"name"`
	Unit   string  `json:"unit"` // "us" (latency) or "MiB/s"
	N      int     `json:"n"`
	Median float64 `json:"median"`
	P95    float64 `json:"p95,omitempty"`
	Mean   float64 `json:"mean,omitempty"`
	Note   string  `json:"note,omitempty"`
	// DaemonCPU is the CPU time the FUSE daemon (-pid) used per
	// operation (or entry) while the operation ran, in microseconds.
	DaemonCPU float64 `json:"daemon_cpu_us,omitempty"`
	units     int     // operations (or entries) measured
}

// Report is one run against one directory.
type Report struct {
	Label   string   `json:"label"`
	Dir     string   `json:"dir"`
	Iters   int      `json:"iters"`
	Files   int      `json:"files"`
	Started string   `json:"started"`
	Results []Result `json:"results"`
}

var (
	iters     = flag.Int("n", 2000, "iterations per latency operation")
	nfiles    = flag.Int("files", 1000, "entries in the readdir directory")
	dirIters  = flag.Int("readdir-n", 20, "warm readdir+lstat passes")
	coldIters = flag.Int("readdir-cold-n", 5, "cold readdir+lstat passes (each waits 1.1 s for the kernel TTL to expire; 0 skips)")
	seqMiB    = flag.Int("seq-mib", 64, "size of the sequential write/read file in MiB (0 skips)")
	label     = flag.String("label", "", "name of this target in the output (default: the directory)")
	asJSON    = flag.Bool("json", false, "print JSON instead of a table")
	verbose   = flag.Bool("v", false, "report each result on stderr as it is measured")
	keep      = flag.Bool("keep", false, "leave the run directory behind")
	pid       = flag.Int("pid", 0, "PID of the FUSE daemon serving DIR: report its CPU time per operation")
	dropCache = flag.Bool("drop-caches", true, "drop the page cache before the cold sequential read (needs root)")
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: fsbench [flags] DIR\n       fsbench table RESULT.json...\n       fsbench loopback [-no-passthrough] MNT ORIG\n\nflags:\n")
		flag.PrintDefaults()
	}
	if len(os.Args) > 1 && (os.Args[1] == "table" || os.Args[1] == "loopback") {
		cmd := table
		if os.Args[1] == "loopback" {
			cmd = loopback
		}
		if err := cmd(os.Args[2:]); err != nil {
			fatal(err)
		}
		return
	}
	flag.Parse()
	noPreemptSignals()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if *label == "" {
		*label = flag.Arg(0)
	}
	rep, err := run(flag.Arg(0))
	if err != nil {
		fatal(err)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return
	}
	fmt.Printf("%s (%s), %d iterations\n", rep.Label, rep.Dir, rep.Iters)
	fmt.Printf("%-44s %10s %10s %10s %10s  %s\n", "operation", "median", "p95", "mean", "daemon CPU", "unit")
	for _, r := range rep.Results {
		if r.Unit != "us" {
			fmt.Printf("%-44s %10.1f %10s %10s %10s  %s %s\n", r.Name, r.Median, "", "", "", r.Unit, r.Note)
			continue
		}
		fmt.Printf("%-44s %10.1f %10.1f %10.1f %10.1f  %s %s\n", r.Name, r.Median, r.P95, r.Mean, r.DaemonCPU, r.Unit, r.Note)
	}
}

// noPreemptSignals re-executes fsbench with async preemption off: the
// runtime's SIGURG would interrupt syscalls waiting on FUSE, and each one
// costs the daemon an extra INTERRUPT request that a C program would not.
func noPreemptSignals() {
	if strings.Contains(os.Getenv("GODEBUG"), "asyncpreemptoff=1") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	env := []string{"GODEBUG=asyncpreemptoff=1," + os.Getenv("GODEBUG")}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GODEBUG=") {
			env = append(env, e)
		}
	}
	fatal(unix.Exec(exe, os.Args, env))
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "fsbench:", err)
	os.Exit(1)
}

func check(err error, what string) {
	if err != nil {
		fatal(fmt.Errorf("%s: %w", what, err))
	}
}

// latency summarises durations (one per operation, or per entry when div > 1).
func latency(name string, ds []time.Duration, div int, note string) Result {
	us := make([]float64, len(ds))
	sum := 0.0
	for i, d := range ds {
		us[i] = float64(d.Nanoseconds()) / 1e3 / float64(div)
		sum += us[i]
	}
	sort.Float64s(us)
	r := Result{Name: name, Unit: "us", N: len(us), Note: note, units: len(us) * div}
	if len(us) > 0 {
		r.Median = quantile(us, 0.5)
		r.P95 = quantile(us, 0.95)
		r.Mean = sum / float64(len(us))
	}
	return r
}

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted)-1) + 0.5)
	return sorted[i]
}

func writeFile(p string, data []byte, flags int) error {
	fd, err := unix.Open(p, flags, 0o644)
	if err != nil {
		return err
	}
	if _, err := unix.Write(fd, data); err != nil {
		unix.Close(fd)
		return err
	}
	return unix.Close(fd)
}

func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyz0123456789 \n"[i%38]
	}
	return b
}

func run(dir string) (*Report, error) {
	base := filepath.Join(dir, "working", "bench")
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp(base, "run-")
	if err != nil {
		return nil, err
	}
	if !*keep {
		defer os.RemoveAll(root)
	}
	rep := &Report{Label: *label, Dir: dir, Iters: *iters, Files: *nfiles, Started: time.Now().UTC().Format(time.RFC3339)}
	// The daemon's CPU time is counted between begin (or resume) and
	// pause; add pauses.
	var cpuAcc, cpuT0 time.Duration
	begin := func() { cpuAcc, cpuT0 = 0, daemonCPU() }
	pause := func() { cpuAcc += daemonCPU() - cpuT0 }
	resume := func() { cpuT0 = daemonCPU() }
	add := func(r Result) {
		pause()
		if *pid > 0 && r.units > 0 {
			r.DaemonCPU = float64(cpuAcc.Nanoseconds()) / 1e3 / float64(r.units)
		}
		rep.Results = append(rep.Results, r)
		if !*verbose {
			return
		}
		fmt.Fprintf(os.Stderr, "fsbench %s: %-40s median %8.1f %s\n", *label, r.Name, r.Median, r.Unit)
	}
	n := *iters
	kib := payload(1024)
	mk := func(sub string) string {
		p := filepath.Join(root, sub)
		check(os.Mkdir(p, 0o755), "mkdir")
		return p
	}
	cdir, rdir, udir := mk("create"), mk("renamed"), mk("unlink")
	name := func(d string, i int) string { return filepath.Join(d, fmt.Sprintf("note-%05d.md", i)) }
	ds := make([]time.Duration, n)

	// (1) create + write 1 KiB + close of a new file.
	created := time.Now()
	begin()
	for i := 0; i < n; i++ {
		t := time.Now()
		err := writeFile(name(cdir, i), kib, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC)
		ds[i] = time.Since(t)
		check(err, "create")
	}
	add(latency("create+write 1KiB+close", ds, 1, ""))

	// (2) stat of an existing file.
	var st unix.Stat_t
	begin()
	for i := 0; i < n; i++ {
		p := name(cdir, i)
		t := time.Now()
		err := unix.Stat(p, &st)
		ds[i] = time.Since(t)
		check(err, "stat")
	}
	add(latency("stat existing", ds, 1, ""))

	// (3) stat of a missing name (a different name each time, so no
	// negative dentry is reused).
	begin()
	for i := 0; i < n; i++ {
		p := filepath.Join(cdir, fmt.Sprintf("missing-%05d.md", i))
		t := time.Now()
		err := unix.Stat(p, &st)
		ds[i] = time.Since(t)
		if err != unix.ENOENT {
			fatal(fmt.Errorf("stat of a missing name: %v", err))
		}
	}
	add(latency("stat missing", ds, 1, ""))

	// (4) open + read 1 KiB + close.
	buf := make([]byte, 1<<20)
	begin()
	for i := 0; i < n; i++ {
		p := name(cdir, i)
		t := time.Now()
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		check(err, "open")
		m, err := unix.Read(fd, buf[:1024])
		unix.Close(fd)
		ds[i] = time.Since(t)
		check(err, "read")
		if m != 1024 {
			fatal(fmt.Errorf("read %d bytes of %s, want 1024", m, p))
		}
	}
	add(latency("open+read 1KiB+close", ds, 1, ""))

	// (7) rename into another directory, new name.
	begin()
	for i := 0; i < n; i++ {
		from, to := name(cdir, i), filepath.Join(rdir, fmt.Sprintf("moved-%05d.md", i))
		t := time.Now()
		err := unix.Rename(from, to)
		ds[i] = time.Since(t)
		check(err, "rename")
	}
	add(latency("rename to other dir", ds, 1, ""))

	// (8) unlink of files created moments before (in batches of 100, each
	// batch made just before it is removed: younger than 3 s).
	begin()
	for i := 0; i < n; i += 100 {
		end := min(i+100, n)
		pause()
		for j := i; j < end; j++ {
			check(writeFile(name(udir, j), kib, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC), "create")
		}
		resume()
		for j := i; j < end; j++ {
			t := time.Now()
			err := unix.Unlink(name(udir, j))
			ds[j] = time.Since(t)
			check(err, "unlink")
		}
	}
	add(latency("unlink (new file)", ds, 1, ""))

	// (8b) unlink of files older than 3 s: the renamed ones.
	if wait := 3500*time.Millisecond - time.Since(created); wait > 0 {
		time.Sleep(wait)
	}
	begin()
	for i := 0; i < n; i++ {
		p := filepath.Join(rdir, fmt.Sprintf("moved-%05d.md", i))
		t := time.Now()
		err := unix.Unlink(p)
		ds[i] = time.Since(t)
		check(err, "unlink")
	}
	add(latency("unlink (old file; mnemofs: → trash)", ds, 1, ""))

	// (6) append one line: open O_APPEND, write ~80 bytes, close.
	line := []byte(strings.Repeat("-", 60) + " appended line\n")[:80]
	line[79] = '\n'
	logf := filepath.Join(root, "append.log")
	begin()
	for i := 0; i < n; i++ {
		t := time.Now()
		err := writeFile(logf, line, unix.O_CREAT|unix.O_WRONLY|unix.O_APPEND|unix.O_CLOEXEC)
		ds[i] = time.Since(t)
		check(err, "append")
	}
	check(unix.Stat(logf, &st), "stat")
	if st.Size != int64(80*n) {
		fatal(fmt.Errorf("append.log has %d bytes, want %d", st.Size, 80*n))
	}
	add(latency("append 80B line (O_APPEND)+close", ds, 1, fmt.Sprintf("file grows to %d KiB", 80*n/1024)))

	// (5) readdir of nfiles entries + lstat of each (per entry).
	ddir := mk("dir")
	for i := 0; i < *nfiles; i++ {
		check(writeFile(name(ddir, i), kib, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC), "create")
	}
	pass := func() time.Duration {
		t := time.Now()
		f, err := os.Open(ddir)
		check(err, "opendir")
		names, err := f.Readdirnames(-1)
		f.Close()
		check(err, "readdir")
		for _, nm := range names {
			check(unix.Lstat(filepath.Join(ddir, nm), &st), "lstat")
		}
		d := time.Since(t)
		if len(names) != *nfiles {
			fatal(fmt.Errorf("readdir found %d entries, want %d", len(names), *nfiles))
		}
		return d
	}
	pass() // warm up
	var dd []time.Duration
	begin()
	for i := 0; i < *dirIters; i++ {
		dd = append(dd, pass())
	}
	add(latency(fmt.Sprintf("readdir+lstat per entry (%d, warm)", *nfiles), dd, *nfiles, ""))
	dd = nil
	begin()
	for i := 0; i < *coldIters; i++ {
		time.Sleep(1100 * time.Millisecond)
		dd = append(dd, pass())
	}
	if *coldIters > 0 {
		add(latency(fmt.Sprintf("readdir+lstat per entry (%d, TTL expired)", *nfiles), dd, *nfiles, ""))
	}

	if *seqMiB > 0 {
		for _, r := range sequential(filepath.Join(root, "big.bin"), buf) {
			add(r) // no CPU figure: units is 0
		}
	}
	return rep, nil
}
