// Command searchbench measures mnemofs search and the plain tools an agent
// runs on a mount, side by side with the same files as a native directory:
//
//  1. search/<q>/ latency — open+readdir of MNT/search/<q>/ until the
//     ranked list is read — p50/p95 over -queries queries of 1-4 words at
//     each of -scales memories, next to `grep -rl WORD SRC` (`grep -rlE
//     'a|b'` for several words) over the generated source directory; the
//     time until the background index answers a first search ("index
//     ready"); the mount's VmRSS. Goal: search p95 <= 10 ms at 100k.
//  2. At -detail memories: cost per write of -writes create+write+close of
//     ~1 KiB through the mount vs a native directory, the time until all of
//     them are found by a search (k:1000 on a token only they hold), the
//     mount's CPU per write, and meta/stats.json create/write/flush latency.
//  3. At -detail memories: `find -type f` and `grep -rl WORD` over
//     MNT/by-user/<u> and MNT/episodic vs native copies holding the same
//     files; median of -runs, cold (page cache dropped; root) and warm.
//
// Memories are ~1 KiB English Markdown with YAML front matter (user: one of
// 20 users), words drawn from a list with Zipf frequencies plus names,
// topics and ticket ids. Each scale is generated in -work/src-N, imported
// unmounted with `mnemofs import SRC --to /episodic/bulk`, and mounted at
// -work/mnt. It prints Markdown; normally run through
// scripts/bench-search.sh, which builds the binaries and cleans up:
//
//	go run ./scripts/searchbench -bin ./mnemofs -work /var/tmp/sb [-scales 1000,10000]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
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
	budget  = flag.Duration("grep-budget", 60*time.Second, "time per scale for the grep baseline (first queries until spent)")
	detail  = flag.Int("detail", 10000, "store size for the write and find/grep sections (one of -scales; 0 skips)")
	nw      = flag.Int("writes", 1000, "memories written through the mount (at most 1000: k:1000)")
	runs    = flag.Int("runs", 3, "runs per find/grep measurement (median)")
	verbose = flag.Bool("v", false, "show mnemofs output")
)

// words is the vocabulary by falling frequency; the first nFunc are
// function words (mostly mnemofs stop words) and never query terms.
var words = strings.Fields(`the of and to a in is that for it was on with as be at by this have from
	or not but are we they you he she had will can his her all were when there been one if would so
	what which their about more out up then them some into could also than other just over only
	user project meeting team asked said prefers wants needs week today tomorrow yesterday time work
	plan review deploy release notes email call message update issue bug fix test data report doc
	customer client feedback decision deadline budget schedule task follow agreed summary change
	server database cache index query latency error log alert incident outage backup migration
	staging production config version branch merge commit build pipeline service api endpoint
	dashboard metric chart trend cost invoice payment contract quote order delivery shipping
	travel flight hotel train booking trip visa passport airport conference talk slides workshop
	dinner lunch breakfast coffee recipe restaurant vegetarian allergy gluten spicy dessert wine
	birthday gift party wedding anniversary family kids school homework soccer piano vacation beach
	doctor appointment dentist prescription workout running yoga sleep diet weight health therapy
	book novel podcast movie series album concert museum garden plants dog cat vet walk
	apartment lease rent landlord repair plumber kitchen furniture moving insurance tax mortgage
	salary promotion interview hiring onboarding manager mentor career goal quarter roadmap okr
	launch feature design prototype mockup research survey experiment hypothesis result analysis
	model training evaluation dataset prompt embedding vector retrieval agent memory context
	tokens benchmark throughput regression profile flamegraph goroutine thread lock mutex queue
	kubernetes docker terraform ansible postgres redis kafka nginx grafana prometheus linux
	python golang rust typescript react java swift kotlin javascript sql bash vim emacs git
	laptop phone monitor keyboard headphones charger battery printer router wifi password vpn
	morning afternoon evening night monday tuesday wednesday thursday friday saturday sunday
	january february march april june july august september october november december
	happy tired busy stressed excited worried grateful annoyed curious confident relaxed
	important urgent blocked pending done cancelled postponed confirmed approved rejected draft
	quick slow careful concise detailed formal casual friendly short long simple complex
	remember forget remind prefer avoid like dislike enjoy hate love recommend suggest
	discuss explain describe compare decide choose finish start continue stop retry rollback
	upgrade install configure migrate measure optimize refactor document share send receive
	weather rain snow sunny cold warm umbrella jacket bike car parking traffic bus subway
	groceries milk eggs bread cheese tomatoes pasta rice chicken salmon tofu avocado oatmeal tea
	bank account card transfer refund receipt subscription renewal discount price sale
	neighbor friend colleague partner sister brother mother father grandma uncle cousin
	language spanish french german japanese lesson practice vocabulary grammar exam
	photo camera video edit upload collage print frame gallery wall painting sketch
	election news article blog newsletter twitter linkedin github slack zoom calendar
	quarterly annual monthly weekly daily hourly recurring reminder checklist backlog sprint
	estimate velocity retrospective standup demo stakeholder vendor supplier contractor legal
	privacy security audit compliance encryption certificate token secret rotation policy
	latitude harbor lantern meadow orchard pebble quarry ridge saddle tundra willow zephyr`)

