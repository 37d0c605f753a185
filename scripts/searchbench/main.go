// Command searchbench measures mnemofs search and the plain tools an agent
// runs on a mount, side by side with the same files in a native directory:
//
//  1. search/<q>/ latency — open+readdir of MNT/search/<q>/ until the ranked
//     list is read — p50/p95 over -queries queries of 1-4 words at each of
//     -scales memories, next to `grep -rl w SRC` (`grep -rlE 'a|b' SRC` for
//     several words) over the generated source; the time until a first
//     search returns after mounting (the index is built in the background);
//     the mount's VmRSS. Project goal: search p95 <= 10 ms at 100k.
//  2. At -detail memories, on a fresh mount: cost per create+write+close of
//     -writes ~1 KiB memories through the mount vs a native directory, the
//     time until a search (k:N, on a token only they hold) finds them all,
//     the mount's CPU per write, and the create/write/flush rows of
//     meta/stats.json.
//  3. At -detail memories: `find -type f` and `grep -rl w` over
//     MNT/by-user/<u> and MNT/episodic vs native copies of the same files;
//     median of -runs, cold (page cache dropped: root) and warm.
//
// Memories are 0.8-1.3 KiB Markdown with YAML front matter (user: one of 20)
// whose words follow a Zipf law over a list of English words, a long tail
// of rarer made-up words, plus names, topics and ticket ids. Each scale is
// generated in -work/src-N, imported unmounted (`mnemofs import SRC --to
// /episodic/bulk`) and mounted at -work/mnt. Markdown goes to stdout. Run
// through scripts/bench-search.sh, which builds the binaries and cleans up.
// With -keep a scale's store stays in -work/data-N; -store DIR then runs
// section 1 on it again (no generation, import or grep), from the mount's
// snapshot: a way to compare binaries or settings on one store.
//
//	go run ./scripts/searchbench -bin ./mnemofs -work /var/tmp/sb [-scales 1000,10000]
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	bin     = flag.String("bin", "", "mnemofs binary (required)")
	work    = flag.String("work", "", "scratch directory on disk (required)")
	scalesF = flag.String("scales", "1000,10000,100000", "store sizes for the search table")
	nq      = flag.Int("queries", 200, "search queries per scale")
	budget  = flag.Duration("grep-budget", 60*time.Second, "time per scale for the grep baseline (run on the first queries until spent)")
	detail  = flag.Int("detail", 10000, "store size for the write and find/grep sections (one of -scales; 0 skips)")
	nw      = flag.Int("writes", 1000, "memories written through the mount (<= 1000, the largest k:)")
	runs    = flag.Int("runs", 3, "runs per find/grep measurement (median)")
	keep    = flag.Bool("keep", false, "leave each scale's store in -work/data-N, for -store")
	reuse   = flag.String("store", "", "search this store (a data directory left by -keep) instead of generating and importing one: section 1 only, without grep; -scales gives its size")
	settle  = flag.Bool("settle", false, "after the first search, wait until the mount is idle (its snapshot written, its build's garbage collected) before the timed searches")
)

var mnt string

