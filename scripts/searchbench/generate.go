package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// generate writes n memories under dir (500 per day directory) and copies
// those of user to sub, if set; it returns how many it copied.
func generate(n int, dir, sub, user string) int {
	nsub := 0
	base := time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC)
	for i := range n {
		r := rand.New(rand.NewPCG(1, uint64(i)))
		day := base.AddDate(0, 0, i/500)
		u := users[r.IntN(len(users))]
		rel := filepath.Join(day.Format("2006-01-02"), fmt.Sprintf("%06d-%s-%s.md", i, content(r), content(r)))
		b := memoryText(r, i, u, day.Add(time.Duration(i%500)*time.Minute), "")
		for _, d := range []string{dir, sub} {
			if d == "" || d == sub && u != user {
				continue
			}
			if i%500 == 0 || d == sub {
				check(os.MkdirAll(filepath.Join(d, filepath.Dir(rel)), 0o755))
			}
			check(os.WriteFile(filepath.Join(d, rel), b, 0o644))
			if d == sub {
				nsub++
			}
		}
	}
	return nsub
}

func content(r *rand.Rand) string { return words[nFunc+r.IntN(len(words)-nFunc)] }

// memoryText is one 0.8-1.3 KiB Markdown memory; extra ends its body.
func memoryText(r *rand.Rand, i int, user string, created time.Time, extra string) []byte {
	z := rand.NewZipf(r, 1.3, 2, uint64(len(vocab)-1))
	var b strings.Builder
	fmt.Fprintf(&b, "---\nid: mem-%06d\ntype: %s\nuser: %s\ntags: [%s, %s]\nimportance: %.2f\ncreated: %s\n---\n# ",
		i, []string{"episode", "fact", "preference", "task", "summary"}[r.IntN(5)], user, topics[r.IntN(len(topics))],
		content(r), r.Float64(), created.Format(time.RFC3339))
	sentence(&b, r, z, 3+r.IntN(4), "\n\n")
	for size := 800 + r.IntN(500); b.Len() < size; {
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
	return []byte(b.String() + extra + "\n")
}

func sentence(b *strings.Builder, r *rand.Rand, z *rand.Zipf, n int, end string) {
	for j := range n {
		w := vocab[z.Uint64()]
		switch p := r.IntN(100); {
		case p < 2:
			w = names[r.IntN(len(names))]
		case p < 3:
			w = topics[r.IntN(len(topics))]
		case p < 4:
			w = fmt.Sprintf("%s-%d", []string{"INC", "PR", "JIRA", "ticket"}[r.IntN(4)], r.IntN(100000))
		case j == 0:
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		if j > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	b.WriteString(end)
}

// makeQueries draws n queries of 1-4 words: real content words
// (uniformly, so frequent and rare ones), the 2000 most frequent tail
// words, names and topics.
func makeQueries(n int) []string {
	r := rand.New(rand.NewPCG(7, 7))
	var qs []string
	for range n {
		var q []string
		for range []int{1, 1, 1, 2, 2, 2, 2, 3, 3, 4}[r.IntN(10)] {
			w := content(r)
			switch p := r.IntN(20); {
			case p < 4:
				w = names[r.IntN(len(names))]
			case p < 6:
				w = topics[r.IntN(len(topics))]
			case p < 9:
				w = tail[r.IntN(2000)]
			}
			q = append(q, w)
		}
		qs = append(qs, strings.Join(q, " "))
	}
	return qs
}
