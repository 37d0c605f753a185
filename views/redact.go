package views

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"sort"
	"sync"

	"github.com/mnemofs/mnemofs/redact"
	"github.com/mnemofs/mnemofs/search"
	"github.com/mnemofs/mnemofs/store"
)

// Redaction (package redact, meta/policy.yaml redact:). Every text the
// views derive from a memory's bytes passes through here once, where it
// leaves the memory: what the index and the embedder are fed (parts,
// appendLines, embed), snippets (snippet), log line results and
// context/ turns (turns), context/ sections (section). So .results,
// search/<q>/ line entries, context/<q>, mnemofs search and the MCP
// search and context tools, all built from those, show [redacted:<rule>]
// and the index never holds a secret's tokens. Store-mode rules apply
// here too (the bytes are masked already; redacting is stable). With no
// rules, nothing here costs more than a nil check.

// redactCounts holds the index-mode matches of the indexed memories, per
// memory, so that meta/stats.json counts what the index holds now.
type redactCounts struct {
	mu    sync.Mutex
	byIno map[uint64]map[string]int
}

func (c *redactCounts) set(ino uint64, m map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(m) == 0 {
		delete(c.byIno, ino)
		return
	}
	if c.byIno == nil {
		c.byIno = map[uint64]map[string]int{}
	}
	c.byIno[ino] = m
}

func (c *redactCounts) add(ino uint64, m map[string]int) {
	if len(m) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byIno == nil {
		c.byIno = map[uint64]map[string]int{}
	}
	old := c.byIno[ino]
	if old == nil {
		old = map[string]int{}
		c.byIno[ino] = old
	}
	for k, v := range m {
		old[k] += v
	}
}

// sum is the matches per rule in the memories keep keeps (nil: all).
func (c *redactCounts) sum(keep func(ino uint64) bool) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	sum := map[string]int{}
	for ino, m := range c.byIno {
		if keep != nil && !keep(ino) {
			continue
		}
		for k, v := range m {
			sum[k] += v
		}
	}
	return sum
}

// capture is a copy of the counts, for a snapshot.
func (c *redactCounts) capture() map[uint64]map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[uint64]map[string]int, len(c.byIno))
	for ino, m := range c.byIno {
		out[ino] = maps.Clone(m) // add changes them in place
	}
	return out
}

// restore replaces the counts (read from a snapshot; nil: none).
func (c *redactCounts) restore(byIno map[uint64]map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.byIno = byIno
}

// redactSource is where the rules and a memory's path come from.
type redactSource interface {
	Redactor() *redact.Redactor
	Path(ino uint64) (string, error)
}

// redactText masks what the rules covering path p find in s.
func redactText(src redactSource, p, s string) string {
	r := src.Redactor()
	if r.Empty() {
		return s
	}
	return r.RedactString(p, s)
}

// redactIno masks b, a text of the memory ino.
func redactIno(src redactSource, ino uint64, b []byte) []byte {
	r := src.Redactor()
	if r.Empty() {
		return b
	}
	p, err := src.Path(ino)
	if err != nil {
		return b
	}
	out, _ := r.Redact(p, b)
	return out
}

// redactParts masks the indexed text of parts, the documents of the
// memory at path p, and returns the matches per rule.
func redactParts(src redactSource, p string, parts []search.Part) map[string]int {
	r := src.Redactor()
	if r.Empty() {
		return nil
	}
	var total map[string]int
	for k := range parts {
		for _, s := range []*string{&parts[k].Head, &parts[k].Text, &parts[k].Meta} {
			out, c := r.Redact(p, []byte(*s))
			if c == nil {
				continue
			}
			*s = string(out)
			if total == nil {
				total = map[string]int{}
			}
			for name, n := range c {
				total[name] += n
			}
		}
	}
	return total
}

// embedKey is what the vectors of a memory with content sha were made
// from: sha itself when no rule applies, else sha and the rules (other
// rules, other inputs).
func embedKey(src redactSource, in store.Info) string {
	r := src.Redactor()
	if r.Empty() || in.SHA256 == "" || !r.Applies(in.Path) {
		return in.SHA256
	}
	h := sha256.Sum256([]byte(r.ID()))
	return in.SHA256 + hex.EncodeToString(h[:6]) // hex: stored as bytes with the vectors
}

// Redaction is one rule's line in meta/stats.json.
type Redaction struct {
	Rule string `json:"rule"`
	Mode string `json:"mode"`
	// Indexed: matches masked in what the index holds now (every rule).
	Indexed int `json:"indexed"`
	// Stored: matches masked in bytes before they were stored, since the
	// store opened (store-mode rules; left out under --user).
	Stored *uint64 `json:"stored,omitempty"`
}

// redactions is Engine.Redactions.
func (qr *querier) redactions(keep func(ino uint64) bool, stored bool) []Redaction {
	r := qr.src.Redactor()
	if r.Empty() {
		return nil
	}
	sum := qr.red.sum(keep)
	st := map[string]uint64{}
	for _, c := range qr.src.StoreRedactions() {
		st[c.Rule] = c.Count
	}
	var out []Redaction
	for _, nm := range r.Names() {
		x := Redaction{Rule: nm[0], Mode: nm[1], Indexed: sum[nm[0]]}
		if n, ok := st[nm[0]]; ok && stored {
			x.Stored = &n
		}
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rule < out[j].Rule })
	return out
}

// redactInfo masks the front matter values of in (for meta/index.json):
// id, users, entities, tags, related, the parse error and every string
// under extra. Names (paths, and the by-tag/ and by-user/ directories
// made of values) are not masked.
func redactInfo(r *redact.Redactor, in *store.Info) {
	p := in.Path
	in.ID = r.RedactString(p, in.ID)
	in.Error = r.RedactString(p, in.Error)
	for _, list := range []*[]string{&in.Users, &in.Entities, &in.Tags, &in.Related} {
		if len(*list) == 0 {
			continue
		}
		out := make([]string, len(*list))
		for i, v := range *list {
			out[i] = r.RedactString(p, v)
		}
		*list = out
	}
	if in.Extra != nil {
		in.Extra = redactValue(r, p, in.Extra).(map[string]any)
	}
}

// redactValue masks the strings in a decoded YAML/JSON value.
func redactValue(r *redact.Redactor, p string, v any) any {
	switch x := v.(type) {
	case string:
		return r.RedactString(p, x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = redactValue(r, p, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(r, p, e)
		}
		return out
	}
	return v
}