func main() {
	flag.Parse()
	if *bin == "" || *work == "" || *nw > 1000 {
		flag.Usage()
		os.Exit(2)
	}
	mnt = filepath.Join(*work, "mnt")
	check(os.MkdirAll(mnt, 0o755))
	defer stopMount()
	queries := makeQueries(*nq)
	var out, slow, sec2, sec3 strings.Builder
	fmt.Fprintf(&out, "### 1. search/<q>/ vs grep -rl over the native source\n\n%d queries of 1-4 words (e.g. `%s`); search = open+readdir of MNT/search/<q>/ (default k=10, ranked, warm); grep = `grep -rl w SRC` or `grep -rlE 'a|b' SRC` (page cache warm), run on the first queries until %s is spent; the ratios and the \"same\" column use those queries. Times in ms.\n\n", len(queries), strings.Join(queries[:4], "`, `"), *budget)
	out.WriteString("| memories | import | index ready after | search p50 | search p95 | search max | no results | grep runs | search p50 / p95 (same) | grep p50 | grep p95 | grep/search p50 | grep/search p95 | grep matches (median) | VmRSS idle → after queries (anonymous, file-backed) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range strings.Split(*scalesF, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		check(err)
		src, data, sub := filepath.Join(*work, fmt.Sprint("src-", n)), filepath.Join(*work, fmt.Sprint("data-", n)), ""
		if n == *detail {
			sub = filepath.Join(*work, "src-user")
		}
		var nsub int
		var imp time.Duration
		if *reuse != "" {
			src, data, sub = "", *reuse, ""
		} else {
			t := time.Now()
			nsub = generate(n, src, sub, users[0])
			logf("%d: generated in %.1f s", n, time.Since(t).Seconds())
			syscall.Sync() // the source at rest, as scripts/scale: its writeback is not the import's
			t = time.Now()
			if o, err := exec.Command(*bin, "import", src, "--to", "/episodic/bulk", "--data", data).CombinedOutput(); err != nil {
				fatal(fmt.Errorf("import: %v\n%s", err, o))
			}
			imp = time.Since(t)
		}
		mount(data)
		t := time.Now()
		search(queries[0]) // waits for the background index
		ready := time.Since(t)
		logf("%d: imported in %.1f s; first search after mounting returned after %.1f s", n, imp.Seconds(), ready.Seconds())
		if *settle {
			logf("%d: the mount was idle %.1f s later", n, quiet().Seconds())
		}
		rssIdle := rss()
		var sl, gl []time.Duration
		var gm []int
		empty := 0
		for _, q := range queries {
			d, k := search(q)
			if sl = append(sl, d); len(k) == 0 {
				empty++
			}
		}
		rssQ := rss()
		for t := time.Now(); src != "" && len(gl) < len(queries) && time.Since(t) < *budget; {
			d, m := grep(src, queries[len(gl)])
			gl, gm = append(gl, d), append(gm, m)
		}
		same := sl[:len(gl)]
		fmt.Fprintf(&out, "| %d | %.1f s | %.1f s | %s | %s | %s | %d | %d | %s / %s | %s | %s | %.1f× | %.1f× | %d (%.1f%%) | %s → %s |\n",
			n, imp.Seconds(), ready.Seconds(), msS(pct(sl, 50)), msS(pct(sl, 95)), msS(pct(sl, 100)), empty, len(gl),
			msS(pct(same, 50)), msS(pct(same, 95)), msS(pct(gl, 50)), msS(pct(gl, 95)), ms(pct(gl, 50))/ms(pct(same, 50)),
			ms(pct(gl, 95))/ms(pct(same, 95)), pct(gm, 50), 100*float64(pct(gm, 50))/float64(n), rssIdle, rssQ)
		idx := make([]int, len(sl))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return int(sl[b] - sl[a]) })
		fmt.Fprintf(&slow, "| %d | ", n)
		for _, i := range idx[:min(5, len(idx))] {
			fmt.Fprintf(&slow, "`%s` %s ms", queries[i], msS(sl[i]))
			if i < len(gl) {
				fmt.Fprintf(&slow, " (grep %s ms, %d files)", msS(gl[i]), gm[i])
			}
			slow.WriteString("; ")
		}
		slow.WriteString("|\n")
		if n == *detail && *reuse == "" {
			findGrep(&sec3, src, sub, nsub)
			stopMount() // a fresh mount, so that stats.json counts the writes alone
			mount(data)
			search(queries[0])
			writes(&sec2)
		}
		stopMount()
		for _, d := range []string{src, data, sub} {
			if d == "" || (*keep || *reuse != "") && d == data {
				continue
			}
			check(os.RemoveAll(d))
		}
	}
	out.WriteString("\nSlowest searches (grep time and files matched where grep ran):\n\n| memories | slowest 5 |\n|---|---|\n")
	fmt.Print(out.String() + slow.String() + sec2.String() + sec3.String())
}

// search lists MNT/search/<q>/ and returns the time and the ranked entries
// (without .results).
func search(q string) (time.Duration, []string) {
	t := time.Now()
	f, err := os.Open(filepath.Join(mnt, "search", q))
	check(err)
	names, err := f.Readdirnames(-1)
	d := time.Since(t)
	check(err)
	f.Close()
	return d, slices.DeleteFunc(names, func(s string) bool { return s == ".results" })
}

// grep runs grep -rl over dir for q's words: the time and the files matched.
func grep(dir, q string) (time.Duration, int) {
	if w := strings.Fields(q); len(w) > 1 {
		return timed("grep", "-rlE", strings.Join(w, "|"), dir)
	}
	return timed("grep", "-rl", q, dir)
}

// timed runs a command and returns its wall time and stdout line count.
func timed(name string, args ...string) (time.Duration, int) {
	c := exec.Command(name, args...)
	out, err := c.StdoutPipe()
	check(err)
	t := time.Now()
	check(c.Start())
	lines := 0
	for sc := bufio.NewScanner(out); sc.Scan(); {
		lines++
	}
	err = c.Wait()
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1 && name == "grep") {
		fatal(fmt.Errorf("%s %v: %v", name, args, err))
	}
	return time.Since(t), lines
}

