package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// common are everyday words, drawn by a Zipf law; rare words (made up,
// "zorvek123") give searches a long tail.
var common = strings.Fields(`the of and to in is was for on that with as by at from it this be are
have or an not but had one all were they which there their we been has more if will would can
who about out up so what time when into year than them some could only other new people its
after first two also like over just then because any these how work most well our even through
back good day way use much where man very still see long make such get day still before here
team meeting project budget travel flight hotel dinner lunch coffee tea ramen sushi train bus
doctor appointment birthday gift garden kitchen music concert movie book chapter report review
deploy release bug fix server database index cache query latency memory disk network backup
invoice payment salary rent insurance tax visa passport ticket museum beach mountain lake river`)

// generate writes n memories under dir: semantic/topic-NN/note-NNNNN.md,
// each about 0.6-1 KiB of Markdown with front matter, a unique marker line
// (for str_replace) and words of the mix above.
func generate(dir string, n int) []string {
	var rels []string
	for i := range n {
		r := rand.New(rand.NewPCG(7, uint64(i)))
		rel := fmt.Sprintf("semantic/topic-%02d/note-%05d.md", i%50, i)
		if i%50 == 0 || i < 50 {
			check(os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755))
		}
		check(os.WriteFile(filepath.Join(dir, rel), memoryText(r, i, 0), 0o644))
		rels = append(rels, rel)
	}
	return rels
}

// memoryText is memory i with marker k.
func memoryText(r *rand.Rand, i, k int) []byte {
	z := rand.NewZipf(r, 1.2, 3, uint64(len(common)-1))
	var b strings.Builder
	fmt.Fprintf(&b, "---\nid: mem-%05d\nuser: %s\ntags: [%s, %s]\n---\n# Note %d\n\nmarker: m%05d-%d\n\n",
		i, []string{"alice", "bob", "carol", "dave"}[i%4], word(r, z), word(r, z), i, i, k)
	for size := 600 + r.IntN(400); b.Len() < size; {
		for j := range 8 + r.IntN(10) {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(word(r, z))
		}
		b.WriteString(".\n")
	}
	return []byte(b.String())
}

func word(r *rand.Rand, z *rand.Zipf) string {
	if r.IntN(10) == 0 {
		return fmt.Sprintf("%s%d", []string{"zorvek", "quilla", "brenna", "toskel", "marvin"}[r.IntN(5)], r.IntN(3000))
	}
	return common[z.Uint64()]
}
