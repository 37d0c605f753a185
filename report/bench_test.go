package report

import (
	"fmt"
	"testing"

	"github.com/mnemofs/mnemofs/internal/storetest"
	"github.com/mnemofs/mnemofs/store"
)

// bulkStore writes n memories with users, tags and links in one bulk
// import, as mnemofs import does.
func bulkStore(b *testing.B, n int) *store.Store {
	st := storetest.NewStore(b, store.Options{})
	bulk := st.NewBulk()
	trees := []string{"/episodic/notes", "/semantic/kb", "/working/tasks", "/projects/beta"}
	p := func(i int) string { return fmt.Sprintf("%s/m%06d.md", trees[i%len(trees)], i) }
	for i := 0; i < n; i++ {
		rel := ""
		if i > 0 && i%3 != 0 {
			rel = fmt.Sprintf("related: [%q]\n", p(i-1))
		}
		data := fmt.Sprintf("---\nuser: u%d\ntags: [t%02d]\ncreated: 2026-10-%02dT10:00:00Z\n%s---\nmemory %d\n", i%8, i%50, 1+i%30, rel, i)
		storetest.Must(b, bulk.AddFile(p(i), []byte(data), 0o644, store.Owner{}, 0))
		if i%5000 == 4999 {
			storetest.Must(b, bulk.Flush())
		}
	}
	storetest.Must(b, bulk.Flush())
	return st
}

func benchReport(b *testing.B, n int) {
	st := bulkStore(b, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := HTML(st, nil, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReport10k(b *testing.B)  { benchReport(b, 10_000) }
func BenchmarkReport100k(b *testing.B) { benchReport(b, 100_000) }