// findGrep is section 3: find and grep -r over views vs native copies.
func findGrep(out *strings.Builder, src, sub string, nsub int) {
	word, u := words[nFunc+40], users[0]
	fmt.Fprintf(out, "\n### 3. find / grep -r at %d memories: mnemofs vs native copies of the same files\n\nMedian of %d runs, ms. Cold: `sync; echo 3 > /proc/sys/vm/drop_caches` before each run (kernel caches only; the mount process keeps its own). Warm: after one untimed run. by-user/%s holds %d memories; its native copy has just those files.\n\n", *detail, *runs, u, nsub)
	out.WriteString("| command | mnemofs cold | native cold | mnemofs warm | native warm | warm ratio | lines (mnemofs / native) |\n|---|---|---|---|---|---|---|\n")
	view, epi := filepath.Join(mnt, "by-user", u), filepath.Join(mnt, "episodic")
	for _, c := range []struct{ label, m, n string }{
		{"find by-user/" + u + " -type f", view, sub}, {"grep -rl " + word + " by-user/" + u, view, sub},
		{"find episodic -type f", epi, src}, {"grep -rl " + word + " episodic", epi, src},
	} {
		tool := strings.Fields(c.label)[0]
		var cell []string
		var lines [2]int
		var warm [2]float64
		for _, cold := range []bool{true, false} {
			for k, dir := range []string{c.m, c.n} {
				args := []string{"-rl", word, dir}
				if strings.HasPrefix(c.label, "find") {
					args = []string{dir, "-type", "f"}
				}
				if !cold {
					timed(tool, args...)
				}
				var ds []time.Duration
				for range *runs {
					if cold {
						syscall.Sync()
						check(os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0))
					}
					d, l := timed(tool, args...)
					ds, lines[k] = append(ds, d), l
				}
				cell = append(cell, msS(pct(ds, 50)))
				warm[k] = ms(pct(ds, 50))
			}
		}
		fmt.Fprintf(out, "| `%s` | %s | %s | %s | %s | %.1f× | %d / %d |\n", c.label, cell[0], cell[1], cell[2], cell[3], warm[0]/warm[1], lines[0], lines[1])
		logf("find/grep: %s done", c.label)
	}
}

// writes is section 2: create+write+close through the mount vs native,
// then the time until a search finds all the new memories.
func writes(out *strings.Builder) {
	cpu0 := cpuTime()
	md, nd := filepath.Join(mnt, "episodic", "new"), filepath.Join(*work, "native-writes")
	check(os.Mkdir(md, 0o755))
	check(os.MkdirAll(nd, 0o755))
	var bodies [][]byte
	for i := range *nw {
		extra := fmt.Sprintf("Batch marker wombatquill, own marker qx%04d.", i)
		bodies = append(bodies, memoryText(rand.New(rand.NewPCG(2, uint64(i))), 900000+i, users[i%len(users)], time.Now(), extra))
	}
	put := func(dir string) (time.Duration, []time.Duration) {
		var ls []time.Duration
		t := time.Now()
		for i, b := range bodies {
			t0 := time.Now()
			check(os.WriteFile(filepath.Join(dir, fmt.Sprintf("new-%04d.md", i)), b, 0o644))
			ls = append(ls, time.Since(t0))
		}
		return time.Since(t), ls
	}
	mt, ml := put(md)
	cpuW := cpuTime() - cpu0
	t := time.Now()
	polls, found := 0, 0
	for ; found < *nw && time.Since(t) < time.Minute; polls++ {
		_, l := search(fmt.Sprintf("wombatquill k:%d", *nw))
		found = len(l)
	}
	searchable := time.Since(t)
	cpu := cpuTime() - cpu0
	again, _ := search(fmt.Sprintf("wombatquill k:%d", *nw))
	top, extra := 0, 0
	for _, i := range []int{0, *nw / 3, *nw / 2, *nw - 1} {
		_, names := search(fmt.Sprintf("qx%04d", i))
		if slices.Contains(names, fmt.Sprintf("01-new-%04d.md", i)) {
			top++
		}
		extra += max(0, len(names)-1)
	}
	nt, nl := put(nd)
	check(os.RemoveAll(nd))
	fmt.Fprintf(out, "\n### 2. Index cost per write at %d memories\n\n%d memories of ~1 KiB, each create+write+close (os.WriteFile), into MNT/episodic/new/ vs a native directory on the same disk (no fsync in either).\n\n| target | total | per write (mean) | p50 | p95 |\n|---|---|---|---|---|\n", *detail, *nw)
	for _, r := range []struct {
		n  string
		t  time.Duration
		ls []time.Duration
	}{{"mnemofs", mt, ml}, {"native", nt, nl}} {
		fmt.Fprintf(out, "| %s | %.0f ms | %.0f µs | %.0f µs | %.0f µs |\n", r.n, ms(r.t), float64(r.t.Microseconds())/float64(*nw), us(pct(r.ls, 50)), us(pct(r.ls, 95)))
	}
	fmt.Fprintf(out, "\nAfter the last close, `search/wombatquill k:%d/` listed **%d of %d** after **%.0f ms** (%d searches; the same search once more: %.0f ms). Searches for a token unique to one new file put it at rank 1 in %d of 4 (with %d other files listed, neighbours in the same folder). Mount CPU (user+sys, 10 ms ticks) for the writes, their indexing and that first k:%d search (which reads %d snippets): %.0f ms (%.0f during the writes), %.0f µs per write. VmRSS after: %s.\n\n",
		*nw, found, *nw, ms(searchable), polls, ms(again), top, extra, *nw, *nw, ms(cpu), ms(cpuW), float64(cpu.Microseconds())/float64(*nw), rss())
	var st struct {
		Latency map[string]map[string]float64 `json:"latency"`
	}
	b, err := os.ReadFile(filepath.Join(mnt, "meta", "stats.json"))
	check(err)
	check(json.Unmarshal(b, &st))
	out.WriteString("meta/stats.json latency after the writes (handler side; a fresh mount of the same store: the writes, the searches above and one warm-up search):\n\n| op | count | p50 µs | p95 µs | p99 µs | mean µs |\n|---|---|---|---|---|---|\n")
	for _, k := range []string{"create", "write", "flush", "release", "search"} {
		if l, ok := st.Latency[k]; ok {
			fmt.Fprintf(out, "| %s | %.0f | %.0f | %.0f | %.0f | %.0f |\n", k, l["count"], l["p50_us"], l["p95_us"], l["p99_us"], l["mean_us"])
		}
	}
	logf("writes: done")
}

