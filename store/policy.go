package store

import (
	"slices"
	"syscall"

	"github.com/mnemofs/mnemofs/policy"
)

// The policy (meta/policy.yaml) is a store setting, shared by every mount
// of the store. Who may change it is decided above the store: the
// operator, through the CLI or a mount without --user (fusefs/policy.go,
// SECURITY.md). It never names a program to run (policy.ErrCommandInPolicy);
// programs are host-local (Options.Operator).

const policySetting = "policy"

// Policy returns the store's policy (meta/policy.yaml, or the defaults).
// When the stored policy cannot be read (a shared store's cluster out of
// reach), it is the last policy read, else the defaults, and nothing is
// cached: the next call reads again. (Caching the defaults there would
// turn the redaction rules off until the policy next changed.)
func (s *Store) Policy() policy.Policy {
	p, _ := s.policy()
	return p
}

// policy is Policy, and whether it is the stored one rather than a stand-in
// for one that could not be read (what is compiled from a stand-in is not
// cached either).
func (s *Store) policy() (policy.Policy, bool) {
	if p := s.pol.Load(); p != nil {
		return *p, true
	}
	b, err := s.Setting(policySetting)
	if err != nil {
		if last := s.polLast.Load(); last != nil {
			return *last, false
		}
		return policy.Default(), false
	}
	p := policy.Default()
	if len(b) > 0 {
		if q, dropped, err := policy.ParseStored(b); err == nil {
			p = q
			if dropped && s.legacyCommand.CompareAndSwap(false, true) {
				s.log.Printf("meta/policy.yaml has a consolidation section, which is no longer obeyed: name the command in the data directory's operator.yaml (SECURITY.md)")
			}
		}
	}
	s.pol.Store(&p)
	s.polLast.Store(&p)
	return p, true
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
	s.legacyCommand.Store(false)
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

// ignorer is the compiled ignore rules of the policy.
func (s *Store) ignorer() *policy.Ignorer {
	if ig := s.ign.Load(); ig != nil {
		return ig
	}
	p, stored := s.policy()
	ig, err := policy.NewIgnorer(p.Ignore)
	if err != nil {
		ig, _ = policy.NewIgnorer(nil) // a stored policy was checked; defaults at worst
	}
	if stored {
		s.ign.Store(ig)
	}
	return ig
}

// Ignored reports whether the store path p (of a directory if isDir) is
// not a memory: the policy's ignore rules match it (a tool's own tree,
// such as .git/). Such files are stored and behave as plain files, but
// are never indexed, viewed, counted, versioned or trashed.
func (s *Store) Ignored(p string, isDir bool) bool { return s.ignorer().Match(p, isDir) }
