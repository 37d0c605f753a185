package views

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/mnemofs/mnemofs/memory"
	"github.com/mnemofs/mnemofs/metrics"
	"github.com/mnemofs/mnemofs/policy"
	"github.com/mnemofs/mnemofs/store"
)

// MetaFiles are the generated files of meta/, by name.
var MetaFiles = map[string]func(*store.Store) ([]byte, error){
	"index.json":  IndexJSON,
	"schema.json": SchemaJSON,
	"stats.json":  StatsJSON,
	"errors":      Errors,
	"maintenance.log": func(st *store.Store) ([]byte, error) {
		return st.MaintenanceLog()
	},
}

// MetaNames lists MetaFiles in order.
func MetaNames() []string {
	var n []string
	for k := range MetaFiles {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func marshal(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return append(b, '\n'), err
}

// IndexJSON lists every memory with its metadata.
func IndexJSON(st *store.Store) ([]byte, error) {
	list := []store.Info{}
	err := st.Memories(func(in store.Info) error {
		list = append(list, in)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(list, func(a, b int) bool { return list[a].Path < list[b].Path })
	return marshal(map[string]any{"memories": list, "count": len(list)})
}

// SchemaJSON describes the recognised front matter keys and the system
// metadata.
func SchemaJSON(*store.Store) ([]byte, error) {
	type key struct {
		Key     string `json:"key"`
		Aliases string `json:"aliases,omitempty"`
		Kind    string `json:"kind"`
		Doc     string `json:"doc"`
	}
	var keys []key
	for _, k := range memory.Keys {
		keys = append(keys, key(k))
	}
	return marshal(map[string]any{
		"front_matter": keys,
		"unknown_keys": "kept under extra and filterable",
		"system": []string{"created", "modified", "last_accessed", "access_count", "size",
			"sha256", "version"},
		"xattr_prefix": store.SystemXattrPrefix,
		"policy": map[string]any{
			"file": "meta/policy.yaml (writable; an invalid policy is refused with EINVAL at close and the old one kept; durations: 90s, 45m, 1h, 30d)",
			"keys": policy.Schema(),
		},
	})
}

// StatsJSON is the health report.
func StatsJSON(st *store.Store) ([]byte, error) { return statsJSON(st, nil) }

// StatsJSON is the health report with the index backlog of e: changes
// queued for the catalog and search index and not yet applied.
func (e *Engine) StatsJSON() ([]byte, error) { return statsJSON(e.st, e) }

func statsJSON(st *store.Store, e *Engine) ([]byte, error) {
	s, err := st.Stats()
	if err != nil {
		return nil, err
	}
	var backlog *uint64
	var emb *EmbedStats
	if e != nil {
		b := e.Backlog()
		backlog = &b
		emb = e.EmbedStats()
		e.AddCacheStats(&s)
	}
	return marshal(struct {
		store.Stats
		IndexBacklog *uint64                    `json:"index_backlog,omitempty"`
		Embedding    *EmbedStats                `json:"embedding,omitempty"`
		Latency      map[string]metrics.Summary `json:"latency"`
	}{s, backlog, emb, metrics.Ops.Summaries()})
}

// Errors lists memories whose front matter could not be read, one per
// line: path, a tab, the problem.
func Errors(st *store.Store) ([]byte, error) {
	var b bytes.Buffer
	err := st.Memories(func(in store.Info) error {
		if in.Error != "" {
			fmt.Fprintf(&b, "%s\t%s\n", in.Path, in.Error)
		}
		return nil
	})
	return b.Bytes(), err
}
