package control

import (
	"fmt"
	"time"

	"github.com/mnemofs/mnemofs/lifecycle"
	"github.com/mnemofs/mnemofs/mcp"
	"github.com/mnemofs/mnemofs/policy"
	"github.com/mnemofs/mnemofs/report"
	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/transfer"
	"github.com/mnemofs/mnemofs/views"
)

// Request is one store-level command.
type Request struct {
	Op     string `json:"op"` // stats, fsck, import, index, export, report, unmount, mcp, mcp-hello, mcp-sessions, and Register's
	Src    string `json:"src,omitempty"`
	To     string `json:"to,omitempty"`
	Dest   string `json:"dest,omitempty"`
	From   string `json:"from,omitempty"`
	Repair bool   `json:"repair,omitempty"`
	// Reindex (fsck): build the catalog and search index again from the
	// store (a running mount's; the kept snapshot is removed by the CLI).
	Reindex bool   `json:"reindex,omitempty"`
	DryRun  bool   `json:"dry_run,omitempty"`
	Now     string `json:"now,omitempty"` // maintain: RFC 3339 time to act at
	Query   string `json:"query,omitempty"`
	User    string `json:"user,omitempty"`
	K       int    `json:"k,omitempty"`
	// Data is the new policy of "policy-set".
	Data []byte `json:"data,omitempty"`
	// Tool and Args are the tool call of "mcp" (mcp.Call), made for User
	// (every user, or the mount's), refused when ReadOnly changes
	// anything (saying ReadOnlyWhy); Via is how its session came.
	Tool        string `json:"tool,omitempty"`
	Args        []byte `json:"args,omitempty"`
	ReadOnly    bool   `json:"read_only,omitempty"`
	ReadOnlyWhy string `json:"read_only_why,omitempty"`
	Via         string `json:"via,omitempty"`
	// Pid and Served are what the MCP server of process Pid serves now
	// ("mcp-sessions"): its sessions by user.
	Pid    int                   `json:"pid,omitempty"`
	Served map[string]mcp.Served `json:"served,omitempty"`
}

// Indexed is what "index" answers: whether the index is kept (a snapshot
// the next start reads, or a running mount's); false for a store that
// keeps none (encrypted, or on etcd), whose every start builds it.
type Indexed struct {
	Kept bool `json:"kept"`
}

// MCPHello is what "mcp-hello" answers: whom the mount is for, so that an
// MCP server can refuse to start through a mount of another user.
type MCPHello struct {
	User     string `json:"user"`
	ReadOnly bool   `json:"read_only"`
}

// Progress reports work done out of total (total 0: unknown).
type Progress func(done, total int64)

// Run executes req on an open store. It is what both the CLI (store not
// mounted) and the mount's control server (store mounted) call.
func Run(st *store.Store, eng *views.Engine, req Request, p Progress) (any, error) {
	if p == nil {
		p = func(int64, int64) {}
	}
	switch req.Op {
	case "stats":
		s, err := st.Stats()
		if err == nil && eng != nil {
			eng.AddCacheStats(&s)
		}
		return s, err
	case "maintain":
		var now time.Time
		if req.Now != "" {
			t, err := time.Parse(time.RFC3339, req.Now)
			if err != nil {
				return nil, fmt.Errorf("--now: %v", err)
			}
			now = t
		}
		return lifecycle.Maintain(st, lifecycle.Options{Now: now, DryRun: req.DryRun})
	case "fsck":
		r, err := st.Fsck(req.Repair)
		if err == nil && (req.Repair || req.Reindex) && eng != nil {
			eng.Rebuild() // the index lives in memory: build it again too
			eng.Ready()
		}
		return r, err
	case "import":
		return transfer.Import(st, req.Src, req.To, transfer.Progress(p))
	case "search":
		if u := st.User(); u != "" && req.User != "" && req.User != u {
			// A store held for one user searches only what that user
			// sees: another user's search through it would find
			// nothing, silently. (No --user: the holder's view.)
			return nil, fmt.Errorf("this store is held for %s, not for %s: give 'mnemofs search' the holder's --user (or none), or stop it and search the store itself", userName(u), userName(req.User))
		}
		return search(eng, req)
	case "index":
		// The catalog and index whole (after an import): a mount's are
		// kept up to date as it writes; a store's own engine (the
		// caller's) writes their snapshot when it stops.
		if eng == nil {
			return Indexed{}, nil
		}
		eng.Ready()
		return Indexed{Kept: true}, nil
	case "export":
		return transfer.Export(st, req.Dest, req.From, transfer.Progress(p))
	case "policy-show":
		b, err := st.PolicyBytes()
		if err == nil && len(b) == 0 {
			b = policy.Marshal(policy.Default())
		}
		return string(b), err
	case "report":
		if req.User != st.User() {
			return nil, fmt.Errorf("this store is mounted for %s, not for %s: give 'mnemofs report' the mount's --user (or none), or read meta/report.html in a mount for that user", userName(st.User()), userName(req.User))
		}
		b, err := report.HTML(st, nil, report.Options{})
		return string(b), err
	case "mcp-hello":
		return MCPHello{User: st.User(), ReadOnly: st.ReadOnly()}, nil
	case "mcp", "mcp-sessions":
		return nil, fmt.Errorf("%s is answered by a process holding the store (a mount, or 'mnemofs mcp')", req.Op)
	case "policy-set":
		// Only the operator reaches this: the control socket serves its
		// owner and root alone, and a CLI without a mount is the data
		// directory's owner.
		return nil, st.SetPolicy(req.Data)
	}
	if op := registered[req.Op]; op != nil {
		return op(st, req, p)
	}
	return nil, fmt.Errorf("unknown operation %q", req.Op)
}

// Op is an operation a program adds to Run (the CLI's backup): it runs on
// the open store in the process that holds it, as Run's own do.
type Op func(st *store.Store, req Request, p Progress) (any, error)

var registered = map[string]Op{}

// Register adds op to Run under name. Call it before any Run (from an
// init function).
func Register(name string, op Op) { registered[name] = op }

// userName names the user a store is open for.
func userName(u string) string {
	if u == "" {
		return "every user (no --user)"
	}
	return "user " + u
}

// search runs a query the way search/<query>/ does.
func search(eng *views.Engine, req Request) ([]views.Result, error) {
	if eng == nil {
		return nil, fmt.Errorf("search needs the index")
	}
	q, err := views.ParseQuery(req.Query)
	if err != nil {
		return nil, err
	}
	if req.K > 0 {
		q.K = min(req.K, views.MaxK)
	}
	var scope views.Filter
	if req.User != "" {
		scope.Users = []string{req.User}
	}
	return eng.WithSnippets(q, eng.Search(q, scope)), nil
}
