package policy

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/mnemofs/mnemofs/redact"
)

// Mode is how a tree takes a committed change.
type Mode string

const (
	// Versioned: every committed change keeps the old version in history/.
	Versioned Mode = "versioned"
	// Append: appends are not new versions; rewrites are.
	Append Mode = "append"
	// InPlace: changes replace the content, no history.
	InPlace Mode = "in-place"
)

// Policy is the whole of meta/policy.yaml.
type Policy struct {
	// Trees maps a top-level directory to its update mode.
	Trees map[string]Tree `yaml:"trees"`
	// Other is the update mode of every file not in a listed tree: the
	// files at the root (an agent's MEMORY.md) and the directories an
	// agent makes beside the four trees.
	Other       Tree        `yaml:"other"`
	Lifecycle   Lifecycle   `yaml:"lifecycle"`
	Maintenance Maintenance `yaml:"maintenance"`
	Health      Health      `yaml:"health"`
	// Ignore holds gitignore patterns of paths that are not memories
	// (ignore.go); DefaultIgnore always applies first.
	Ignore []string `yaml:"ignore,omitempty"`
	// Redact holds the redaction rules (package redact): detectors or
	// named patterns, each masking in the index or in the store.
	Redact []redact.Rule `yaml:"redact,omitempty"`
	// Consolidation is the section older versions kept the consolidation
	// command in. A policy lives in the store, where a --user mount or a
	// shared store's other hosts could have written it, so it never names
	// a program to run: commands are the operator's, in a host-local file
	// (Operator, operator.go). A stored policy that still has the section
	// loads with it dropped (ParseStored); a new one is refused (Parse).
	Consolidation *legacyConsolidation `yaml:"consolidation,omitempty"`
}

// legacyConsolidation is the consolidation section of older policies.
type legacyConsolidation struct {
	Command any `yaml:"command"`
	Timeout any `yaml:"timeout"`
}

// Tree is the policy of one top-level directory.
type Tree struct {
	Update Mode `yaml:"update"`
}

// Lifecycle holds the conditions of the lifecycle table (docs/policy.md).
type Lifecycle struct {
	// WorkingIdle: a working/ memory untouched this long is archived.
	WorkingIdle Duration `yaml:"working_idle"`
	// SessionsCold and SessionsImportance: a session not accessed this
	// long, with importance below this, is compressed into the archive.
	SessionsCold       Duration `yaml:"sessions_cold"`
	SessionsImportance float64  `yaml:"sessions_importance"`
	// ImportanceHalfLife: a session's importance halves for every this
	// long it goes unused (0: it never fades), so that even important
	// sessions leave the active tree once nobody reads them.
	ImportanceHalfLife Duration `yaml:"importance_half_life"`
	// DefaultImportance is the importance of a session that declares none.
	DefaultImportance float64 `yaml:"default_importance"`
	// KnowledgeCold: semantic knowledge not accessed this long is cold.
	KnowledgeCold Duration `yaml:"knowledge_cold"`
	// TrashRetention: removed memories are purged after this long.
	TrashRetention Duration `yaml:"trash_retention"`
}

// Maintenance is the schedule of the lifecycle pass inside the mount.
type Maintenance struct {
	// Interval between passes; 0 turns the schedule off.
	Interval Duration `yaml:"interval"`
}

// Health holds the thresholds past which meta/stats.json warns.
type Health struct {
	GrowthPerDayBytes int64 `yaml:"growth_per_day_bytes"`
	FilesPerDir       int   `yaml:"files_per_dir"`
}

// Default is the policy of a store that has none (docs/policy.md).
func Default() Policy {
	return Policy{
		Trees: map[string]Tree{
			"semantic": {Update: Versioned},
			"episodic": {Update: Append},
			"working":  {Update: InPlace},
			"archive":  {Update: InPlace},
		},
		Other: Tree{Update: Versioned},
		Lifecycle: Lifecycle{
			WorkingIdle:        Duration(time.Hour),
			SessionsCold:       Duration(30 * 24 * time.Hour),
			SessionsImportance: 0.3,
			ImportanceHalfLife: Duration(90 * 24 * time.Hour),
			DefaultImportance:  0.5,
			KnowledgeCold:      Duration(180 * 24 * time.Hour),
			TrashRetention:     Duration(30 * 24 * time.Hour),
		},
		Maintenance: Maintenance{Interval: Duration(time.Hour)},
		Health:      Health{GrowthPerDayBytes: 1 << 30, FilesPerDir: 20000},
	}
}

