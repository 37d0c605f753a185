package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/store"
)

var syllables = []string{"ka", "lo", "mi", "ra", "tu", "ne", "so", "vi", "da", "pe", "zu", "ga", "ri", "mo", "ve", "shi"}

// vocab is 3000 made-up words, ranked: word k is drawn with Zipf weight.
var vocab = func() []string {
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	var out []string
	for len(out) < 3000 {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syllables[r.IntN(len(syllables))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}()

// text is about n bytes of memory text: front matter, then Zipf words.
func text(r *rand.Rand, i, n int) []byte {
	z := rand.NewZipf(r, 1.2, 2, uint64(len(vocab)-1))
	var b strings.Builder
	fmt.Fprintf(&b, "---\nuser: u%d\ntags: [bench]\n---\n", i%10)
	for b.Len() < n {
		for k := range 8 + r.IntN(8) {
			if k > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(vocab[z.Uint64()])
		}
		b.WriteString(".\n")
	}
	return []byte(b.String())
}

// generate writes the files into a new store in data (unless it holds one
// already) and returns them by class.
func generate(data string) []*class {
	classes := []*class{{name: "~1 KiB"}, {name: "64 KiB"}, {name: "200 KiB"}}
	counts := []int{*nSmall, *nMedium, *nLarge}
	sizes := []int{1000, 64 << 10, 200 << 10}
	dirs := []string{"small", "medium", "large"}
	for k, c := range classes {
		for i := range counts[k] {
			c.files = append(c.files, fmt.Sprintf("/episodic/bench/%s/f%05d.md", dirs[k], i))
		}
	}
	if _, err := os.Stat(filepath.Join(data, "db")); err == nil {
		return classes
	}
	kv, err := backend.OpenBadger(filepath.Join(data, "db"), backend.Options{})
	check(err)
	st, err := store.Open(kv, store.Options{BlobDir: filepath.Join(data, "blobs"), CacheBytes: -1})
	check(err)
	bench, err := st.Mkdir(dirIno(st, "/episodic"), "bench", 0o755, store.Owner{})
	check(err)
	for k, c := range classes {
		d, err := st.Mkdir(bench.Ino, dirs[k], 0o755, store.Owner{})
		check(err)
		for i, p := range c.files {
			r := rand.New(rand.NewPCG(uint64(k), uint64(i)))
			in, err := st.Create(d.Ino, filepath.Base(p), 0o644, store.Owner{})
			check(err)
			check(st.Open(in.Ino, false))
			_, err = st.WriteAt(in.Ino, text(r, i, sizes[k]), 0)
			check(err)
			check(st.Release(in.Ino))
		}
	}
	check(st.Close())
	check(kv.Close())
	return classes
}

func dirIno(st *store.Store, p string) uint64 {
	ino, err := st.Resolve(p)
	check(err)
	return ino
}

// makeQueries returns -queries queries of one or two fairly common words.
func makeQueries(seed uint64) []string {
	r := rand.New(rand.NewPCG(3, seed))
	var out []string
	for len(out) < *nq {
		q := vocab[20+r.IntN(300)]
		if r.IntN(2) == 0 {
			q += " " + vocab[20+r.IntN(300)]
		}
		out = append(out, q)
	}
	return out
}
