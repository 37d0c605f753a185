package lifecycle

import (
	"fmt"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/store"
)

// Maintenance: one lifecycle pass under the store's policy. It
// moves idle working memories to archive/scratchpads/<date>/ and cold
// low-importance sessions (sessions.go) to archive/sessions/<YYYY-MM>/,
// packed and compressed (store.PackTree), marks cold
// knowledge and exact duplicates, and purges trash past its retention.
// Moves are renames, so versions, links and index entries follow the
// inode. Nothing is deleted but trash. A pass is idempotent: what it moved
// or marked no longer matches. It also moves superseded skills (an older
// skill with the id of a newer one) to archive/deprecated_skills/ and
// writes the summary of sessions without one (consolidate.go).

// Options configures a pass.
type Options struct {
	// Now is the time the pass acts at (zero: the store's clock); a later
	// time previews the future.
	Now time.Time
	// DryRun lists the actions and changes nothing.
	DryRun bool
}

// Action is one thing a pass did (or would do).
type Action struct {
	Kind   string `json:"kind"` // archive, cold, duplicate, purge
	Path   string `json:"path"`
	To     string `json:"to,omitempty"`
	Reason string `json:"reason"`
	// ino is the memory acted on, of the memory kept (duplicates): an
	// earlier action of the same pass may have moved either.
	ino, of uint64
	// who sees a summary written (nil: everyone).
	who []string
}

// Report is what a pass did.
type Report struct {
	Now     time.Time `json:"now"`
	DryRun  bool      `json:"dry_run"`
	Actions []Action  `json:"actions"`
	Errors  []string  `json:"errors"`
	// Notes say what the pass left undone on purpose (the operator's:
	// meta/maintenance.log shows them to unrestricted readers only).
	Notes []string `json:"notes,omitempty"`
	// Skipped, on a shared store, names the host whose pass was running:
	// this one did nothing (one pass at a time across the hosts).
	Skipped string `json:"skipped,omitempty"`
	// failed is Errors with the memory each is about (0: none).
	failed []failure
}

type failure struct {
	text string
	ino  uint64
}

// fail records an error of the pass about the memory ino.
func (r *Report) fail(ino uint64, format string, a ...any) {
	e := fmt.Sprintf(format, a...)
	r.Errors = append(r.Errors, e)
	r.failed = append(r.failed, failure{e, ino})
}

// passLease bounds how long a pass holds the store's maintenance lease: a
// host that dies mid-pass stops blocking the others after it.
const passLease = 30 * time.Minute

// hostID names this process in the lease and the pass log: the host name
// and the process id (two mounts on one machine are two hosts of a team).
func hostID() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", h, os.Getpid())
}

