package views

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mnemofs/mnemofs/policy"
)

// The guide: a short text for an agent that finds this folder, generated
// for the mount it is read in (its user, its options, the store's policy):
// GuideName at the root, and the README.md of search/ and context/.

// GuideName is the guide's name at the root of a mount: caps, so that an
// agent listing the folder opens it as it would a README, and no name an
// agent keeps its own memories under (Claude Code's MEMORY.md, CLAUDE.md,
// AGENTS.md, README.md).
const GuideName = "MNEMOFS.md"

// HelpName is the help file listed in search/ and context/.
const HelpName = "README.md"

// GuideOptions are what the guide says about the mount it is read in.
type GuideOptions struct {
	User     string // the mount's --user; "" for all
	ReadOnly bool
	// Listed: the generated trees are listed at the root (--list-generated).
	Listed bool
}

// Filters are the query filters, with what each keeps, for the guide and
// meta/schema.json.
var Filters = []struct{ Key, Example, Doc string }{
	{"user", "user:alice", "memories of that user (user, users, or entities user:NAME)"},
	{"type", "type:semantic", "memories of that type (its type key, else its top directory)"},
	{"tag", "tag:food", "memories with that tag"},
	{"path", "path:semantic%2Fprojects", "memories at or below that path (%2F for /)"},
	{"after", "after:2026-01-01", "created on or after that date"},
	{"before", "before:2026-02-01", "created before that date"},
	{"k", "k:20", "how many results (default 10)"},
	{"archived", "archived:true", "also search archive/ (left out otherwise), but for the trash, which only a path: within it searches"},
	{"budget", "budget:500", "context/ only: the size of the text in tokens (default 2000)"},
}

// guide is Engine.Guide.
func (qr *querier) guide(o GuideOptions) []byte {
	p := qr.src.Policy()
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# This folder is a memory (mnemofs)\n\n")
	w("Everything here is kept across sessions. Use it with plain file tools:\n")
	w("`cat`, `ls`, `grep -r`, `find`, `echo >>`, editors. Every file is a memory;\n")
	w("`grep -r` or `find` over this folder meets each memory once.\n")
	if o.User != "" {
		w("\nThis mount is %s's: you see %s's memories and those that name no user;\n", o.User, o.User)
		w("what you write here belongs to %s.\n", o.User)
	}
	if o.ReadOnly {
		w("\nThis mount is read-only: read and search; writes fail.\n")
	} else {
		w("\n## Writing\n\n")
		w("Markdown, optionally starting with front matter that search and views use:\n\n")
		w("    ---\n    tags: [preferences, editor]\n    importance: 0.8\n    ---\n    The user prefers tabs over spaces.\n\n")
		for _, name := range treeNames(p) {
			use := treeUse[name]
			if use != "" {
				use += "; "
			}
			w("- `%s/`: %s%s.\n", name, use, modeText(p.Trees[name].Update))
		}
		w("- Files here at the top (such as MEMORY.md) and folders of your own: %s.\n", modeText(p.Other.Update))
		w("- A `.jsonl` log (`echo '{\"text\": \"...\"}' >> episodic/log.jsonl`) is searched line by line.\n")
		w("- `rm` moves a memory to `archive/trash/`, purged after %s; search and walks skip the trash.\n", human(p.Lifecycle.TrashRetention))
	}
	w("\n## Searching\n\n")
	b.WriteString(searchHelp)
	w("\n## History, views, health\n\n")
	if o.Listed {
		w("Generated, read-only:\n\n")
	} else {
		w("Not listed by `ls` (so that walks meet each memory once), but open by path:\n\n")
	}
	w("- `history/<path>/`: the old versions of the memory at <path>, `v1.md`, `v2.md`, …\n")
	w("  oldest first; copy one over the memory to restore it.\n")
	w("- `by-user/<user>/`, `by-tag/<tag>/`, `by-type/<type>/`, `by-date/<YYYY>/<MM>/<DD>/`,\n")
	w("  `recent/` (the last 50 written): this tree, filtered; each has its own `search/`.\n")
	w("- `meta/index.json` (every memory's metadata), `meta/stats.json` (health),\n")
	w("  `meta/schema.json` (front matter keys, filters), `meta/policy.yaml` (the rules below).\n")
	w("\n## Kept how long\n\n")
	w("- `working/` memories untouched for %s move to `archive/scratchpads/<date>/`.\n", human(p.Lifecycle.WorkingIdle))
	w("- Sessions (`episodic/sessions/<id>/`) unread for %s, importance under %g, move to\n", human(p.Lifecycle.SessionsCold), p.Lifecycle.SessionsImportance)
	w("  `archive/sessions/<YYYY-MM>/`: still read and found, with `archived:true`.\n")
	w("- Nothing else is deleted: the trash is purged after %s.\n", human(p.Lifecycle.TrashRetention))
	if p.Maintenance.Interval == 0 {
		w("- These moves run when the operator runs `mnemofs maintain`.\n")
	} else {
		w("- These moves run every %s.\n", human(p.Maintenance.Interval))
	}
	return []byte(b.String())
}