const nFunc = 61

var names = strings.Fields(`Priya Marcus Elena Tomas Aisha Kenji Sofia Liam Noor Mateo Hana Oskar
	Chidi Ingrid Rafael Mei Dmitri Amara Lucas Yara Felix Zainab Hugo Leila Arjun Nadia Emil Rosa
	Kwame Freya Diego Sana Jonas Ines Ravi Clara Omar Vera Tariq Maya`)

var topics = strings.Fields(`onboarding observability billing search-relevance mobile-app data-pipeline
	hiring-plan q3-roadmap home-renovation marathon-training tax-return japan-trip kitchen-remodel
	wedding-planning fundraising compliance-audit cost-cutting api-v2 migration-to-postgres
	customer-churn pricing-page incident-review`)

var users = strings.Fields(`alice bob carol dave erin frank grace heidi ivan judy ken laura mallory
	nina oscar peggy quinn rupert sybil trent`)

var types = []string{"episode", "fact", "preference", "task", "summary"}

var mnt string

func main() {
	flag.Parse()
	if *bin == "" || *work == "" || *nw > 1000 {
		flag.Usage()
		os.Exit(2)
	}
	mnt = filepath.Join(*work, "mnt")
	check(os.MkdirAll(mnt, 0o755))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() { <-sig; stopMount(); os.Exit(130) }()
	defer stopMount()

	queries := makeQueries(*nq)
	var out strings.Builder
	fmt.Fprintf(&out, "### 1. search/<q>/ vs grep -rl on the native source\n\n%d queries of 1-4 words (%s, …); search = open+readdir of MNT/search/<q>/ (default k=10, ranked); grep = `grep -rl w SRC` or `grep -rlE 'a|b' SRC` (page cache warm) on the first queries until %s is spent; ratios on those same queries. Times in ms.\n\n", len(queries), strings.Join(queries[:4], " / "), *budget)
	out.WriteString("| memories | import | index ready after | search p50 | search p95 | search max | empty results | grep queries | search p50/p95 (same) | grep p50 | grep p95 | grep/search p50 | grep/search p95 | VmRSS idle → after queries |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var slow, rest strings.Builder
	for _, s := range strings.Split(*scalesF, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		check(err)
		src, data := filepath.Join(*work, fmt.Sprintf("src-%d", n)), filepath.Join(*work, fmt.Sprintf("data-%d", n))
		sub := ""
		if n == *detail {
			sub = filepath.Join(*work, "src-user")
		}
		t := time.Now()
		files, nsub := generate(n, src, sub, users[0])
		logf("%d: generated %d files in %.1f s", n, len(files), time.Since(t).Seconds())
		t = time.Now()
		if o, err := exec.Command(*bin, "import", src, "--to", "/episodic/bulk", "--data", data).CombinedOutput(); err != nil {
			fatal(fmt.Errorf("import: %v\n%s", err, o))
		}
		imp := time.Since(t)
		logf("%d: imported in %.1f s", n, imp.Seconds())
		mount(data)
		t = time.Now()
		first, _ := search(queries[0])
		ready := time.Since(t)
		logf("%d: first search returned after %.1f s (%v for the search itself after warm-up)", n, ready.Seconds(), first)
		rssIdle := rss()
		var sl []time.Duration
		empty := 0
		for _, q := range queries {
			d, k := search(q)
			sl = append(sl, d)
			if k == 0 {
				empty++
			}
		}
		rssQ := rss()
		var gl []time.Duration
		var gm []int
		gt := time.Now()
		for _, q := range queries {
			if time.Since(gt) > *budget {
				break
			}
			d, m := grep(src, q)
			gl, gm = append(gl, d), append(gm, m)
		}
		same := sl[:len(gl)]
		fmt.Fprintf(&out, "| %d | %.1f s (%.0f/s) | %.1f s | %s | %s | %s | %d | %d | %s / %s | %s | %s | %.0f× | %.0f× | %s → %s |\n",
			n, imp.Seconds(), float64(n)/imp.Seconds(), ready.Seconds(), msS(pct(sl, 50)), msS(pct(sl, 95)), msS(pct(sl, 100)), empty,
			len(gl), msS(pct(same, 50)), msS(pct(same, 95)), msS(pct(gl, 50)), msS(pct(gl, 95)),
			ms(pct(gl, 50))/ms(pct(same, 50)), ms(pct(gl, 95))/ms(pct(same, 95)), rssIdle, rssQ)
		idx := make([]int, len(sl))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int { return int(sl[b] - sl[a]) })
		fmt.Fprintf(&slow, "| %d | ", n)
		for _, i := range idx[:min(5, len(idx))] {
			g := "-"
			if i < len(gl) {
				g = fmt.Sprintf("grep %s ms, %d files", msS(gl[i]), gm[i])
			}
			fmt.Fprintf(&slow, "`%s` %s ms (%s); ", queries[i], msS(sl[i]), g)
		}
		slow.WriteString("|\n")
		if n == *detail {
			findGrep(&rest, src, sub, nsub)
			writes(&rest)
		}
		stopMount()
		check(os.RemoveAll(src))
		check(os.RemoveAll(data))
		if sub != "" {
			check(os.RemoveAll(sub))
		}
	}
	out.WriteString("\nSlowest searches per scale (search time; grep time and matching files where grep ran):\n\n| memories | slowest 5 |\n|---|---|\n")
	out.WriteString(slow.String())
	out.WriteString(rest.String())
	fmt.Print(out.String())
}