// Maintain runs one pass over the whole store st, whoever it is open for
// (maintenance is the operator's: what it writes belongs to the memories'
// own users, and each viewer of meta/maintenance.log sees only the
// actions on memories they may see).
func Maintain(st *store.Store, o Options) (*Report, error) {
	if st.ReadOnly() && !o.DryRun {
		return nil, syscall.EROFS
	}
	now := o.Now
	if now.IsZero() {
		now = st.Now()
	}
	r := &Report{Now: now.UTC(), DryRun: o.DryRun, Actions: []Action{}, Errors: []string{}}
	if st.Shared() && !o.DryRun {
		// One pass at a time across the hosts of a shared store.
		me := hostID()
		ok, holder, err := st.TakeLease("maintenance", me, passLease)
		if err != nil {
			return nil, err
		}
		if !ok {
			r.Skipped = holder
			return r, nil
		}
		defer st.DropLease("maintenance", me)
	}
	pol := st.Policy()
	op, err := st.Operator()
	if err != nil {
		return nil, err
	}
	var mems []store.Info
	if err := st.AllMemories(func(in store.Info) error { mems = append(mems, in); return nil }); err != nil {
		return nil, err
	}
	idle := func(in store.Info) time.Duration {
		last := in.Modified
		if in.LastAccessed != nil && in.LastAccessed.After(last) {
			last = *in.LastAccessed
		}
		return now.Sub(last)
	}
	lc := pol.Lifecycle
	byHash := map[string][]store.Info{}
	for _, in := range mems {
		switch {
		case strings.HasPrefix(in.Path, store.TrashDir+"/"):
			rec, err := st.Record(in.Ino)
			if err == nil && rec.Trashed != 0 && now.Sub(time.Unix(0, rec.Trashed)) >= time.Duration(lc.TrashRetention) {
				r.Actions = append(r.Actions, Action{Kind: "purge", Path: in.Path, ino: in.Ino, Reason: "in the trash past " + lc.TrashRetention.String()})
			}
			continue
		case strings.HasPrefix(in.Path, "/working/") && idle(in) >= time.Duration(lc.WorkingIdle):
			rel := strings.TrimPrefix(in.Path, "/working/")
			r.Actions = append(r.Actions, Action{Kind: "archive", Path: in.Path, ino: in.Ino,
				To:     "/archive/scratchpads/" + in.Modified.UTC().Format("2006-01-02") + "/" + rel,
				Reason: "working memory untouched for " + lc.WorkingIdle.String()})
		case strings.HasPrefix(in.Path, "/semantic/knowledge_base/") && idle(in) >= time.Duration(lc.KnowledgeCold):
			if rec, err := st.Record(in.Ino); err == nil && !rec.Cold {
				r.Actions = append(r.Actions, Action{Kind: "cold", Path: in.Path, ino: in.Ino, Reason: "not accessed for " + lc.KnowledgeCold.String()})
			}
		}
		if in.Size > 0 && in.SHA256 != "" && !strings.HasPrefix(in.Path, "/archive/") {
			// Duplicates only among memories of one audience: a copy of
			// someone else's memory is no copy for whoever cannot see it.
			k := in.SHA256 + "\x00" + store.AudienceKey(in)
			byHash[k] = append(byHash[k], in)
		}
	}
	r.Actions = append(r.Actions, sessionActions(st, mems, now, lc)...)
	r.Actions = append(r.Actions, supersededSkills(mems)...)
	for _, group := range byHash {
		if len(group) < 2 {
			continue
		}
		sort.Slice(group, func(a, b int) bool {
			if !group[a].Created.Equal(group[b].Created) {
				return group[a].Created.Before(group[b].Created)
			}
			return group[a].Ino < group[b].Ino
		})
		for _, d := range group[1:] {
			if rec, err := st.Record(d.Ino); err == nil && rec.DuplicateOf != group[0].Ino {
				r.Actions = append(r.Actions, Action{Kind: "duplicate", Path: d.Path, To: group[0].Path, ino: d.Ino, of: group[0].Ino, Reason: "same sha256 as an earlier memory"})
			}
		}
	}
	plans := map[string]summaryPlan{}
	sums, shared := summaryPlans(st, mems)
	for _, dir := range shared {
		r.Notes = append(r.Notes, fmt.Sprintf("no %s for %s: its turns are of users who cannot see each other's, and a summary would show each of them the others' words", summaryName, dir))
	}
	for _, p := range sums {
		plans[p.dir] = p
		reason := fmt.Sprintf("a session of %d turns without %s", len(p.turns), summaryName)
		if p.update != 0 {
			reason = fmt.Sprintf("the session's turns changed since its summary (%d turns now)", len(p.turns))
		}
		r.Actions = append(r.Actions, Action{Kind: "summary", Path: p.dir, To: p.dir + "/" + summaryName, who: p.who, Reason: reason})
	}
	profiles := map[string]profilePlan{}
	for _, p := range profilePlans(st, mems) {
		to := profilesDir + "/" + p.user + ".md"
		profiles[to] = p
		r.Actions = append(r.Actions, Action{Kind: "profile", Path: to, who: []string{p.user},
			Reason: fmt.Sprintf("%d statements %s made about themselves", len(p.statements), p.user)})
	}
	// By path; a session's summary is written before the session moves.
	sort.SliceStable(r.Actions, func(a, b int) bool {
		x, y := r.Actions[a], r.Actions[b]
		if x.Path != y.Path {
			return x.Path < y.Path
		}
		return x.Kind == "summary" && y.Kind != "summary"
	})
	if o.DryRun {
		return r, nil
	}
	done := r.Actions[:0]
	for _, a := range r.Actions {
		// Let waiting requests run between actions: the mount may have a
		// single scheduler thread (cmd/mnemofs procs).
		runtime.Gosched()
		var err error
		switch a.Kind {
		case "summary":
			err = summarize(st, plans[a.Path], op.Consolidation)
		case "profile":
			err = writeProfile(st, profiles[a.Path], op.Extraction)
		default:
			err = applyAction(st, a)
		}
		if err != nil {
			r.fail(a.ino, "%s %s: %v", a.Kind, a.Path, err)
			continue
		}
		done = append(done, a)
	}
	r.Actions = done
	// Archived bytes are kept compressed: what this pass moved into each
	// archive directory is packed together (store.PackTree).
	packDirs := map[string]bool{}
	for _, a := range done {
		if a.Kind == "archive" {
			packDirs[path.Dir(a.To)] = true
		}
	}
	for dir := range packDirs {
		d, err := st.Resolve(dir)
		if err == nil {
			err = st.PackTree(d)
		}
		if err != nil {
			r.fail(0, "pack %s: %v", dir, err)
		}
	}
	var total int64
	for _, in := range mems {
		total += int64(in.Size)
	}
	st.SampleSize(now, total) // growth for meta/stats.json
	byIno := make(map[uint64]store.Info, len(mems))
	for _, in := range mems {
		byIno[in.Ino] = in
	}
	return r, appendToLog(st, r, byIno)
}

