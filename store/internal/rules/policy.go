package rules

import (
	"log"
	"sync/atomic"

	"github.com/mnemofs/mnemofs/policy"
)

// Policy is a store's policy, read from where the store keeps it, and
// what is compiled from it: the ignore rules and the redaction rules;
// and the counts of what store-mode rules masked.
type Policy struct {
	read func() ([]byte, error)
	log  *log.Logger

	// pol caches the parsed policy; Drop drops it.
	pol atomic.Pointer[policy.Policy]
	// polLast is the last policy read: Get's stand-in while the stored
	// one cannot be read.
	polLast atomic.Pointer[policy.Policy]
	// legacyCommand: the stored policy's dropped consolidation section was
	// logged.
	legacyCommand atomic.Bool
	// ign is the policy's compiled ignore rules, dropped with pol.
	ign atomic.Pointer[policy.Ignorer]
	// red is the policy's compiled redaction rules (redact.go), dropped
	// with pol; redCounts counts what store-mode rules masked.
	red       atomic.Pointer[redactorBox]
	redCounts redactCounts
}

// New returns the policy that read returns the stored text of (nil or
// empty: none stored, the defaults), logging to log.
func New(read func() ([]byte, error), log *log.Logger) *Policy {
	return &Policy{read: read, log: log}
}

// Drop forgets the parsed policy and what is compiled from it: the stored
// one changed.
func (r *Policy) Drop() {
	r.pol.Store(nil)
	r.ign.Store(nil)
	r.red.Store(nil)
}

// WarnAgain lets the next read log a dropped consolidation section again:
// a new policy is being stored.
func (r *Policy) WarnAgain() { r.legacyCommand.Store(false) }

// Get returns the store's policy (meta/policy.yaml, or the defaults), and
// whether it is the stored one rather than a stand-in for one that could
// not be read: when the stored policy cannot be read (a shared store's
// cluster out of reach), it is the last policy read, else the defaults,
// and nothing is cached: the next call reads again. (Caching the defaults
// there would turn the redaction rules off until the policy next
// changed; what is compiled from a stand-in is not cached either.)
func (r *Policy) Get() (policy.Policy, bool) {
	if p := r.pol.Load(); p != nil {
		return *p, true
	}
	b, err := r.read()
	if err != nil {
		if last := r.polLast.Load(); last != nil {
			return *last, false
		}
		return policy.Default(), false
	}
	p := policy.Default()
	if len(b) > 0 {
		if q, dropped, err := policy.ParseStored(b); err == nil {
			p = q
			if dropped && r.legacyCommand.CompareAndSwap(false, true) {
				r.log.Printf("meta/policy.yaml has a consolidation section, which is no longer obeyed: name the command in the data directory's operator.yaml (SECURITY.md)")
			}
		}
	}
	r.pol.Store(&p)
	r.polLast.Store(&p)
	return p, true
}

// Ignorer is the compiled ignore rules of the policy.
func (r *Policy) Ignorer() *policy.Ignorer {
	if ig := r.ign.Load(); ig != nil {
		return ig
	}
	p, stored := r.Get()
	ig, err := policy.NewIgnorer(p.Ignore)
	if err != nil {
		ig, _ = policy.NewIgnorer(nil) // a stored policy was checked; defaults at worst
	}
	if stored {
		r.ign.Store(ig)
	}
	return ig
}
