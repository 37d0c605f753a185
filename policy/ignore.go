package policy

import (
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Ignore rules (meta/policy.yaml "ignore:", gitignore syntax): files whose
// store path matches are stored and behave as plain files but are not
// memories: never indexed, viewed, versioned or trashed. The defaults
// (DefaultIgnore) always come first, so a policy's own patterns add to
// them and a "!pattern" re-includes.
//
// Syntax, as in gitignore: a blank line or "#" starts nothing; "!" negates
// (the last matching pattern wins); a trailing "/" matches directories
// only (and so everything below them); a pattern with a "/" other than a
// trailing one is anchored at the store root, one without matches a name
// at any depth; "*", "?", "[...]" and "**" are globs (doublestar). As in
// git, nothing below an ignored directory can be re-included.

// DefaultIgnore are the tool trees and scratch files that are never
// memories.
var DefaultIgnore = []string{
	".git/", ".hg/", ".svn/", "node_modules/", "__pycache__/", ".venv/", "venv/", ".tox/",
	".mypy_cache/", ".pytest_cache/", ".DS_Store", "Thumbs.db", ".*.swp", ".*.swx", "*~", ".#*",
}

// ignoreRule is one compiled pattern.
type ignoreRule struct {
	glob     string
	negate   bool
	dirOnly  bool
	anchored bool
}

// Ignorer matches store paths against ignore rules.
type Ignorer struct{ rules []ignoreRule }

// NewIgnorer compiles DefaultIgnore and then patterns; a pattern that is
// not a valid glob is an error naming it.
func NewIgnorer(patterns []string) (*Ignorer, error) {
	ig := &Ignorer{}
	for _, list := range [][]string{DefaultIgnore, patterns} {
		for _, p := range list {
			r, ok, err := compileIgnore(p)
			if err != nil {
				return nil, err
			}
			if ok {
				ig.rules = append(ig.rules, r)
			}
		}
	}
	return ig, nil
}

func compileIgnore(p string) (ignoreRule, bool, error) {
	var r ignoreRule
	p = strings.TrimRight(p, " \t\r")
	if p == "" || strings.HasPrefix(p, "#") {
		return r, false, nil
	}
	if strings.HasPrefix(p, "!") {
		r.negate, p = true, p[1:]
	} else if strings.HasPrefix(p, `\!`) || strings.HasPrefix(p, `\#`) {
		p = p[1:]
	}
	if strings.HasSuffix(p, "/") {
		r.dirOnly, p = true, strings.TrimRight(p, "/")
	}
	if strings.Contains(p, "/") {
		r.anchored, p = true, strings.TrimPrefix(p, "/")
	}
	if p == "" || strings.ContainsRune(p, 0) || !doublestar.ValidatePattern(p) {
		return r, false, fmt.Errorf("ignore: %q is not a valid pattern", p)
	}
	r.glob = p
	return r, true, nil
}

// Match reports whether the store path p ("/semantic/.git/HEAD") is
// ignored. isDir says whether p itself is a directory.
func (ig *Ignorer) Match(p string, isDir bool) bool {
	if ig == nil {
		return false
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	// A directory above p that is ignored ignores p (no re-including).
	for i := 1; i < len(parts); i++ {
		if ig.match(parts[:i], true) {
			return true
		}
	}
	return ig.match(parts, isDir)
}

// match applies the rules to the path of parts, the last rule that
// matches deciding.
func (ig *Ignorer) match(parts []string, isDir bool) bool {
	rel := strings.Join(parts, "/")
	name := parts[len(parts)-1]
	ignored := false
	for _, r := range ig.rules {
		if r.dirOnly && !isDir {
			continue
		}
		var ok bool
		if r.anchored {
			ok = doublestar.MatchUnvalidated(r.glob, rel)
		} else {
			ok = doublestar.MatchUnvalidated(r.glob, name)
		}
		if ok {
			ignored = !r.negate
		}
	}
	return ignored
}