// generate writes n memories under dir (500 per day directory) and copies
// those of user into sub, if set. It returns the relative paths and how
// many went to sub.
func generate(n int, dir, sub, user string) ([]string, int) {
	var paths []string
	nsub := 0
	base := time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		r := rand.New(rand.NewPCG(1, uint64(i)))
		day := base.AddDate(0, 0, i/500)
		u := users[r.IntN(len(users))]
		rel := filepath.Join(day.Format("2006-01-02"), fmt.Sprintf("%06d-%s-%s.md", i, words[nFunc+r.IntN(len(words)-nFunc)], words[nFunc+r.IntN(len(words)-nFunc)]))
		b := memoryText(r, i, u, day.Add(time.Duration(i%500)*time.Minute), "")
		for _, d := range []string{dir, sub} {
			if d == "" || d == sub && u != user {
				continue
			}
			if i%500 == 0 || d == sub {
				check(os.MkdirAll(filepath.Join(d, filepath.Dir(rel)), 0o755))
			}
			check(os.WriteFile(filepath.Join(d, rel), b, 0o644))
		}
		if sub != "" && u == user {
			nsub++
		}
		paths = append(paths, rel)
	}
	return paths, nsub
}

// memoryText is one ~0.8-1.3 KiB Markdown memory; extra is added to its body.
func memoryText(r *rand.Rand, i int, user string, created time.Time, extra string) []byte {
	z := rand.NewZipf(r, 1.07, 2, uint64(len(words)-1))
	var b strings.Builder
	fmt.Fprintf(&b, "---\nid: mem-%06d\ntype: %s\nuser: %s\ntags: [%s, %s]\nimportance: %.2f\ncreated: %s\n---\n# ",
		i, types[r.IntN(len(types))], user, topics[r.IntN(len(topics))], words[nFunc+r.IntN(len(words)-nFunc)],
		r.Float64(), created.Format(time.RFC3339))
	sentence(&b, r, z, 3+r.IntN(4), "\n\n")
	size := 800 + r.IntN(500)
	for b.Len() < size {
		if r.IntN(6) == 0 {
			b.WriteString("- ")
			sentence(&b, r, z, 4+r.IntN(6), "\n")
			continue
		}
		sentence(&b, r, z, 6+r.IntN(14), ". ")
		if r.IntN(4) == 0 {
			b.WriteString("\n\n")
		}
	}
	b.WriteString(extra)
	b.WriteString("\n")
	return []byte(b.String())
}