// searchHelp is the guide's part on search/ and context/.
var searchHelp = func() string {
	var b strings.Builder
	b.WriteString("- `ls \"search/prefers tabs/\"`: the best matches, `01-<name>`, `02-<name>`, … (the\n")
	b.WriteString("  memories themselves; a log's line is `01-<log>#L<n>`, the line and its neighbours).\n")
	b.WriteString("- `cat \"search/prefers tabs/.results\"`: rank, score, path and matching line of each.\n")
	b.WriteString("- `cat \"context/what does the user prefer\"`: the best matches and the newest\n")
	b.WriteString("  `working/` notes as one Markdown text, ready for a prompt.\n")
	b.WriteString("- Filters, anywhere in the name:")
	for i, f := range Filters {
		if i%5 == 0 {
			b.WriteString("\n ")
		}
		fmt.Fprintf(&b, " `%s`", f.Example)
	}
	b.WriteString(".\n  `k:` sets how many results (10), `archived:true` adds `archive/` (the trash only\n")
	b.WriteString("  with `path:archive%2Ftrash`), `budget:` is context/'s size in tokens (2000).\n")
	b.WriteString("  `%2F` in a name is `/`.\n")
	return b.String()
}()

// SearchHelp is the README.md of search/ and context/.
func SearchHelp(dir string) []byte {
	return []byte("# " + dir + "/\n\nEvery name looked up here is a query: nothing is stored, so this\n" +
		"listing shows only this file (a query named " + HelpName + " needs a filter: `" + HelpName + " k:10`).\n\n" + searchHelp)
}

// treeUse says what each of the default trees is for.
var treeUse = map[string]string{
	"semantic": "facts and knowledge",
	"episodic": "what happened: sessions, logs",
	"working":  "scratch for the task at hand",
	"archive":  "what maintenance moved away; read and searched with `archived:true`",
}

// treeNames are the trees the guide describes: the policy's, the default
// ones first.
func treeNames(p policy.Policy) []string {
	order := map[string]int{"semantic": 1, "episodic": 2, "working": 3, "archive": 4}
	var names []string
	for n := range p.Trees {
		names = append(names, n)
	}
	sort.Slice(names, func(a, b int) bool {
		oa, ob := order[names[a]], order[names[b]]
		if oa == 0 {
			oa = 99
		}
		if ob == 0 {
			ob = 99
		}
		if oa != ob {
			return oa < ob
		}
		return names[a] < names[b]
	})
	return names
}

// modeText says what a tree's update mode keeps.
func modeText(m policy.Mode) string {
	switch m {
	case policy.Versioned:
		return "every change keeps the old version"
	case policy.Append:
		return "appends add to it, other changes keep the old version"
	}
	return "no versions"
}

// AgentHint is a paragraph for an agent's standing instructions
// (CLAUDE.md, AGENTS.md) about the mount at mnt: one line a sentence, as
// the paths in it are of any length.
func AgentHint(mnt string, o GuideOptions) string {
	lines := []string{
		"## Memory",
		"",
		"Your long-term memory is the folder " + mnt + " (a mnemofs mount: plain files, kept across sessions, versioned and searchable).",
		"Read " + mnt + "/" + GuideName + " once: it says what the folder keeps and how.",
		"Before answering from memory, search it: `cat \"" + mnt + "/search/<words>/.results\"` ranks the memories that match (filters such as `tag:food` or `after:2026-01-01` go in the name), and `cat \"" + mnt + "/context/<question>\"` gives the relevant ones as one text.",
		"`grep -r` over the folder meets each memory once.",
	}
	if !o.ReadOnly {
		lines = append(lines,
			"Keep what is worth remembering there as short Markdown files: at the top or in folders of your own, or in semantic/ (facts), episodic/ (what happened) and working/ (scratch for the task).",
			"Old versions stay under "+mnt+"/history/<path>/, and rm moves a file to archive/trash/.")
	}
	return strings.Join(lines, "\n") + "\n"
}

// human writes a duration as people do: 1h, 1h30m, 30d.
func human(d policy.Duration) string {
	s := d.String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}
