package search

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// Benchmarks of the vector index at 384 dimensions (all-MiniLM-L6-v2),
// one chunk a memory. scripts/bench-vector.sh prints latency percentiles
// next to the memory-bandwidth floor.

const benchDim = 384

// benchVectors returns an index of n random unit vectors.
func benchVectors(b testing.TB, n int) *Vectors {
	b.Helper()
	r := rand.New(rand.NewPCG(1, uint64(n)))
	v := NewVectors(benchDim)
	for i := range n {
		if err := v.Put(uint64(i+1), [][]float32{randVec(r, benchDim)}); err != nil {
			b.Fatal(err)
		}
	}
	return v
}

func BenchmarkVectorSearch(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		v := benchVectors(b, n)
		q := randVec(rand.New(rand.NewPCG(2, 3)), benchDim)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(n * benchDim * 4))
			for b.Loop() {
				v.Search(q, 10, nil)
			}
		})
		b.Run(fmt.Sprintf("n=%d/filter", n), func(b *testing.B) {
			b.SetBytes(int64(n * benchDim * 4))
			for b.Loop() {
				v.Search(q, 10, func(ino uint64) bool { return ino%10 == 0 })
			}
		})
	}
}

// BenchmarkDot is the kernel alone over a 10k-row slab (in the cache):
// its speed without the wait for memory.
func BenchmarkDot(b *testing.B) {
	const rows = 10000
	r := rand.New(rand.NewPCG(4, 5))
	q, slab, out := randVec(r, benchDim), make([]float32, rows*benchDim), make([]float32, rows)
	for i := range slab {
		slab[i] = float32(r.NormFloat64())
	}
	for _, k := range dotKernels() {
		b.Run(k.name, func(b *testing.B) {
			b.SetBytes(int64(len(slab) * 4))
			for b.Loop() {
				k.fn(q, slab, out)
			}
		})
	}
}

// BenchmarkStream reads as many bytes as a 100k index's slab holds with
// bytes.IndexByte (the runtime's vector loop): the floor a search pass
// cannot beat.
func BenchmarkStream(b *testing.B) {
	buf := bytes.Repeat([]byte{2}, 100000*benchDim*4)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if bytes.IndexByte(buf, 1) >= 0 {
			b.Fatal("found")
		}
	}
}

func BenchmarkVectorPut(b *testing.B) {
	v := benchVectors(b, 100000)
	r := rand.New(rand.NewPCG(6, 7))
	vecs := [][]float32{randVec(r, benchDim)}
	i := 0
	for b.Loop() {
		// Replaces a memory: a swap-remove and an append.
		if err := v.Put(uint64(i%100000+1), vecs); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkVectorRemove(b *testing.B) {
	v := benchVectors(b, 100000)
	i := 0
	for b.Loop() {
		if i == 100000 {
			b.StopTimer()
			v, i = benchVectors(b, 100000), 0
			b.StartTimer()
		}
		// Removes memories in inode order: rows from all over the slab.
		v.Remove(uint64(i + 1))
		i++
	}
}
