package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"testing"
	"time"

	idx "github.com/mnemofs/mnemofs/search"
)

// BenchmarkIndexQueries is the lexical index alone, without a mount: the
// memories scripts/searchbench generates, MNEMOFS_BENCH_N of them
// (100000), put into one index in process, then its queries
// (MNEMOFS_BENCH_QUERIES of them, 200; with their expansions, as a
// search/ directory asks them) one after the other. It
// prints the build time and the latency percentiles to stderr:
//
//	MNEMOFS_BENCH_N=1000000 go test -run - -bench IndexQueries -benchtime 1000x ./scripts/searchbench
func BenchmarkIndexQueries(b *testing.B) {
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("MNEMOFS_BENCH_N")); err == nil {
		n = v
	}
	x := benchIndex(n)
	nq := 200
	if v, err := strconv.Atoi(os.Getenv("MNEMOFS_BENCH_QUERIES")); err == nil {
		nq = v
	}
	qs := makeQueries(nq)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := qs[i%len(qs)]
		t := time.Now()
		x.Search(idx.Tokens(q), idx.Options{K: 10, Neighbours: 0.5, Extra: idx.Expand(q, &idx.DefaultTuning)})
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	sort.Slice(lat, func(a, c int) bool { return lat[a] < lat[c] })
	fmt.Fprintf(os.Stderr, "index of %d: %d queries, p50 %v p95 %v max %v\n", n, len(lat),
		lat[len(lat)/2], lat[len(lat)*95/100], lat[len(lat)-1])
}

var benchIndexes = map[int]*idx.Index{}

// benchIndex builds (once) an index of n generated memories, each a
// document of its day's directory, its user as its metadata, and asks one
// query so that the groups are sorted and WordNet is read.
func benchIndex(n int) *idx.Index {
	if x := benchIndexes[n]; x != nil {
		return x
	}
	x := idx.NewIndex()
	base := time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC)
	t0 := time.Now()
	for i := range n {
		r := rand.New(rand.NewPCG(1, uint64(i)))
		day := base.AddDate(0, 0, i/500)
		u := users[r.IntN(len(users))]
		name := fmt.Sprintf("%06d-%s-%s.md", i, content(r), content(r))
		text := string(memoryText(r, i, u, day.Add(time.Duration(i%500)*time.Minute), ""))
		x.Put(uint64(i+2), []idx.Part{{Text: text, Meta: u}}, uint64(1+i/500), name)
	}
	x.Search(idx.Tokens("warm up"), idx.Options{K: 10, Neighbours: 0.5, Extra: idx.Expand("warm up", &idx.DefaultTuning)})
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(os.Stderr, "index of %d built in %v, %d MiB live heap\n", n, time.Since(t0).Round(time.Millisecond), ms.HeapAlloc>>20)
	benchIndexes[n] = x
	return x
}
