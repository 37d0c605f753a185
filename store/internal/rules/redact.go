package rules

import (
	"sort"
	"sync"

	"github.com/mnemofs/mnemofs/redact"
)

// redactorBox holds the compiled rules (nil: none).
type redactorBox struct{ r *redact.Redactor }

// Redactor is the policy's compiled redaction rules, nil when none.
func (r *Policy) Redactor() *redact.Redactor {
	if b := r.red.Load(); b != nil {
		return b.r
	}
	p, stored := r.Get()
	b := &redactorBox{p.Redactor()}
	if stored {
		r.red.Store(b)
	}
	return b.r
}

// redactCounts counts the matches masked per rule since the store opened.
type redactCounts struct {
	mu sync.Mutex
	n  map[string]uint64
}

func (c *redactCounts) add(m map[string]int) {
	if len(m) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]uint64{}
	}
	for k, v := range m {
		c.n[k] += uint64(v)
	}
}

// Masked counts what store-mode rules masked (per rule name).
func (r *Policy) Masked(m map[string]int) { r.redCounts.add(m) }

// RedactionCount is one rule's count.
type RedactionCount struct {
	Rule  string `json:"rule"`
	Mode  string `json:"mode"`
	Count uint64 `json:"count"`
}

// StoreRedactions returns what store-mode rules masked since the store
// opened, per rule of the current policy.
func (r *Policy) StoreRedactions() []RedactionCount {
	r.redCounts.mu.Lock()
	defer r.redCounts.mu.Unlock()
	var out []RedactionCount
	for _, nm := range r.Redactor().ForStore().Names() {
		out = append(out, RedactionCount{Rule: nm[0], Mode: nm[1], Count: r.redCounts.n[nm[0]]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rule < out[j].Rule })
	return out
}
