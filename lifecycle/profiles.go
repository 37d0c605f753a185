package lifecycle

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/mnemofs/mnemofs/policy"
	"github.com/mnemofs/mnemofs/store"
)

// Profiles (knowledge extraction): a pass writes, or brings up to date,
// semantic/profiles/<user>.md with the statements a user made about
// themselves in the episodic turns (files, or lines of logs: turns.go) —
// the turns whose speaker is the user (or "user"/"human" in a turn that
// is the user's alone) — each linked to its source turn in related_files,
// so that an agent can read one short profile instead of every session.
// Extractive by default (first-person sentences that state a preference,
// a fact or a plan), or the output of the operator's extraction command
// fed the user's turns. A profile belongs to its user alone (Owner), so
// only that user's mounts and the operator see it. Like a summary, it
// records what it was made from (profile_source_bytes: the bytes of the
// user's own turns, their links included) and is rewritten,
// as a new version, only when that changes; one someone else wrote is
// never touched.

const (
	profilesDir = "/semantic/profiles"
	// profileInputMax bounds the episodic bytes read for the profiles
	// of one pass (the most recently changed memories first).
	profileInputMax = 64 << 20
	// profileStatementsMax bounds the statements of one profile (the
	// newest kept).
	profileStatementsMax = 200
)

// profilePlan is a profile to write or bring up to date.
type profilePlan struct {
	user       string
	statements []statement
	turns      []turn // the user's turns, for the command
	update     uint64
	source     uint64
}

type statement struct{ text, src string }

// selfStatement matches a first-person sentence that says something about
// its speaker: a preference, a fact, a plan.
var selfStatement = regexp.MustCompile(`(?i)\b(i|i'm|i am|i've|i'd|i'll|my|mine)\b.*\b(like|love|prefer|enjoy|hate|dislike|want|wish|plan|planning|going to|will|am|'m|is|are|was|were|have|'ve|work|live|grew up|favou?rite|allergic|vegetarian|vegan|need|hope|learn|started|moved)\b`)

// profilePlans lists the profiles the episodic memories in mems call for.
func profilePlans(st *store.Store, mems []store.Info) []profilePlan {
	var eps []store.Info
	existing := map[string]store.Info{}
	for _, in := range mems {
		switch {
		case strings.HasPrefix(in.Path, "/episodic/") && path.Base(in.Path) != summaryName:
			eps = append(eps, in) // turns (a summary is no one's statement)
		case path.Dir(in.Path) == profilesDir && strings.HasSuffix(in.Path, ".md"):
			existing[strings.TrimSuffix(path.Base(in.Path), ".md")] = in
		}
	}
	sort.Slice(eps, func(a, b int) bool { return eps[a].Modified.After(eps[b].Modified) })
	var source uint64
	byUser := map[string][]turn{}
	for _, in := range eps {
		if source+in.Size > profileInputMax {
			break
		}
		source += in.Size
		ts, err := memTurns(st, in)
		if err != nil {
			continue
		}
		for _, t := range ts {
			if u := selfSpeaker(t); u != "" {
				t.src = t.srcFor(u) // the line as u's view of a shared log numbers it
				byUser[u] = append(byUser[u], t)
			}
		}
	}
	var out []profilePlan
	for u, ts := range byUser {
		if !store.ValidName(u + ".md") {
			continue
		}
		// What the profile was made from: the user's own turns, so that
		// nothing of other users' memories (their size, their changes)
		// shows in it or makes a new version of it.
		var own uint64
		for _, t := range ts {
			own += uint64(len(t.src) + len(t.body) + 1)
		}
		p := profilePlan{user: u, turns: ts, source: own}
		if in, ok := existing[u]; ok {
			covered, ours := profileCovers(in)
			if !ours || covered == own {
				continue
			}
			p.update = in.Ino
		}
		p.statements = statementsOf(ts)
		if len(p.statements) == 0 && p.update == 0 {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].user < out[b].user })
	return out
}

// selfSpeaker is the user a turn is spoken by, "" if none: its speaker
// when that is one of the users who may see it, or "user"/"human" in a
// turn that is one user's alone.
func selfSpeaker(t turn) string {
	if t.unsure || t.speaker == "" {
		return ""
	}
	sp := strings.ToLower(strings.TrimSpace(t.speaker))
	for _, u := range t.users {
		if strings.ToLower(u) == sp {
			return u
		}
	}
	if (sp == "user" || sp == "human") && len(t.users) == 1 {
		return t.users[0]
	}
	return ""
}

// statementsOf picks the self statements of turns, newest last, at most
// profileStatementsMax, each once.
func statementsOf(turns []turn) []statement {
	seen := map[string]bool{}
	var out []statement
	for _, t := range turns {
		for _, sent := range sentences(t.body) {
			if strings.HasSuffix(sent, "?") || len(sent) > 300 || !selfStatement.MatchString(sent) || seen[sent] {
				continue
			}
			seen[sent] = true
			out = append(out, statement{sent, t.src})
		}
	}
	if len(out) > profileStatementsMax {
		out = out[len(out)-profileStatementsMax:]
	}
	return out
}

// sentences splits text at sentence ends.
func sentences(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		if r == '.' || r == '!' || r == '?' || r == '\n' {
			if s := strings.TrimSpace(text[start : i+1]); len(s) > 3 {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(text[start:]); len(s) > 3 {
		out = append(out, s)
	}
	return out
}

func profileCovers(in store.Info) (uint64, bool) {
	switch v := in.Extra["profile_source_bytes"].(type) {
	case int:
		return uint64(v), v >= 0
	case uint64:
		return v, true
	case float64:
		return uint64(v), v >= 0
	}
	return 0, false
}

// writeProfile writes (or brings up to date) the profile of p, with the
// operator's extraction command when there is one.
func writeProfile(st *store.Store, p profilePlan, c *policy.Command) error {
	var body []byte
	if c != nil {
		b, err := runCommand("extraction", c, bytes.NewReader(turnsText(p.turns)))
		if err != nil {
			return err
		}
		body = b
	} else {
		var b strings.Builder
		fmt.Fprintf(&b, "# Profile of %s (extractive: what %s said about themselves)\n\n", p.user, p.user)
		for _, st := range p.statements {
			fmt.Fprintf(&b, "- %s (%s)\n", st.text, st.src)
		}
		body = []byte(b.String())
	}
	var links []string
	seen := map[string]bool{}
	for _, st := range p.statements {
		if !seen[st.src] && len(links) < 256 {
			seen[st.src] = true
			links = append(links, st.src)
		}
	}
	var fm strings.Builder
	fmt.Fprintf(&fm, "---\ntype: profile\ntags: [profile]\nuser: %q\nrelated_files: [%s]\nprofile_source_bytes: %d\n---\n",
		p.user, strings.Join(quoteAll(links), ", "), p.source)
	text := append([]byte(fm.String()), dropFrontMatter(body)...)
	if p.update != 0 {
		return st.RewriteInternal(p.update, text)
	}
	return st.WriteNew(profilesDir, p.user+".md", text, p.user) // makes the directory too
}
