// Command vecbench measures the vector index of package search: search
// latency p50/p95 over -queries random queries at each of -scales
// memories (one random unit vector of -dim values each, k = 10), with one
// thread (GOMAXPROCS=1) and all, next to the memory-bandwidth floor
// measured in the same run: the time to read as many bytes as the index's
// slab holds (bytes.IndexByte over a buffer of that size, which scans with
// the widest vector loads the CPU has), with one thread and all. It also reports the cost
// of Put (new memories, replacing) and Remove. Markdown goes to stdout.
//
//	go run ./scripts/vecbench [-scales 10000,100000] [-queries 200]
//	go run -tags purego ./scripts/vecbench   # the pure-Go kernel
//
// With -ivf it measures the approximate index instead (search/ivf.go): at
// each scale, vectors clustered around -clusters centres (as embeddings
// of related texts are; uniform random vectors have no neighbours to
// find), the time until the lists are filed, the search latency of the
// approximate and the exact search on the same index, and the recall@k of
// the approximate search against the exact one.
//
//	go run ./scripts/vecbench -ivf -scales 300000,1000000
//
// scripts/bench-vector.sh runs both.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mnemofs/mnemofs/search"
)

var (
	scalesF = flag.String("scales", "10000,100000", "index sizes (vectors)")
	nq      = flag.Int("queries", 200, "queries per scale and thread count")
	dim     = flag.Int("dim", 384, "dimension")
	k       = flag.Int("k", 10, "results per query")
	ivfMode = flag.Bool("ivf", false, "measure the approximate index against exact search, on clustered vectors")
	nclust  = flag.Int("clusters", 1000, "with -ivf: centres the vectors gather around")
	noise   = flag.Float64("noise", 1, "with -ivf: a vector's spread around its centre, as a share of the centres' own")
)

func main() {
	flag.Parse()
	if *ivfMode {
		ivfBench()
		return
	}
	all := runtime.GOMAXPROCS(0)
	fmt.Printf("Vector search, dim %d, k %d, %d queries; GOMAXPROCS %d; %s/%s, %s.\n\n",
		*dim, *k, *nq, all, runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Println("| vectors | slab MiB | threads | search p50 | search p95 | floor p50 | p50/floor | GB/s at p50 |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	var costs []string
	for _, f := range strings.Split(*scalesF, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "vecbench: bad scale %q\n", f)
			os.Exit(2)
		}
		r := rand.New(rand.NewPCG(1, uint64(n)))
		v := search.NewVectors(*dim)
		vecs := make([][]float32, n)
		for i := range vecs {
			vecs[i] = randVec(r, *dim)
		}
		t0 := time.Now()
		for i, x := range vecs {
			check(v.Put(uint64(i+1), [][]float32{x}))
		}
		put := time.Since(t0) / time.Duration(n)
		size := n * *dim * 4
		buf := bytes.Repeat([]byte{2}, size) // written: no shared zero pages
		queries := make([][]float32, *nq)
		for i := range queries {
			queries[i] = randVec(r, *dim)
		}
		for _, threads := range slices.Compact([]int{1, all}) {
			runtime.GOMAXPROCS(threads)
			for _, q := range queries[:min(20, len(queries))] { // warm up
				v.Search(q, *k, nil)
			}
			// A floor measurement after each query: both see the same
			// machine (other work on it shifts them together).
			lat, floor := make([]time.Duration, len(queries)), make([]time.Duration, len(queries))
			for i, q := range queries {
				t := time.Now()
				v.Search(q, *k, nil)
				lat[i] = time.Since(t)
				t = time.Now()
				stream(buf, threads)
				floor[i] = time.Since(t)
			}
			p50, p95, f50 := pct(lat, 50), pct(lat, 95), pct(floor, 50)
			fmt.Printf("| %d | %.0f | %d | %s | %s | %s | %.2f | %.1f |\n", n, float64(size)/(1<<20), threads,
				ms(p50), ms(p95), ms(f50), float64(p50)/float64(f50), float64(size)/p50.Seconds()/1e9)
		}
		runtime.GOMAXPROCS(all)
		// Replacing every memory once (a swap-remove and an append each),
		// then removing them all in a random order.
		t0 = time.Now()
		for i, x := range vecs {
			check(v.Put(uint64(i+1), [][]float32{x}))
		}
		replace := time.Since(t0) / time.Duration(n)
		order := r.Perm(n)
		t0 = time.Now()
		for _, i := range order {
			v.Remove(uint64(i + 1))
		}
		remove := time.Since(t0) / time.Duration(n)
		costs = append(costs, fmt.Sprintf("| %d | %s | %s | %s |", n, us(put), us(replace), us(remove)))
	}
	fmt.Println()
	fmt.Println("| vectors | Put (new) | Put (replace) | Remove |")
	fmt.Println("|---|---|---|---|")
	for _, c := range costs {
		fmt.Println(c)
	}
}

func randVec(r *rand.Rand, d int) []float32 {
	x := make([]float32, d)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// sink keeps the scans from being optimised away.
var sink atomic.Int64

// stream reads buf with the given number of goroutines, each scanning its
// share with bytes.IndexByte for a byte it does not hold: the runtime's
// vector loop (AVX2 on amd64), a pure read stream.
func stream(buf []byte, threads int) {
	found := make([]int, threads*8)
	var wg sync.WaitGroup
	for t := range threads {
		part := buf[t*len(buf)/threads : (t+1)*len(buf)/threads]
		wg.Go(func() { found[t*8] = bytes.IndexByte(part, 1) })
	}
	wg.Wait()
	for _, f := range found {
		sink.Add(int64(f))
	}
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }
func us(d time.Duration) string { return fmt.Sprintf("%.2f µs", float64(d)/1e3) }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "vecbench:", err)
		os.Exit(1)
	}
}
