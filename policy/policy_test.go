package policy

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultsRoundTrip(t *testing.T) {
	p, err := Parse(Marshal(Default()))
	if err != nil {
		t.Fatal(err)
	}
	if p.UpdateMode("/semantic/a.md") != Versioned || p.UpdateMode("/episodic/s/1.md") != Append ||
		p.UpdateMode("/working/x") != InPlace || p.UpdateMode("/archive/trash/x") != InPlace ||
		p.UpdateMode("/custom/x") != Versioned || p.UpdateMode("/MEMORY.md") != Versioned {
		t.Fatalf("modes: %+v, other %+v", p.Trees, p.Other)
	}
	if time.Duration(p.Lifecycle.SessionsCold) != 30*24*time.Hour || p.Lifecycle.SessionsImportance != 0.3 {
		t.Fatalf("lifecycle: %+v", p.Lifecycle)
	}
	if !strings.Contains(string(Marshal(Default())), "sessions_cold: 30d") {
		t.Fatalf("durations are not written in days:\n%s", Marshal(Default()))
	}
}

// The files at the root and in directories the policy does not list take
// changes as other says: versioned by default, as the operator sets it.
func TestOtherFiles(t *testing.T) {
	p, err := Parse([]byte("other: {update: in-place}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.UpdateMode("/MEMORY.md") != InPlace || p.UpdateMode("/notes/a.md") != InPlace || p.UpdateMode("/semantic/a.md") != Versioned {
		t.Fatalf("other: in-place: root %s, notes %s, semantic %s", p.UpdateMode("/MEMORY.md"), p.UpdateMode("/notes/a.md"), p.UpdateMode("/semantic/a.md"))
	}
	if p, err := Parse([]byte("trees:\n  semantic: {update: versioned}\n")); err != nil || p.UpdateMode("/MEMORY.md") != Versioned {
		t.Fatalf("a policy that leaves other out: %v, %v", err, p.Other)
	}
	if _, err := Parse([]byte("other: {update: sometimes}\n")); err == nil || !strings.Contains(err.Error(), "other.update") {
		t.Fatalf("a bad other.update: %v", err)
	}
}

func TestPartialPolicyKeepsDefaults(t *testing.T) {
	p, err := Parse([]byte("trees:\n  notes: {update: versioned}\nlifecycle:\n  working_idle: 2h\nmaintenance:\n  interval: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.UpdateMode("/notes/x") != Versioned || p.UpdateMode("/semantic/x") != Versioned {
		t.Fatalf("trees: %+v", p.Trees)
	}
	if time.Duration(p.Lifecycle.WorkingIdle) != 2*time.Hour || time.Duration(p.Lifecycle.TrashRetention) != 30*24*time.Hour {
		t.Fatalf("lifecycle: %+v", p.Lifecycle)
	}
	if p.Maintenance.Interval != 0 {
		t.Fatalf("interval: 0 was not kept: %v", p.Maintenance.Interval)
	}
	if p, err := Parse(nil); err != nil || p.UpdateMode("/semantic/x") != Versioned {
		t.Fatalf("empty policy: %v %+v", err, p)
	}
}

func TestInvalidPoliciesAreRefused(t *testing.T) {
	for in, want := range map[string]string{
		"trees:\n  semantic: {update: sometimes}\n": "not one of",
		"lifecycle:\n  working_idle: soon\n":        "bad duration",
		"lifecycle:\n  working_idle: -1h\n":         "positive",
		"lifecycle:\n  sessions_importance: 2\n":    "within",
		"maintenance:\n  interval: 5s\n":            "under a minute",
		"colour: blue\n":                            "not found",
		"trees:\n  a/b: {update: versioned}\n":      "top-level",
		"- just\n- a list\n":                        "policy",
		"a: 1\n---\nb: 2\n":                         "policy",
	} {
		if _, err := Parse([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one mentioning %q", in, err, want)
		}
	}
}

func TestIgnore(t *testing.T) {
	ig, err := NewIgnorer([]string{"build/", "/semantic/tmp-*", "*.log", "!keep.log", "secret/**/*.key"})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		"/semantic/.git/HEAD":            true,
		"/semantic/.git":                 false, // a file named .git (not a dir)
		"/a/node_modules/x/y.js":         true,
		"/semantic/notes.md":             false,
		"/x/build/out.o":                 true,
		"/x/build":                       false,
		"/semantic/tmp-1":                true,
		"/other/semantic/tmp-1":          false,
		"/episodic/run.log":              true,
		"/episodic/keep.log":             false,
		"/secret/a/b/c.key":              true,
		"/secret/c.key":                  true,
		"/semantic/.DS_Store":            true,
		"/semantic/.notes.md.swp":        true,
		"/semantic/.git/objects/ab/cdef": true,
		"/__pycache__/x.pyc":             true,
	} {
		if got := ig.Match(p, false); got != want {
			t.Errorf("%s: ignored %v, want %v", p, got, want)
		}
	}
	if !ig.Match("/semantic/.git", true) || !ig.Match("/x/build", true) {
		t.Error("directory patterns do not match directories")
	}
	if _, err := Parse([]byte("ignore: [\"[\"]\n")); err == nil {
		t.Error("an invalid glob was accepted")
	}
	p, err := Parse([]byte("ignore: [\"*.tmp\"]\n"))
	if err != nil || len(p.Ignore) != 1 {
		t.Fatalf("ignore: %v %v", p.Ignore, err)
	}
}

func TestRedactRules(t *testing.T) {
	p, err := Parse([]byte("redact:\n  - detector: email\n    mode: index\n  - name: ticket\n    pattern: 'TICKET-[0-9]+'\n    mode: store\n    paths: [episodic/**]\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := p.Redactor()
	if r.Empty() || !r.ForStore().Applies("/episodic/a") || r.ForStore().Applies("/semantic/a") {
		t.Fatalf("rules: %+v", p.Redact)
	}
	if q, err := Parse(Marshal(p)); err != nil || len(q.Redact) != 2 || q.Redact[1].Paths[0] != "episodic/**" {
		t.Fatalf("round trip: %v %+v", err, q.Redact)
	}
	if strings.Contains(string(Marshal(Default())), "redact") || Default().Redactor() != nil {
		t.Fatal("the default policy has redaction")
	}
	for in, want := range map[string]string{
		"redact:\n  - {name: x, pattern: '(', mode: index}\n":  "bad pattern",
		"redact:\n  - {detector: email, mode: both}\n":         "not index or store",
		"redact:\n  - {detector: email, mode: index, x: 1}\n":  "not found",
		"redact:\n  - {detector: ssn, mode: index}\n":          "unknown detector",
		"redact:\n  - {name: a, pattern: 'x?', mode: store}\n": "empty string",
	} {
		if _, err := Parse([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one mentioning %q", in, err, want)
		}
	}
}