func sentence(b *strings.Builder, r *rand.Rand, z *rand.Zipf, n int, end string) {
	for j := 0; j < n; j++ {
		var w string
		switch p := r.IntN(100); {
		case p < 3:
			w = names[r.IntN(len(names))]
		case p < 5:
			w = topics[r.IntN(len(topics))]
		case p < 6:
			w = fmt.Sprintf("%s-%d", []string{"INC", "PR", "JIRA", "ticket"}[r.IntN(4)], r.IntN(100000))
		default:
			w = words[z.Uint64()]
			if j == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
		}
		if j > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	b.WriteString(end)
}

// makeQueries draws n queries of 1-4 words: content words (uniformly, so
// both frequent and rare ones), names and topics.
func makeQueries(n int) []string {
	r := rand.New(rand.NewPCG(7, 7))
	var qs []string
	for range n {
		k := []int{1, 1, 1, 2, 2, 2, 2, 3, 3, 4}[r.IntN(10)]
		var q []string
		for range k {
			switch p := r.IntN(10); {
			case p < 2:
				q = append(q, names[r.IntN(len(names))])
			case p < 3:
				q = append(q, topics[r.IntN(len(topics))])
			default:
				q = append(q, words[nFunc+r.IntN(len(words)-nFunc)])
			}
		}
		qs = append(qs, strings.Join(q, " "))
	}
	return qs
}

// search lists MNT/search/<q>/ and returns the time and the result count.
func search(q string) (time.Duration, int) {
	t := time.Now()
	es, err := os.ReadDir(filepath.Join(mnt, "search", q))
	d := time.Since(t)
	if err != nil {
		fatal(fmt.Errorf("search %q: %v", q, err))
	}
	return d, len(es) - 1 // without .results
}

// grep runs grep -rl over dir for q's words and returns the time and the
// number of matching files.
func grep(dir, q string) (time.Duration, int) {
	w := strings.Fields(q)
	args := []string{"-rl", w[0], dir}
	if len(w) > 1 {
		args = []string{"-rlE", strings.Join(w, "|"), dir}
	}
	return timed("grep", args...)
}

// timed runs a command and returns its wall time and stdout line count.
func timed(name string, args ...string) (time.Duration, int) {
	c := exec.Command(name, args...)
	out, err := c.StdoutPipe()
	check(err)
	t := time.Now()
	check(c.Start())
	sc := bufio.NewScanner(out)
	lines := 0
	for sc.Scan() {
		lines++
	}
	err = c.Wait()
	d := time.Since(t)
	if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 1 && name == "grep") {
		fatal(fmt.Errorf("%s %v: %v", name, args, err))
	}
	return d, lines
}

