package rules

import (
	"bytes"
	"errors"
	"log"
	"strings"
	"sync/atomic"
	"testing"
)

// stored is a policy setting that can fail to be read (a shared store's
// cluster out of reach).
type stored struct {
	text  atomic.Pointer[[]byte]
	fail  atomic.Bool
	reads atomic.Int32
}

func (s *stored) read() ([]byte, error) {
	s.reads.Add(1)
	if s.fail.Load() {
		return nil, errors.New("unavailable")
	}
	if b := s.text.Load(); b != nil {
		return *b, nil
	}
	return nil, nil
}

func (s *stored) set(text string) {
	b := []byte(text)
	s.text.Store(&b)
}

const ticketRule = "redact:\n  - {name: ticket, pattern: 'TICKET-[0-9]{6}', mode: store}\n"

// TestStandInIsNotCached: a policy that cannot be read is stood in for by
// the last one read, else the defaults, and neither is cached nor
// compiled for good: the rules read once it can be read are the stored
// ones.
func TestStandInIsNotCached(t *testing.T) {
	var st stored
	st.set(ticketRule + "ignore: ['drafts/']\n")
	p := New(st.read, log.New(new(bytes.Buffer), "", 0))
	st.fail.Store(true)
	if p.Redactor() != nil || p.Ignorer().Match("/working/drafts/a.md", false) {
		t.Error("rules compiled from a policy that could not be read")
	}
	if _, ok := p.Get(); ok {
		t.Error("the defaults are said to be the stored policy")
	}
	st.fail.Store(false)
	if p.Redactor() == nil || !p.Ignorer().Match("/working/drafts/a.md", false) {
		t.Fatal("the stand-in defaults were cached: the stored rules do not apply once the policy can be read")
	}
	reads := st.reads.Load()
	p.Redactor()
	p.Get()
	if st.reads.Load() != reads {
		t.Error("the stored policy, once read, is read again")
	}

	// It changed (Drop), and cannot be read: the last one read stands in.
	st.set("")
	p.Drop()
	st.fail.Store(true)
	if p.Redactor() == nil {
		t.Error("while the policy cannot be read, the redaction rules are gone")
	}
	st.fail.Store(false)
	if p.Redactor() != nil {
		t.Error("the stand-in was cached: the new policy (no rules) does not apply")
	}
}

// TestLegacySectionLoggedOnce: a stored policy with the consolidation
// section older versions obeyed is logged once, and again after
// WarnAgain (a new policy stored).
func TestLegacySectionLoggedOnce(t *testing.T) {
	var st stored
	st.set("consolidation:\n  command: [summarize]\n")
	var out bytes.Buffer
	p := New(st.read, log.New(&out, "", 0))
	p.Get()
	p.Drop()
	p.Get()
	if n := strings.Count(out.String(), "consolidation section"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, out.String())
	}
	p.WarnAgain()
	p.Drop()
	p.Get()
	if n := strings.Count(out.String(), "consolidation section"); n != 2 {
		t.Errorf("logged %d times after WarnAgain, want twice:\n%s", n, out.String())
	}
}
