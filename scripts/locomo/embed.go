package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// waitEmbedded waits, when the mount has a model, until every memory is
// embedded (meta/stats.json: no index or embedding backlog); it reports
// whether there was a model.
func waitEmbedded(mnt string) bool {
	for last := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(mnt, "meta", "stats.json"))
		check(err, "meta/stats.json")
		var s struct {
			Index     uint64 `json:"index_backlog"`
			Embedding *struct {
				Memories, Backlog int
			} `json:"embedding"`
		}
		check(json.Unmarshal(b, &s), "meta/stats.json")
		if s.Embedding == nil {
			return false
		}
		if s.Index == 0 && s.Embedding.Backlog == 0 {
			return true
		}
		if time.Since(last) > 10*time.Second {
			fmt.Fprintf(os.Stderr, "locomo: embedding: %d memories done, %d waiting\n", s.Embedding.Memories, s.Embedding.Backlog)
			last = time.Now()
		}
	}
}
