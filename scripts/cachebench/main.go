// Command cachebench measures the hot-memory caches (mount --cache-size):
// read latency cold and warm, with the caches off and on, at two layers,
// and the effect of the query-result cache on repeated searches.
//
//  1. store.ReadAt of whole files, in process: the layer the content cache
//     sits in. The 1st read is the first of each file after the store is
//     opened (content cache empty, Badger's caches empty, the page cache
//     dropped when run as root); the 2nd read is the one that fills the
//     cache (a file is admitted on its second read); warm is -passes more
//     passes. Files of three sizes: ~1 KiB memories (KV chunks), 64 KiB
//     and 200 KiB (blob files).
//  2. The same files through a real FUSE mount: open, posix_fadvise
//     DONTNEED (so the kernel's page cache does not answer: the fusefs
//     keeps pages across opens), read all, close; the same three columns,
//     the first right after the content cache is dropped.
//  3. Search: the same -queries queries -repeat times each, through
//     views.Engine.Search and through a readdir of MNT/search/<q>/ (which
//     always searches again); "first" is each query's first run, "repeat"
//     the others.
//
// Hit rates are the cache's counters over each section. Markdown goes to
// stdout; scripts/bench-cache.sh runs it on a disk-backed scratch dir.
//
//	go run ./scripts/cachebench -work /var/tmp/cb [-small 2000 -medium 200 -large 50]
package main

import (
	"cmp"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/cache"
	"github.com/mnemofs/mnemofs/fusefs"
	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

var (
	work    = flag.String("work", "", "scratch directory on disk (required)")
	nSmall  = flag.Int("small", 2000, "~1 KiB files")
	nMedium = flag.Int("medium", 200, "64 KiB files")
	nLarge  = flag.Int("large", 50, "200 KiB files")
	passes  = flag.Int("passes", 3, "warm passes")
	nq      = flag.Int("queries", 50, "distinct search queries")
	repeat  = flag.Int("repeat", 20, "runs of each query")
	size    = flag.Int64("cache-size", cache.DefaultBytes, "--cache-size of the 'on' runs")
)

type class struct {
	name  string
	files []string // store paths
	inos  []uint64
}

func main() {
	flag.Parse()
	if *work == "" {
		log.Fatal("cachebench: -work is required")
	}
	data := filepath.Join(*work, "data")
	classes := generate(data)
	dropped := "page cache dropped before cold runs"
	if !dropPageCache() {
		dropped = "page cache NOT dropped (not root?)"
	}
	fmt.Printf("Files: %d × ~1 KiB, %d × 64 KiB, %d × 200 KiB; warm = %d passes; %d queries × %d runs; caches on = --cache-size %d MiB; %s.\n\n",
		*nSmall, *nMedium, *nLarge, *passes, *nq, *repeat, *size>>20, dropped)
	type row struct{ layer, class, mode, cold, second, warm, hit string }
	var rows []row
	var qrows []row
	for _, on := range []bool{false, true} {
		mode := map[bool]string{false: "off", true: "on"}[on]
		env := open(data, on)
		for _, c := range classes {
			c.resolve(env.st)
		}
		// 1. store.ReadAt
		dropPageCache()
		for _, c := range classes {
			h0 := env.st.CacheStats()["content"]
			read := func(i int) { storeRead(env.st, c.inos[i]) }
			cold, second := readAll(c, read), readAll(c, read)
			warm := warmPasses(c, read)
			rows = append(rows, row{"store.ReadAt", c.name, mode, lat(cold), lat(second), lat(warm), hitRate(h0, env.st.CacheStats()["content"])})
		}
		// 2. through the mount
		mnt := filepath.Join(*work, "mnt")
		check(os.MkdirAll(mnt, 0o755))
		srv, err := fusefs.Mount(mnt, env.st, env.n, fusefs.Config{DataDir: data, Views: env.eng})
		check(err)
		env.eng.Ready()
		env.st.DropCache() // the index build read every file
		dropPageCache()
		for _, c := range classes {
			h0 := env.st.CacheStats()["content"]
			read := func(i int) { mountRead(filepath.Join(mnt, c.files[i])) }
			cold, second := readAll(c, read), readAll(c, read)
			warm := warmPasses(c, read)
			rows = append(rows, row{"mount (open+fadvise+read)", c.name, mode, lat(cold), lat(second), lat(warm), hitRate(h0, env.st.CacheStats()["content"])})
		}
		// 3. search (each way its own queries)
		for k, via := range []string{"Engine.Search", "readdir search/<q>/"} {
			queries := makeQueries(uint64(k))
			q0 := env.eng.CacheStats()
			var first, again []time.Duration
			for _, q := range queries {
				pq, err := views.ParseQuery(q)
				check(err)
				for r := 0; r < *repeat; r++ {
					t0 := time.Now()
					if via == "Engine.Search" {
						env.eng.Search(pq, views.Filter{})
					} else {
						_, err := os.ReadDir(filepath.Join(mnt, "search", q))
						check(err)
					}
					d := time.Since(t0)
					if r == 0 {
						first = append(first, d)
					} else {
						again = append(again, d)
					}
				}
			}
			qrows = append(qrows, row{via, "", mode, lat(first), "", lat(again), hitRate(q0, env.eng.CacheStats())})
		}
		check(srv.Unmount())
		srv.Wait()
		env.close()
	}
	fmt.Println("| layer | files | caches | 1st read p50 / p95 | 2nd read p50 / p95 | warm p50 / p95 | content hit rate |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", r.layer, r.class, r.mode, r.cold, r.second, r.warm, r.hit)
	}
	fmt.Println()
	fmt.Println("| search via | caches | first run p50 / p95 | repeats p50 / p95 | query hit rate |")
	fmt.Println("|---|---|---|---|---|")
	for _, r := range qrows {
		fmt.Printf("| %s | %s | %s | %s | %s |\n", r.layer, r.mode, r.cold, r.warm, r.hit)
	}
}

