package redact

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Mode says where a rule masks.
type Mode string

const (
	// Index masks what is generated from a memory; the bytes stay.
	Index Mode = "index"
	// Store masks the bytes before they are stored.
	Store Mode = "store"
)

// Limits on the rules of one policy.
const (
	MaxRules   = 64
	MaxPattern = 1024
	MaxPaths   = 64
)

// Rule is one entry of the policy's redact: list.
type Rule struct {
	// Detector is a built-in detector (Detectors); empty for a custom
	// pattern.
	Detector string `yaml:"detector,omitempty"`
	// Name names the rule in the marker and in meta/stats.json: the
	// detector's name by default, required for a pattern.
	Name string `yaml:"name,omitempty"`
	// Pattern is a custom regular expression (Go RE2 syntax).
	Pattern string `yaml:"pattern,omitempty"`
	// Mode is index or store.
	Mode Mode `yaml:"mode"`
	// Paths limits the rule to store paths matching one of these globs
	// (doublestar, relative to the root: "episodic/**"); empty: every path.
	Paths []string `yaml:"paths,omitempty,flow"`
}

// compiled is a checked rule.
type compiled struct {
	name   string
	mode   Mode
	marker []byte
	paths  []string
	det    *detector
}

// Redactor applies compiled rules. The zero value and nil redact nothing.
type Redactor struct {
	rules []compiled
	store *Redactor // the store-mode rules alone
	id    string
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// markerRE finds the markers already in a text.
var markerRE = regexp.MustCompile(`\[redacted:[a-z0-9][a-z0-9_-]{0,31}\]`)

// Compile checks rules and compiles them; the first problem is an error
// naming the rule (its position, never the text it would match).
func Compile(rules []Rule) (*Redactor, error) {
	if len(rules) > MaxRules {
		return nil, fmt.Errorf("redact: %d rules, at most %d", len(rules), MaxRules)
	}
	r := &Redactor{}
	seen := map[string]bool{}
	var id strings.Builder
	for i, ru := range rules {
		at := fmt.Sprintf("redact[%d]", i)
		var d *detector
		switch {
		case ru.Detector != "" && ru.Pattern != "":
			return nil, fmt.Errorf("redact: %s: give a detector or a pattern, not both", at)
		case ru.Detector != "":
			d = builtin[ru.Detector]
			if d == nil {
				return nil, fmt.Errorf("redact: %s: unknown detector %q (one of %s)", at, ru.Detector, strings.Join(Detectors(), ", "))
			}
			if ru.Name == "" {
				ru.Name = ru.Detector
			}
		case ru.Pattern != "":
			if ru.Name == "" {
				return nil, fmt.Errorf("redact: %s: a pattern needs a name", at)
			}
			if len(ru.Pattern) > MaxPattern {
				return nil, fmt.Errorf("redact: %s (%s): pattern of %d bytes, at most %d", at, ru.Name, len(ru.Pattern), MaxPattern)
			}
			re, err := regexp.Compile(ru.Pattern)
			if err != nil {
				return nil, fmt.Errorf("redact: %s (%s): bad pattern: %v", at, ru.Name, err)
			}
			if re.Match(nil) {
				return nil, fmt.Errorf("redact: %s (%s): the pattern matches the empty string", at, ru.Name)
			}
			d = &detector{res: []*regexp.Regexp{re}}
		default:
			return nil, fmt.Errorf("redact: %s: needs a detector or a pattern", at)
		}
		if !nameRE.MatchString(ru.Name) {
			return nil, fmt.Errorf("redact: %s: name %q must be 1-32 of a-z, 0-9, _ and -", at, ru.Name)
		}
		if seen[ru.Name] {
			return nil, fmt.Errorf("redact: %s: a second rule named %q", at, ru.Name)
		}
		seen[ru.Name] = true
		if ru.Mode != Index && ru.Mode != Store {
			return nil, fmt.Errorf("redact: %s (%s): mode %q is not index or store", at, ru.Name, ru.Mode)
		}
		if len(ru.Paths) > MaxPaths {
			return nil, fmt.Errorf("redact: %s (%s): more than %d paths", at, ru.Name, MaxPaths)
		}
		var paths []string
		for _, p := range ru.Paths {
			p = strings.Trim(p, "/")
			if p == "" || !doublestar.ValidatePattern(p) {
				return nil, fmt.Errorf("redact: %s (%s): %q is not a valid path glob", at, ru.Name, p)
			}
			paths = append(paths, p)
		}
		r.rules = append(r.rules, compiled{name: ru.Name, mode: ru.Mode, marker: []byte("[redacted:" + ru.Name + "]"), paths: paths, det: d})
		fmt.Fprintf(&id, "%s|%s|%s|%q|%q;", ru.Name, ru.Mode, ru.Detector, ru.Pattern, paths)
	}
	r.id = id.String()
	s := &Redactor{id: "store:" + r.id}
	for _, c := range r.rules {
		if c.mode == Store {
			s.rules = append(s.rules, c)
		}
	}
	s.store = s
	r.store = s
	return r, nil
}

// Empty reports whether r has no rules.
func (r *Redactor) Empty() bool { return r == nil || len(r.rules) == 0 }

// ID identifies the rules (equal rules, equal ID; "" when none): what was
// derived under one set of rules (embeddings) is derived again under
// another.
func (r *Redactor) ID() string {
	if r.Empty() {
		return ""
	}
	return r.id
}

// ByPath reports whether some rule of r is limited by paths (so that a
// move may change what covers a memory).
func (r *Redactor) ByPath() bool {
	if r == nil {
		return false
	}
	for i := range r.rules {
		if len(r.rules[i].paths) > 0 {
			return true
		}
	}
	return false
}

// ForStore is r's store-mode rules alone.
func (r *Redactor) ForStore() *Redactor {
	if r == nil {
		return nil
	}
	return r.store
}

// Names lists the rules' names and modes, in order.
func (r *Redactor) Names() [][2]string {
	if r == nil {
		return nil
	}
	out := make([][2]string, len(r.rules))
	for i, c := range r.rules {
		out[i] = [2]string{c.name, string(c.mode)}
	}
	return out
}

// Applies reports whether some rule of r covers the store path p
// ("/episodic/a.md").
func (r *Redactor) Applies(p string) bool {
	if r.Empty() {
		return false
	}
	for i := range r.rules {
		if r.rules[i].covers(p) {
			return true
		}
	}
	return false
}

// covers reports whether the rule applies at store path p. A rule
// limited by paths also covers everything under archive/: maintenance
// moves memories there from any tree, and the trash keeps their paths.
func (c *compiled) covers(p string) bool {
	if len(c.paths) == 0 {
		return true
	}
	p = strings.TrimPrefix(p, "/")
	if p == "archive" || strings.HasPrefix(p, "archive/") {
		return true
	}
	for _, g := range c.paths {
		if doublestar.MatchUnvalidated(g, p) {
			return true
		}
	}
	return false
}

// Redact masks in text what the rules covering path p find, each match
// replaced by [redacted:<rule>], and counts the matches per rule (nil
// when none). text is not changed; when nothing matched, out is text.
func (r *Redactor) Redact(p string, text []byte) (out []byte, counts map[string]int) {
	out = text
	if r.Empty() || len(text) == 0 {
		return out, nil
	}
	// A marker can make what was next to a match a match of its own: two
	// numbers glued together, the second refused at first because it
	// follows a digit, follows the first one's marker once that is
	// masked. So the rules run again while they still find something;
	// each pass only masks more. maxPasses bounds the work on a text made
	// of such chains.
	for pass := 0; pass < maxPasses; pass++ {
		var n map[string]int
		out, n = r.redactOnce(p, out)
		if n == nil {
			break
		}
		if counts == nil {
			counts = map[string]int{}
		}
		for k, v := range n {
			counts[k] += v
		}
	}
	return out, counts
}

// maxPasses bounds Redact's passes over one text.
const maxPasses = 16

// redactOnce is one pass of every rule covering p over text.
func (r *Redactor) redactOnce(p string, text []byte) (out []byte, counts map[string]int) {
	out = text
	for i := range r.rules {
		c := &r.rules[i]
		if !c.covers(p) {
			continue
		}
		var n int
		out, n = c.apply(out)
		if n > 0 {
			if counts == nil {
				counts = map[string]int{}
			}
			counts[c.name] += n
		}
	}
	return out, counts
}

// RedactString is Redact for a string.
func (r *Redactor) RedactString(p, s string) string {
	if r.Empty() {
		return s
	}
	out, n := r.Redact(p, []byte(s))
	if n == nil {
		return s
	}
	return string(out)
}

// apply replaces the rule's matches in text (a new slice when any).
func (c *compiled) apply(text []byte) ([]byte, int) {
	spans := c.det.find(text)
	if len(spans) == 0 {
		return text, 0
	}
	marks := markerRE.FindAllIndex(text, -1)
	var b bytes.Buffer
	last, n := 0, 0
	for _, s := range spans {
		if s[0] < last || overlaps(s, marks) {
			continue
		}
		b.Write(text[last:s[0]])
		b.Write(c.marker)
		last = s[1]
		n++
	}
	if n == 0 {
		return text, 0
	}
	b.Write(text[last:])
	return b.Bytes(), n
}

// overlaps reports whether span s overlaps one of the marker spans.
func overlaps(s []int, marks [][]int) bool {
	for _, m := range marks {
		if s[0] < m[1] && m[0] < s[1] {
			return true
		}
	}
	return false
}
