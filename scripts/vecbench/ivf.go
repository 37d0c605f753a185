package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mnemofs/mnemofs/search"
)

// ivfBench is -ivf: approximate against exact search at each scale.
func ivfBench() {
	fmt.Printf("Vector search, approximate (IVF) against exact, dim %d, k %d, %d queries, vectors around %d centres (noise %.2f of a centre's spread).\n\n",
		*dim, *k, *nq, *nclust, *noise)
	fmt.Println("| vectors | lists filed after | IVF p50 | IVF p95 | exact p50 | exact p95 | recall@k vs exact |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, f := range strings.Split(*scalesF, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "vecbench: bad scale %q\n", f)
			os.Exit(2)
		}
		r := rand.New(rand.NewPCG(2, uint64(n)))
		centres := make([][]float32, *nclust)
		for i := range centres {
			centres[i] = randVec(r, *dim)
		}
		near := func() []float32 {
			c := centres[r.IntN(len(centres))]
			x := randVec(r, *dim)
			for j := range x {
				x[j] = c[j] + float32(*noise)*x[j]
			}
			return x
		}
		v := search.NewVectors(*dim)
		t0 := time.Now()
		for i := range n {
			check(v.Put(uint64(i+1), [][]float32{near()}))
		}
		for n >= search.ApproxRows() && !v.Approximate() && time.Since(t0) < 10*time.Minute {
			time.Sleep(20 * time.Millisecond)
		}
		filed := time.Since(t0)
		queries := make([][]float32, *nq)
		for i := range queries {
			queries[i] = near()
		}
		var approx, exact []time.Duration
		var found, want int
		for _, q := range queries {
			t := time.Now()
			a := v.Search(q, *k, nil)
			approx = append(approx, time.Since(t))
			t = time.Now()
			e := v.SearchExact(q, *k, nil)
			exact = append(exact, time.Since(t))
			in := map[uint64]bool{}
			for _, h := range a {
				in[h.Ino] = true
			}
			for _, h := range e {
				want++
				if in[h.Ino] {
					found++
				}
			}
		}
		fmt.Printf("| %d | %.1f s (Put included) | %s | %s | %s | %s | %.3f |\n", n, filed.Seconds(),
			ms(pct(approx, 50)), ms(pct(approx, 95)), ms(pct(exact, 50)), ms(pct(exact, 95)), float64(found)/float64(want))
	}
}