var mountCmd *exec.Cmd

// mount starts `mnemofs mount` and returns after its ready line; the pid
// goes to -work/mount.pid for the wrapper's cleanup.
func mount(data string) {
	mountCmd = exec.Command(*bin, "mount", "--data", data, mnt)
	out, err := mountCmd.StdoutPipe()
	check(err)
	mountCmd.Stderr = os.Stderr
	check(mountCmd.Start())
	check(os.WriteFile(filepath.Join(*work, "mount.pid"), []byte(strconv.Itoa(mountCmd.Process.Pid)), 0o644))
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "mnemofs: mounted") {
			go io.Copy(io.Discard, out)
			return
		}
	}
	err = mountCmd.Wait()
	mountCmd = nil
	fatal(fmt.Errorf("mnemofs mount exited without its ready line: %v", err))
}

func stopMount() {
	if c := mountCmd; c != nil {
		mountCmd = nil
		if exec.Command(*bin, "unmount", mnt).Run() != nil {
			c.Process.Signal(syscall.SIGTERM)
		}
		c.Wait()
		os.Remove(filepath.Join(*work, "mount.pid"))
	}
}

// rss is the mount process's VmRSS, and how much of it is anonymous
// (the heap) and file-backed (mapped files: the store's tables, the
// index snapshot; pages the kernel may drop and read again).
func rss() string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", mountCmd.Process.Pid))
	field := func(name string) float64 {
		_, v, _ := strings.Cut(string(b), name+":")
		kb, _ := strconv.Atoi(strings.Fields(v + " 0")[0])
		return float64(kb) / 1024
	}
	return fmt.Sprintf("%.0f MiB (anon %.0f, file %.0f)", field("VmRSS"), field("RssAnon"), field("RssFile"))
}

// quiet waits until the mount process uses under 5% of a CPU for a
// second (10 minutes at most) and returns how long that took.
func quiet() time.Duration {
	t, prev := time.Now(), cpuTime()
	for time.Since(t) < 10*time.Minute {
		time.Sleep(time.Second)
		now := cpuTime()
		if now-prev < 50*time.Millisecond {
			break
		}
		prev = now
	}
	return time.Since(t)
}

// cpuTime is the mount process's user+system CPU time.
func cpuTime() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", mountCmd.Process.Pid))
	check(err)
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond // USER_HZ = 100
}

// pct is the p-th percentile (nearest rank) of xs.
func pct[T cmp.Ordered](xs []T, p int) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	s := slices.Sorted(slices.Values(xs))
	return s[max(0, (len(s)*p+99)/100-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
func msS(d time.Duration) string { return strconv.FormatFloat(ms(d), 'f', 2, 64) }
func logf(f string, a ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+"searchbench: "+f+"\n", a...)
}

func check(err error) {
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "searchbench:", err)
	stopMount()
	os.Exit(1)
}