// findGrep is section 3: find and grep -r over views vs native copies.
func findGrep(out *strings.Builder, src, sub string, nsub int) {
	word := words[nFunc+40] // a common content word
	fmt.Fprintf(out, "\n### 3. find / grep -r at %d memories: mnemofs vs native (same files)\n\n", *detail)
	fmt.Fprintf(out, "Median of %d runs, ms. Cold: `sync; echo 3 > /proc/sys/vm/drop_caches` before each run (kernel caches only; the mount's own caches stay warm). Warm: after one untimed run. Native copies are on the same disk. Word: `%s`. by-user/%s holds %d memories.\n\n", *runs, word, users[0], nsub)
	out.WriteString("| command | mnemofs cold | native cold | mnemofs warm | native warm | warm ratio | lines (mnemofs / native) |\n|---|---|---|---|---|---|---|\n")
	view := filepath.Join(mnt, "by-user", users[0])
	epi := filepath.Join(mnt, "episodic")
	for _, c := range []struct{ label, m, n string }{
		{"find by-user/" + users[0] + " -type f", view, sub},
		{"grep -rl " + word + " by-user/" + users[0], view, sub},
		{"find episodic -type f", epi, src},
		{"grep -rl " + word + " episodic", epi, src},
	} {
		cmd := func(dir string) (string, []string) {
			if strings.HasPrefix(c.label, "find") {
				return "find", []string{dir, "-type", "f"}
			}
			return "grep", []string{"-rl", word, dir}
		}
		var cell []string
		var lines [2]int
		var warm [2]float64
		for _, cold := range []bool{true, false} {
			for k, dir := range []string{c.m, c.n} {
				name, args := cmd(dir)
				if !cold {
					timed(name, args...)
				}
				var ds []time.Duration
				for range *runs {
					if cold {
						syscall.Sync()
						check(os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0))
					}
					d, l := timed(name, args...)
					ds, lines[k] = append(ds, d), l
				}
				cell = append(cell, msS(pct(ds, 50)))
				if !cold {
					warm[k] = ms(pct(ds, 50))
				}
			}
		}
		fmt.Fprintf(out, "| `%s` | %s | %s | %s | %s | %.1f× | %d / %d |\n", c.label, cell[0], cell[1], cell[2], cell[3], warm[0]/warm[1], lines[0], lines[1])
		logf("find/grep: %s done", c.label)
	}
}