// skillsDir holds skills; of those sharing an id, all but the newest are
// superseded.
const skillsDir = "/semantic/skills/"

// supersededSkills lists the moves of skills replaced by a newer one with
// the same id (front matter id), to archive/deprecated_skills/.
func supersededSkills(mems []store.Info) []Action {
	byID := map[string][]store.Info{}
	for _, in := range mems {
		if strings.HasPrefix(in.Path, skillsDir) && in.ID != "" {
			byID[in.ID] = append(byID[in.ID], in)
		}
	}
	var out []Action
	for id, group := range byID {
		if len(group) < 2 {
			continue
		}
		sort.Slice(group, func(a, b int) bool {
			x, y := group[a], group[b]
			if !x.Modified.Equal(y.Modified) {
				return x.Modified.After(y.Modified)
			}
			return x.Ino > y.Ino
		})
		for _, old := range group[1:] {
			out = append(out, Action{Kind: "archive", Path: old.Path, ino: old.Ino,
				To:     "/archive/deprecated_skills/" + strings.TrimPrefix(old.Path, skillsDir),
				Reason: fmt.Sprintf("skill %q replaced by %s", id, group[0].Path)})
		}
	}
	return out
}

// applyAction carries out one action on its memory, wherever an earlier
// action of the pass put it.
func applyAction(st *store.Store, a Action) error {
	cur, err := st.Path(a.ino)
	if err != nil {
		return err
	}
	switch a.Kind {
	case "purge":
		// Inside the trash: deleted for real, whoever the store is open
		// for (not through Remove, which is the user's).
		return st.PurgeTrashed(a.ino)
	case "archive":
		return st.MoveUnique(cur, a.To)
	case "cold":
		return st.MarkCold(a.ino)
	case "duplicate":
		return st.MarkDuplicate(a.ino, a.of)
	}
	return fmt.Errorf("unknown action %q", a.Kind)
}