// ErrCommandInPolicy is returned by Parse for a policy that names a
// program to run.
var ErrCommandInPolicy = errors.New("policy: consolidation is not set here: commands run only when the operator names them in the host-local operator.yaml of the data directory (see SECURITY.md)")

// Parse reads a policy about to be stored. Keys left out keep their
// defaults; an unknown key, a bad mode, a bad duration, a value out of
// range or a consolidation section (ErrCommandInPolicy) is an error that
// names it. Empty input is the default policy.
func Parse(b []byte) (Policy, error) {
	p, err := parse(b)
	if err == nil && p.Consolidation != nil {
		return Policy{}, ErrCommandInPolicy
	}
	return p, err
}

// ParseStored reads a policy the store already holds. It is Parse, except
// that the consolidation section of older versions is dropped, never
// obeyed; dropped says so.
func ParseStored(b []byte) (p Policy, dropped bool, err error) {
	p, err = parse(b)
	dropped = p.Consolidation != nil
	p.Consolidation = nil
	return p, dropped, err
}

func parse(b []byte) (Policy, error) {
	p := Default()
	if len(bytes.TrimSpace(b)) == 0 {
		return p, nil
	}
	// Decoding over the defaults keeps what the file leaves out (a
	// stated zero, such as interval: 0, is kept as stated).
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err := d.Decode(&p); err != nil {
		return Policy{}, fmt.Errorf("policy: %v", err)
	}
	var extra yaml.Node
	if err := d.Decode(&extra); err == nil {
		return Policy{}, errors.New("policy: more than one YAML document")
	}
	if p.Trees == nil {
		p.Trees = Default().Trees // "trees:" with nothing: left out
	}
	return p, p.Validate()
}

// Validate reports the first thing wrong with p.
func (p Policy) Validate() error {
	for name, t := range p.Trees {
		if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
			return fmt.Errorf("policy: trees: %q is not a top-level directory name", name)
		}
		if err := t.Update.check("trees." + name + ".update"); err != nil {
			return err
		}
	}
	if err := p.Other.Update.check("other.update"); err != nil {
		return err
	}
	l := p.Lifecycle
	for _, d := range []struct {
		name string
		v    Duration
	}{{"working_idle", l.WorkingIdle}, {"sessions_cold", l.SessionsCold}, {"knowledge_cold", l.KnowledgeCold}, {"trash_retention", l.TrashRetention}} {
		if d.v <= 0 {
			return fmt.Errorf("policy: lifecycle.%s must be a positive duration", d.name)
		}
	}
	if l.SessionsImportance < 0 || l.SessionsImportance > 1 {
		return fmt.Errorf("policy: lifecycle.sessions_importance %v is not within [0, 1]", l.SessionsImportance)
	}
	if l.DefaultImportance < 0 || l.DefaultImportance > 1 {
		return fmt.Errorf("policy: lifecycle.default_importance %v is not within [0, 1]", l.DefaultImportance)
	}
	if l.ImportanceHalfLife < 0 {
		return fmt.Errorf("policy: lifecycle.importance_half_life must not be negative")
	}
	if i := p.Maintenance.Interval; i != 0 && i < Duration(time.Minute) {
		return fmt.Errorf("policy: maintenance.interval %v is under a minute (0 turns the schedule off)", i)
	}
	if p.Maintenance.Interval < 0 {
		return errors.New("policy: maintenance.interval is negative")
	}
	if p.Health.GrowthPerDayBytes <= 0 || p.Health.FilesPerDir <= 0 {
		return errors.New("policy: health thresholds must be positive")
	}
	if len(p.Ignore) > 1000 {
		return errors.New("policy: ignore has more than 1000 patterns")
	}
	if _, err := NewIgnorer(p.Ignore); err != nil {
		return fmt.Errorf("policy: %v", err)
	}
	if _, err := redact.Compile(p.Redact); err != nil {
		return fmt.Errorf("policy: %v", err)
	}
	return nil
}

// Redactor compiles the redaction rules (nil when there are none). A
// policy that passed Validate always compiles.
func (p Policy) Redactor() *redact.Redactor {
	if len(p.Redact) == 0 {
		return nil
	}
	r, err := redact.Compile(p.Redact)
	if err != nil {
		return nil
	}
	return r
}

// check reports a mode that is none of the three, named by key.
func (m Mode) check(key string) error {
	switch m {
	case Versioned, Append, InPlace:
		return nil
	}
	return fmt.Errorf("policy: %s: %q is not one of versioned, append, in-place", key, m)
}