type env struct {
	kv  backend.KV
	st  *store.Store
	eng *views.Engine
	n   *fusefs.Notifier
}

// open opens the store in data with the caches on or off, its index built
// in the background.
func open(data string, on bool) *env {
	kv, err := backend.OpenBadger(filepath.Join(data, "db"), backend.Options{})
	check(err)
	content, queries := cache.Split(*size)
	if !on {
		content, queries = -1, 0
	}
	e := &env{kv: kv, eng: views.NewEngine(nil), n: fusefs.NewNotifier()}
	e.eng.SetCacheBytes(queries)
	e.st, err = store.Open(kv, store.Options{BlobDir: filepath.Join(data, "blobs"), CacheBytes: content,
		OnChange: e.eng.Handle, Notify: e.n, Reserved: fusefs.ReservedNames()})
	check(err)
	e.eng.Start(e.st)
	e.eng.Ready()    // the index build runs alone, not during the timings
	e.st.DropCache() // and what it read is not hot
	return e
}

func (e *env) close() {
	e.eng.Stop()
	check(e.st.Close())
	check(e.kv.Close())
}

func (c *class) resolve(st *store.Store) {
	c.inos = c.inos[:0]
	for _, p := range c.files {
		ino, err := st.Resolve(p)
		check(err)
		c.inos = append(c.inos, ino)
	}
}

var buf = make([]byte, 256<<10)

func storeRead(st *store.Store, ino uint64) {
	if _, err := st.ReadAt(ino, buf, 0); err != nil {
		log.Fatal(err)
	}
}

func mountRead(p string) {
	f, err := os.Open(p)
	check(err)
	check(unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED))
	for {
		n, err := f.Read(buf)
		if n == 0 || err != nil {
			break
		}
	}
	f.Close()
}

// readAll times fn on every file once, in a shuffled order.
func readAll(c *class, fn func(int)) []time.Duration {
	order := rand.New(rand.NewPCG(7, uint64(len(c.files)))).Perm(len(c.files))
	out := make([]time.Duration, 0, len(order))
	for _, i := range order {
		t0 := time.Now()
		fn(i)
		out = append(out, time.Since(t0))
	}
	return out
}

func warmPasses(c *class, fn func(int)) []time.Duration {
	var out []time.Duration
	for range *passes {
		out = append(out, readAll(c, fn)...)
	}
	return out
}

func lat(ds []time.Duration) string {
	return fmt.Sprintf("%s / %s", us(pct(ds, 50)), us(pct(ds, 95)))
}

func us(d time.Duration) string {
	if d >= time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.1f µs", float64(d)/1e3)
}

// pct is the p-th percentile (nearest rank) of xs.
func pct[T cmp.Ordered](xs []T, p int) T {
	s := slices.Sorted(slices.Values(xs))
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

func hitRate(a, b cache.Stats) string {
	h, m := b.Hits-a.Hits, b.Misses-a.Misses
	if h+m == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%% (%d/%d)", 100*float64(h)/float64(h+m), h, h+m)
}

// dropPageCache drops the kernel's page cache (root only) and reports
// whether it could.
func dropPageCache() bool {
	unix.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0) == nil
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
