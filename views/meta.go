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
		"limits": map[string]any{
			"values_per_list":    memory.MaxValues,
			"value_bytes":        memory.MaxValueLen,
			"front_matter_bytes": memory.MaxParse,
		},
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
		e.mu.RLock()
		s.Errors += e.problems // what only the engine reports (Errors)
		e.mu.RUnlock()
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
func Errors(st *store.Store) ([]byte, error) { return errorsOf(st, nil) }

// Errors is the errors file with the problems only the engine knows: the
// metadata of a file over memory.MaxParse, which the store does not read
// for parsing, is reported here when the file starts with front matter.
func (e *Engine) Errors() ([]byte, error) {
	e.Ready()
	return errorsOf(e.st, e)
}

func errorsOf(st *store.Store, e *Engine) ([]byte, error) {
	var b bytes.Buffer
	err := st.Memories(func(in store.Info) error {
		msg := in.Error
		if msg == "" && e != nil {
			if ent := e.entry(in.Ino); ent != nil {
				msg = ent.problem
			}
		}
		if msg != "" {
			fmt.Fprintf(&b, "%s\t%s\n", in.Path, msg)
		}
		return nil
	})
	return b.Bytes(), err
}

// unparsed is the problem of a file over memory.MaxParse whose metadata
// the store did not parse ("" if it declares none): its first bytes are
// read, all MaxParse of them only when it starts with front matter or a
// JSON object.
func (e *Engine) unparsed(ino uint64, name string) string {
	if !memory.HasMetadata(name) {
		return ""
	}
	head := make([]byte, 64)
	n, err := e.st.ReadAt(ino, head, 0)
	start := bytes.TrimLeft(head[:n], " \t\r\n")
	if err != nil || !bytes.HasPrefix(start, []byte("---")) && !bytes.HasPrefix(start, []byte("{")) {
		return ""
	}
	head = make([]byte, memory.MaxParse)
	if n, err = e.st.ReadAt(ino, head, 0); err != nil {
		return ""
	}
	if p := memory.Unparsed(name, head[:n]); p != nil {
		return p.Error()
	}
	return ""
}
