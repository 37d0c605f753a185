package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// Host runs the tool calls of MCP sessions on a store this process holds
// (a mount's, or an MCP server's own), whichever user each session is
// for: a call for user U runs on U's view of the store (store.ForUser)
// with the engine's index filtered for U (views.ForReader), so it finds,
// reads and changes what a store opened for U would, through the caches,
// the index and the kernel notifications of the one store. A store opened
// for one user serves that user alone.
//
// The host also keeps what stats says of MCP: the sessions and calls per
// user that the MCP servers report (Report).
type Host struct {
	st   *store.Store
	eng  *views.Engine
	opts Options

	// mu guards the maps below.
	mu sync.Mutex
	// views are the users' views of st, made once each.
	views map[string]*store.Store
	// servers is what each MCP server (by pid) reported last.
	servers map[int]map[string]Served
}

// Served is what one MCP server reports of one user's sessions: how
// many are open, the calls they made, those the user's limits refused,
// those that waited for a turn of the server (every turn being taken by
// other calls), and the calls admitted and not yet answered, now and at
// most.
type Served struct {
	Sessions int    `json:"sessions"`
	Calls    uint64 `json:"calls,omitempty"`
	Refused  uint64 `json:"refused,omitempty"`
	Waited   uint64 `json:"waited,omitempty"`
	InFlight int    `json:"in_flight,omitempty"`
	Peak     int    `json:"peak,omitempty"`
}

// Activity is one user's MCP sessions and calls, as stats shows them:
// the sums over the MCP servers that reach the store, but Peak, the most
// calls one server ran at once for the user (what the user's
// concurrent-calls bounds).
type Activity struct {
	User     string `json:"user"` // "" for sessions for every user
	Sessions int    `json:"sessions"`
	Calls    uint64 `json:"calls"`
	Refused  uint64 `json:"refused_calls"`
	Waited   uint64 `json:"calls_waited_for_a_turn"`
	InFlight int    `json:"calls_in_flight"`
	Peak     int    `json:"peak_calls_in_flight"`
}

// NewHost returns a host for st (its engine eng may be nil).
func NewHost(st *store.Store, eng *views.Engine, opts Options) *Host {
	if opts.Logger == nil {
		opts.Logger = log.Default()
	}
	return &Host{st: st, eng: eng, opts: opts, views: map[string]*store.Store{}, servers: map[int]map[string]Served{}}
}

// Do runs c as c.User sees the store.
func (h *Host) Do(ctx context.Context, c Call) (Result, error) {
	t, err := h.tools(c)
	if err != nil {
		return Result{Text: "Error: " + err.Error(), IsError: true}, nil
	}
	return t.Do(ctx, c)
}

// tools returns the tools for the call c.
func (h *Host) tools(c Call) (*Tools, error) {
	t := &Tools{st: h.st, eng: h.eng, opts: h.opts, call: c, host: h}
	if u := h.st.User(); u != "" && c.User != u {
		return nil, errors.New("this store is held for " + forUser(u) + " alone (a mount or server with --user " + u + "), which cannot serve an MCP session for " + forUser(c.User) + ": hold the store for every user (mount without --user) to serve every token")
	}
	if c.User == h.st.User() {
		return t, nil
	}
	h.mu.Lock()
	v, ok := h.views[c.User]
	if !ok {
		var err error
		if v, err = h.st.ForUser(c.User); err != nil {
			h.mu.Unlock()
			return nil, err
		}
		if len(h.views) >= 1024 {
			clear(h.views) // a bound; a view is cheap to make again
		}
		h.views[c.User] = v
	}
	h.mu.Unlock()
	t.st, t.base, t.scope = v, h.st, views.ForReader(v)
	return t, nil
}

func forUser(u string) string {
	if u == "" {
		return "every user"
	}
	return "user " + u
}

// Report records what the MCP server of process pid serves now, by user
// (replacing what it reported before; nothing: it serves no one).
func (h *Host) Report(pid int, served map[string]Served) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(served) == 0 {
		delete(h.servers, pid)
		return
	}
	h.servers[pid] = served
}

// Activity lists the MCP sessions and calls of user (of every user, for
// ""), by user name. What a server that has gone away reported is
// dropped.
func (h *Host) Activity(user string) []Activity {
	h.mu.Lock()
	defer h.mu.Unlock()
	by := map[string]*Activity{}
	get := func(u string) *Activity {
		a := by[u]
		if a == nil {
			a = &Activity{User: u}
			by[u] = a
		}
		return a
	}
	for pid, served := range h.servers {
		if pid != os.Getpid() && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			delete(h.servers, pid) // gone without a word (killed)
			continue
		}
		for u, s := range served {
			a := get(u)
			a.Sessions += s.Sessions
			a.Calls += s.Calls
			a.Refused += s.Refused
			a.Waited += s.Waited
			a.InFlight += s.InFlight
			a.Peak = max(a.Peak, s.Peak)
		}
	}
	out := []Activity{}
	for u, a := range by {
		if user == "" || u == user {
			out = append(out, *a)
		}
	}
	slices.SortFunc(out, func(a, b Activity) int { return strings.Compare(a.User, b.User) })
	return out
}

// withSessions adds acts to the stats JSON b as "mcp_sessions".
func withSessions(b []byte, acts []Activity) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	a, err := json.Marshal(acts)
	if err != nil {
		return nil, err
	}
	m["mcp_sessions"] = a
	out, err := json.MarshalIndent(m, "", "  ")
	return append(out, '\n'), err
}