// UpdateMode is the mode of the tree a store path ("/semantic/a.md") is
// in; a file at the root ("/MEMORY.md") or in a tree not listed is Other's.
func (p Policy) UpdateMode(path string) Mode {
	top, _, nested := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if t, ok := p.Trees[top]; ok && nested {
		return t.Update
	}
	if p.Other.Update == "" {
		return InPlace // a Policy made by hand, not parsed
	}
	return p.Other.Update
}

// Marshal writes p as YAML, with a comment on how to change it.
func Marshal(p Policy) []byte {
	b, _ := yaml.Marshal(p)
	return append([]byte("# mnemofs policy (docs/policy.md; meta/schema.json lists the keys). Edit and save: an invalid file is refused\n"+
		"# with EINVAL and the old one kept. Durations: 90s, 45m, 1h, 30d.\n"), b...)
}

// Duration is a time.Duration written as "1h", "30d" (days) or "90s".
type Duration time.Duration

func (d Duration) String() string {
	t := time.Duration(d)
	if t != 0 && t%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(t/(24*time.Hour)), 10) + "d"
	}
	return t.String()
}

// MarshalYAML writes the short form.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// UnmarshalYAML reads "1h", "30d", "0".
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := ParseDuration(s)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	*d = v
	return nil
}

// ParseDuration reads a Go duration or a number of days ("30d").
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || n < 0 || n > 100*365 {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		return Duration(n * float64(24*time.Hour)), nil
	}
	if s == "0" {
		return 0, nil
	}
	t, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q (write 90s, 45m, 1h or 30d)", s)
	}
	return Duration(t), nil
}

// Schema documents the keys of meta/policy.yaml (for meta/schema.json).
func Schema() []map[string]string {
	k := func(key, kind, def, doc string) map[string]string {
		return map[string]string{"key": key, "kind": kind, "default": def, "doc": doc}
	}
	d := Default()
	return []map[string]string{
		k("trees.<name>.update", "versioned | append | in-place", "semantic: versioned, episodic: append, working: in-place, archive: in-place",
			"how a top-level tree takes changes: versioned keeps every old version in history/; append does not version appends; in-place keeps none"),
		k("other.update", "versioned | append | in-place", string(d.Other.Update),
			"how every other file takes changes: the files at the root (such as an agent's MEMORY.md) and those in directories not listed under trees"),
		k("lifecycle.working_idle", "duration", d.Lifecycle.WorkingIdle.String(), "working/ memories untouched this long move to archive/scratchpads/<date>/"),
		k("lifecycle.sessions_cold", "duration", d.Lifecycle.SessionsCold.String(), "sessions not accessed this long (and below sessions_importance) are compressed into archive/sessions/<YYYY-MM>/"),
		k("lifecycle.sessions_importance", "number in [0, 1]", "0.3", "importance under which a cold session is archived"),
		k("lifecycle.importance_half_life", "duration (0: never fades)", d.Lifecycle.ImportanceHalfLife.String(), "a session's importance halves for every this long it goes unused"),
		k("lifecycle.default_importance", "number in [0, 1]", "0.5", "importance of a session that declares none (in summary.md or its turns)"),
		k("lifecycle.knowledge_cold", "duration", d.Lifecycle.KnowledgeCold.String(), "semantic knowledge not accessed this long is marked cold"),
		k("lifecycle.trash_retention", "duration", d.Lifecycle.TrashRetention.String(), "archive/trash/ entries older than this are purged"),
		k("maintenance.interval", "duration (0: off, else at least 1m)", d.Maintenance.Interval.String(), "time between lifecycle passes inside the mount"),
		k("ignore", "list of gitignore patterns", strings.Join(DefaultIgnore, " "),
			"paths that are plain files, not memories: never indexed, viewed, versioned or trashed; the defaults always apply, '!pattern' re-includes"),
		k("redact", "list of {detector | name + pattern, mode: index | store, paths: [globs]}", "none",
			"redaction rules: detectors "+strings.Join(redact.Detectors(), ", ")+" or a named RE2 pattern; index masks search, snippets, context/ and embeddings, store masks the bytes before they are stored; a match becomes [redacted:<name>]"),
		k("health.growth_per_day_bytes", "bytes", strconv.FormatInt(d.Health.GrowthPerDayBytes, 10), "meta/stats.json warns past this growth a day"),
		k("health.files_per_dir", "count", strconv.Itoa(d.Health.FilesPerDir), "meta/stats.json warns about directories holding more files"),
	}
}
