package store

import (
	"slices"
	"syscall"

	"github.com/mnemofs/mnemofs/policy"
	"github.com/mnemofs/mnemofs/redact"
	"github.com/mnemofs/mnemofs/store/internal/rules"
)

// The policy (meta/policy.yaml) is a store setting, shared by every mount
// of the store. Who may change it is decided above the store: the
// operator, through the CLI or a mount without --user (fusefs/policy.go,
// SECURITY.md). It never names a program to run (policy.ErrCommandInPolicy);
// programs are host-local (Options.Operator).

// The policy read and what is compiled from it are package
// internal/rules'; these are the store's side of them.

const policySetting = "policy"

// Policy returns the store's policy (meta/policy.yaml, or the defaults).
// When the stored policy cannot be read (a shared store's cluster out of
// reach), it is the last policy read, else the defaults, and nothing is
// cached: the next call reads again. (Caching the defaults there would
// turn the redaction rules off until the policy next changed.)
func (s *Store) Policy() policy.Policy {
	p, _ := s.rules.Get()
	return p
}

// PolicyBytes is the stored text of the policy, nil when none was written.
func (s *Store) PolicyBytes() ([]byte, error) { return s.Setting(policySetting) }

// SetPolicy checks and stores a new policy; empty text means the
// defaults. An invalid one is refused with the parser's error and the old
// one kept.
func (s *Store) SetPolicy(b []byte) error {
	if s.opts.ReadOnly {
		return syscall.EROFS
	}
	p, err := policy.Parse(b)
	if err != nil {
		return err
	}
	oldPol := s.Policy()
	old := oldPol.Ignore
	s.rules.WarnAgain()
	s.changes.Taken() // the Reindexed below is this commit's event (Settled)
	defer s.changes.Handed()
	if err := s.PutSetting(policySetting, b); err != nil {
		return err
	}
	if (!slices.Equal(old, p.Ignore) || oldPol.Redactor().ID() != p.Redactor().ID()) && s.opts.OnChange != nil {
		s.opts.OnChange([]Change{{Kind: Reindexed}})
	}
	return nil
}

// Operator is the host-local configuration (Options.Operator), empty when
// there is none.
func (s *Store) Operator() (policy.Operator, error) {
	if s.opts.Operator == nil {
		return policy.Operator{}, nil
	}
	return s.opts.Operator()
}

// Ignored reports whether the store path p (of a directory if isDir) is
// not a memory: the policy's ignore rules match it (a tool's own tree,
// such as .git/). Such files are stored and behave as plain files, but
// are never indexed, viewed, counted, versioned or trashed.
func (s *Store) Ignored(p string, isDir bool) bool { return s.rules.Ignorer().Match(p, isDir) }

// Redactor is the policy's compiled redaction rules, nil when none.
func (s *Store) Redactor() *redact.Redactor { return s.rules.Redactor() }

// RedactionCount is one store-mode rule's count of matches masked.
type RedactionCount = rules.RedactionCount

// StoreRedactions returns what store-mode rules masked since the store
// opened, per rule of the current policy.
func (s *Store) StoreRedactions() []RedactionCount { return s.rules.StoreRedactions() }

// newRules is the policy of s, kept as its setting.
func newRules(s *Store) *rules.Policy {
	return rules.New(func() ([]byte, error) { return s.Setting(policySetting) }, s.log)
}
