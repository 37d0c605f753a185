package lifecycle

import (
	"fmt"
	"math"
	"path"
	"strings"
	"time"

	"github.com/mnemofs/mnemofs/policy"
	"github.com/mnemofs/mnemofs/store"
)

// The session rule of the lifecycle table. A session is one entry of
// episodic/sessions/: a directory of turns (and maybe summary.md) or a
// single file. It is archived as a whole, so that a session is never split
// between the active tree and the archive:
//
//   - its last use is the latest modification or access of any of its files
//     (for summary.md, which a pass may have written, only an access);
//   - its importance is the one summary.md declares, else the highest any
//     turn declares, else lifecycle.default_importance;
//   - that importance fades: it halves for every lifecycle.
//     importance_half_life without use (0: never fades);
//   - it moves to archive/sessions/<YYYY-MM of last use>/ once it has gone
//     unused for lifecycle.sessions_cold and its faded importance is below
//     lifecycle.sessions_importance.
//
// Fading is what lets episodic/ level off: without it a session that once
// declared itself important would stay in the active tree for good, however
// long nobody read it. Archived sessions stay readable and searchable
// (archived:true), with their history and links.

type session struct {
	path       string // /episodic/sessions/<name>
	ino        uint64 // the session's directory or file
	lastUse    time.Time
	importance *float64 // declared: summary.md's, else the highest turn's
	summary    *float64
	summaryMod time.Time
	files      int
}

// sessions groups the memories under episodic/sessions/ by session.
func sessions(mems []store.Info) map[string]*session {
	out := map[string]*session{}
	for _, in := range mems {
		rel, ok := strings.CutPrefix(in.Path, sessionsDir+"/")
		if !ok {
			continue
		}
		name, rest, _ := strings.Cut(rel, "/")
		p := sessionsDir + "/" + name
		ss := out[p]
		if ss == nil {
			ss = &session{path: p}
			out[p] = ss
		}
		if rest == "" {
			ss.ino = in.Ino // a single-file session
		}
		ss.files++
		var last time.Time
		if rest != summaryName { // written by a pass; only a read of it is a use
			last = in.Modified
		} else {
			ss.summaryMod = in.Modified
		}
		if in.LastAccessed != nil && in.LastAccessed.After(last) {
			last = *in.LastAccessed
		}
		if last.After(ss.lastUse) {
			ss.lastUse = last
		}
		if in.Importance != nil {
			if rest == summaryName {
				v := *in.Importance
				ss.summary = &v
			} else if ss.importance == nil || *in.Importance > *ss.importance {
				v := *in.Importance
				ss.importance = &v
			}
		}
	}
	for _, ss := range out {
		if ss.lastUse.IsZero() { // only a summary, never read
			ss.lastUse = ss.summaryMod
		}
		if ss.summary != nil {
			ss.importance = ss.summary
		}
	}
	return out
}

// fadedImportance is the session's importance at now.
func (ss *session) fadedImportance(now time.Time, lc policy.Lifecycle) float64 {
	imp := lc.DefaultImportance
	if ss.importance != nil {
		imp = *ss.importance
	}
	if hl := time.Duration(lc.ImportanceHalfLife); hl > 0 {
		if idle := now.Sub(ss.lastUse); idle > 0 {
			imp *= math.Exp2(-float64(idle) / float64(hl))
		}
	}
	return imp
}

// sessionActions lists the sessions to archive at now.
func sessionActions(st *store.Store, mems []store.Info, now time.Time, lc policy.Lifecycle) []Action {
	var out []Action
	for _, ss := range sessions(mems) {
		idle := now.Sub(ss.lastUse)
		if idle < time.Duration(lc.SessionsCold) {
			continue
		}
		imp := ss.fadedImportance(now, lc)
		if imp >= lc.SessionsImportance {
			continue
		}
		ino := ss.ino
		if ino == 0 {
			var err error
			if ino, err = st.Resolve(ss.path); err != nil {
				continue
			}
		}
		out = append(out, Action{Kind: "archive", Path: ss.path, ino: ino,
			To: "/archive/sessions/" + ss.lastUse.UTC().Format("2006-01") + "/" + path.Base(ss.path),
			Reason: fmt.Sprintf("session of %d files unused for %s, importance now %.2f (under %.2f)",
				ss.files, policy.Duration(idle.Truncate(time.Hour)), imp, lc.SessionsImportance)})
	}
	return out
}
