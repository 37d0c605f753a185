package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

func (rep *report) print() {
	fmt.Printf("LoCoMo retrieval, conversations %s: %d turns, %d questions, k:%d\n",
		strings.Join(rep.Conversations, ","), rep.Turns, rep.Overall.N, rep.K)
	if rep.EmbedSeconds > 0 {
		fmt.Printf("hybrid search: waited %.1fs for the embeddings after the writes\n", rep.EmbedSeconds)
	}
	if rep.WriteSeconds > 0 {
		fmt.Printf("wrote %d turns in %.1fs (%.0f turns/s)\n", rep.Turns, rep.WriteSeconds, float64(rep.Turns)/rep.WriteSeconds)
	}
	fmt.Printf("\n| set | questions | recall@5 | recall@10 | p50 ms | p95 ms |\n|---|---:|---:|---:|---:|---:|\n")
	row := func(name string, a *agg) {
		fmt.Printf("| %s | %d | %.3f | %.3f | %.2f | %.2f |\n", name, a.N, a.Recall5, a.Recall10, a.P50MS, a.P95MS)
	}
	row("all", rep.Overall)
	for _, k := range slices.Sorted(maps.Keys(rep.ByCategory)) {
		n, _ := strconv.Atoi(k)
		row("category "+k+" ("+catName[n]+")", rep.ByCategory[k])
	}
	for _, k := range rep.Conversations {
		row("conversation "+k, cmp.Or(rep.ByConv[k], &agg{}))
	}
	fmt.Printf("\nquestions without usable evidence: %d; evidence ids fixed: %d, dropped (not a turn): %d; "+
		"queries truncated to 255 bytes: %d; with filter-like words escaped: %d\n",
		rep.Skipped, rep.EvFixed, rep.EvDropped, rep.Truncated, rep.Escaped)
}
