package views

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mnemofs/mnemofs/memory"
	"github.com/mnemofs/mnemofs/metrics"
	"github.com/mnemofs/mnemofs/policy"
	"github.com/mnemofs/mnemofs/store"
)

// May is what a reader may see: may(ino) reports whether the reader may
// read the memory ino. nil means everything the store's user sees. The
// mount gives one to a local user other than its owner (--allow-other),
// so that every generated file is computed for that reader.
type May = func(ino uint64) bool

// MetaFiles are the generated files of meta/, by name, computed for a
// reader.
var MetaFiles = map[string]func(e *Engine, may May) ([]byte, error){
	"index.json":      func(e *Engine, may May) ([]byte, error) { return IndexJSON(e.st, may) },
	"schema.json":     func(e *Engine, _ May) ([]byte, error) { return SchemaJSON(e.st) },
	"stats.json":      func(e *Engine, may May) ([]byte, error) { return e.StatsJSON(may) },
	"errors":          func(e *Engine, may May) ([]byte, error) { return Errors(e.st, may) },
	"maintenance.log": func(e *Engine, may May) ([]byte, error) { return e.meta.Maintenance.make(may) },
	"mcp.log":         func(e *Engine, may May) ([]byte, error) { return e.meta.MCP.make(may) },
	"report.html":     func(e *Engine, may May) ([]byte, error) { return e.meta.Report.make(may) },
}

// MetaSources make the files of meta/ that other packages write from the
// store, for a reader: the mount sets them (SetMetaSources), so that the
// views depend on none of those packages.
type MetaSources struct {
	Maintenance MetaFunc // maintenance.log (lifecycle.Log)
	MCP         MetaFunc // mcp.log (audit.Log)
	Report      MetaFunc // report.html (report.HTML)
}

// MetaFunc makes one generated file for a reader.
type MetaFunc func(may May) ([]byte, error)

// errNoSource: an engine that was given no MetaFunc for a file.
var errNoSource = errors.New("views: this engine does not make this file")

func (f MetaFunc) make(may May) ([]byte, error) {
	if f == nil {
		return nil, errNoSource
	}
	return f(may)
}

// SetMetaSources sets what makes the files of meta/ other packages write;
// call it before Start.
func (e *Engine) SetMetaSources(m MetaSources) { e.meta = m }

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

// IndexJSON lists every memory the reader may see with its metadata.
func IndexJSON(st Source, may May) ([]byte, error) {
	list := []store.Info{}
	r := st.Redactor()
	err := st.MemoriesFor(may, func(in store.Info) error {
		if !r.Empty() {
			redactInfo(r, &in)
		}
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
func SchemaJSON(Source) ([]byte, error) {
	type key struct {
		Key     string `json:"key"`
		Aliases string `json:"aliases,omitempty"`
		Kind    string `json:"kind"`
		Doc     string `json:"doc"`
	}
	var keys []key
	for _, k := range memory.Keys {
		keys = append(keys, key{Key: k.Key, Aliases: strings.Join(k.Aliases, ", "), Kind: k.Kind, Doc: k.Doc})
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
		"queries":      queriesSchema(),
		"policy": map[string]any{
			"file": "meta/policy.yaml (the operator's: writable in a mount without --user, or with 'mnemofs policy set'; an invalid policy is refused with EINVAL at close and the old one kept; durations: 90s, 45m, 1h, 30d; programs to run are never here but in the data directory's operator.yaml)",
			"keys": policy.Schema(),
		},
	})
}

// queriesSchema documents search/ and context/ for meta/schema.json.
func queriesSchema() map[string]any {
	type filter struct {
		Key     string `json:"key"`
		Example string `json:"example"`
		Doc     string `json:"doc"`
	}
	var fs []filter
	for _, f := range Filters {
		fs = append(fs, filter{f.Key, f.Example, f.Doc})
	}
	return map[string]any{
		"search":  "search/<words and filters>/: entries 01-<name>, 02-<name>, ... (the memories; a log's line 01-<log>#L<n>) and .results (rank, score, path, snippet); in every view too (by-user/alice/search/<q>/)",
		"context": "context/<words and filters>: one Markdown text of the best matches and the newest working/ memories, within budget:N tokens",
		"escape":  "the name is percent-decoded: %2F is /",
		"filters": fs,
	}
}

// StatsJSON is the health report (with the store alone: no index).
func StatsJSON(st Source) ([]byte, error) { return statsJSON(st, nil, nil) }

// statsSource counts the memories a reader may see (store.StatsFor).
type statsSource interface {
	StatsFor(may func(ino uint64) bool) (store.Stats, error)
}

// statsJSON is the health report of st for may, with the index's
// counts when qr is not nil.
func statsJSON(st statsSource, qr *querier, may May) ([]byte, error) {
	s, err := st.StatsFor(may)
	if err != nil {
		return nil, err
	}
	var backlog *uint64
	var emb *EmbedStats
	var red []Redaction
	if qr != nil {
		b := qr.w.backlog()
		backlog = &b
		red = qr.redactions(may, s.Scope == "")
		if s.Scope == "" { // store-wide counts, not for a restricted reader
			emb = qr.emb.stats()
			qr.addCacheStats(&s)
		}
	}
	return marshal(struct {
		store.Stats
		IndexBacklog *uint64                    `json:"index_backlog,omitempty"`
		Embedding    *EmbedStats                `json:"embedding,omitempty"`
		Redactions   []Redaction                `json:"redactions,omitempty"`
		Latency      map[string]metrics.Summary `json:"latency"`
	}{s, backlog, emb, red, metrics.Ops.Summaries()})
}

// Errors lists the memories the reader may see whose front matter could
// not be read, one per line: path, a tab, the problem.
func Errors(st Source, may May) ([]byte, error) {
	var b bytes.Buffer
	r := st.Redactor() // a parser's message may quote the text
	err := st.MemoriesFor(may, func(in store.Info) error {
		if in.Error != "" {
			fmt.Fprintf(&b, "%s\t%s\n", in.Path, r.RedactString(in.Path, in.Error))
		}
		return nil
	})
	return b.Bytes(), err
}