// writes is section 2: create+write+close through the mount vs native,
// then the time until a search finds all of them.
func writes(out *strings.Builder) {
	cpu0 := cpuTime()
	md, nd := filepath.Join(mnt, "episodic", "new"), filepath.Join(*work, "native-writes")
	check(os.Mkdir(md, 0o755))
	check(os.MkdirAll(nd, 0o755))
	var bodies [][]byte
	for i := range *nw {
		r := rand.New(rand.NewPCG(2, uint64(i)))
		tok := fmt.Sprintf("Batch marker wombatquill, own marker qx%s.", letters(i))
		bodies = append(bodies, memoryText(r, 900000+i, users[i%len(users)], time.Now(), tok))
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
	t := time.Now()
	polls, found := 0, 0
	for found < *nw && time.Since(t) < time.Minute {
		_, found = search(fmt.Sprintf("wombatquill k:%d", *nw))
		polls++
	}
	searchable := time.Since(t)
	cpu := cpuTime() - cpu0
	ok := 0
	for _, i := range []int{0, *nw / 3, *nw / 2, *nw - 1} {
		es, err := os.ReadDir(filepath.Join(mnt, "search", "qx"+letters(i)))
		logf("DEBUG %s %v %v", letters(i), es, err)
		if err == nil && len(es) == 2 && slices.ContainsFunc(es, func(e os.DirEntry) bool { return e.Name() == fmt.Sprintf("01-new-%04d.md", i) }) {
			ok++
		}
	}
	nt, nl := put(nd)
	check(os.RemoveAll(nd))
	fmt.Fprintf(out, "\n### 2. Index cost per write at %d memories\n\n%d memories of ~1 KiB, each create+write+close (os.WriteFile), into MNT/episodic/new/ vs a native directory on the same disk (no fsync in either).\n\n", *detail, *nw)
	out.WriteString("| target | total | per write (mean) | p50 | p95 |\n|---|---|---|---|---|\n")
	for _, r := range []struct {
		n  string
		t  time.Duration
		ls []time.Duration
	}{{"mnemofs", mt, ml}, {"native", nt, nl}} {
		fmt.Fprintf(out, "| %s | %.0f ms | %.0f µs | %.0f µs | %.0f µs |\n", r.n, ms(r.t), float64(r.t.Microseconds())/float64(*nw), us(pct(r.ls, 50)), us(pct(r.ls, 95)))
	}
	fmt.Fprintf(out, "\nAfter the last close, `search/wombatquill k:%d/` listed **%d of %d** after %.0f ms (%d searches); per-file unique tokens found at rank 1: %d of 4. Mount CPU (user+sys) for writes + indexing: %.0f ms, %.0f µs per write (10 ms tick resolution). VmRSS after: %s.\n\n",
		*nw, found, *nw, ms(searchable), polls, ok, ms(cpu), float64(cpu.Microseconds())/float64(*nw), rss())
	var st struct {
		Latency map[string]struct {
			Count  uint64  `json:"count"`
			MeanUS float64 `json:"mean_us"`
			P50US  uint64  `json:"p50_us"`
			P95US  uint64  `json:"p95_us"`
			P99US  uint64  `json:"p99_us"`
		} `json:"latency"`
	}
	b, err := os.ReadFile(filepath.Join(mnt, "meta", "stats.json"))
	check(err)
	check(json.Unmarshal(b, &st))
	out.WriteString("meta/stats.json latency (handler-side, since mount; includes section 1 and 3 traffic for lookup/readdir/search):\n\n| op | count | p50 µs | p95 µs | p99 µs | mean µs |\n|---|---|---|---|---|---|\n")
	for _, k := range []string{"create", "write", "flush", "release", "search"} {
		if l, ok := st.Latency[k]; ok {
			fmt.Fprintf(out, "| %s | %d | %d | %d | %d | %.0f |\n", k, l.Count, l.P50US, l.P95US, l.P99US, l.MeanUS)
		}
	}
	logf("writes: done")
}

// letters spells i in a-z, so the tokenizer keeps it one word.
func letters(i int) string {
	s := ""
	for range 4 {
		s = string(rune('a'+i%26)) + s
		i /= 26
	}
	return s
}

var mountCmd *exec.Cmd

func mount(data string) {
	mountCmd = exec.Command(*bin, "mount", "--data", data, mnt)
	out, err := mountCmd.StdoutPipe()
	check(err)
	if *verbose {
		mountCmd.Stderr = os.Stderr
	}
	check(mountCmd.Start())
	check(os.WriteFile(filepath.Join(*work, "mount.pid"), []byte(strconv.Itoa(mountCmd.Process.Pid)), 0o644))
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "mnemofs: mounted") {
			go func() {
				for sc.Scan() {
				}
			}()
			return
		}
	}
	err = mountCmd.Wait()
	mountCmd = nil
	fatal(fmt.Errorf("mnemofs mount exited without its ready line: %v", err))
}

func stopMount() {
	c := mountCmd
	if c == nil {
		return
	}
	mountCmd = nil
	if exec.Command(*bin, "unmount", mnt).Run() != nil {
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
	os.Remove(filepath.Join(*work, "mount.pid"))
}

// rss is the mount process's VmRSS.
func rss() string {
	if mountCmd == nil {
		return "?"
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", mountCmd.Process.Pid))
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return fmt.Sprintf("%.0f MiB", float64(kb)/1024)
		}
	}
	return "?"
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

// pct is the p-th percentile (nearest rank) of ds.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max(0, (len(s)*p+99)/100-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
func msS(d time.Duration) string { return strconv.FormatFloat(ms(d), 'f', 2, 64) }
func logf(f string, a ...any)    { fmt.Fprintf(os.Stderr, "searchbench: "+f+"\n", a...) }
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
