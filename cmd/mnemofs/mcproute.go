package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"sync"
	"time"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/control"
	"github.com/mnemofs/mnemofs/mcp"
	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

// mcpRoute is where an MCP server's calls go (an mcp.Backend): the store
// this process opened itself, when nothing else held it; or the process
// holding it (a mount, or another 'mnemofs mcp'), through its control
// socket, so that the store keeps one writer. Whichever holds it runs each
// call as the call's user sees the store (mcp.Host). When that process
// goes away, the route is found again at the next call: the store is
// taken here, or the socket of whoever holds it now is used.
type mcpRoute struct {
	data string
	// users lists the users this server's sessions are for ("" for every
	// user): a holder for one user cannot serve the others.
	users  func() []string
	ro     bool
	logger *log.Logger
	// served is what this server serves now (nil until set), reported
	// to the holder for its stats.
	served func() map[string]mcp.Served

	// mu guards the route; it is held while a new route is found.
	mu     sync.Mutex
	local  *openMCPStore // this process holds the store, or
	socket string        // the holder's control socket
	holder string        // who the holder is, for messages
	// reportMu guards reporting (a report is being sent) and again (one
	// more is asked for).
	reportMu         sync.Mutex
	reporting, again bool
}

// openMCPStore is the store as an MCP server holds it without a mount:
// locked, open for every user (each call sees it as its user does),
// indexed, reachable by the CLI and other MCP servers over its own
// control socket, kept by the lifecycle schedule as a mount keeps it.
type openMCPStore struct {
	lock      *control.Lock
	kv        backend.KV
	st        *store.Store
	eng       *views.Engine
	ctl       *control.Server
	stopMaint func()
	host      *mcp.Host
}

// connect finds the route: takes the store, or checks the holder serves
// this server's users. A holder whose socket does not answer is going
// away: it is waited for until deadline.
func (r *mcpRoute) connect(deadline time.Time) error {
	if backendURL() == "" && !held(r.data) {
		// mcp makes a store as a mount does (it is the mount of agents
		// that cannot mount), but not read-only; checked before the
		// lock, which would make the directory.
		if err := checkLocal(r.data, !r.ro); err != nil {
			return err
		}
	}
	for {
		lock, h, err := control.Acquire(r.data, control.Holder{Pid: os.Getpid(), Command: "mcp"})
		if err == nil {
			return r.open(lock)
		}
		if !errors.Is(err, control.ErrBusy) {
			return fmt.Errorf("locking the store in %s: %w", r.data, err)
		}
		if h == nil || h.Socket == "" {
			if h != nil && time.Now().Before(deadline) && h.Command == "mount" {
				time.Sleep(100 * time.Millisecond) // a mount starting or stopping
				continue
			}
			who := "another process"
			if h != nil {
				who = fmt.Sprintf("pid %d ('mnemofs %s')", h.Pid, h.Command)
			}
			return fail("the store in %s is busy: %s holds it and cannot be reached; try again when it has finished", r.data, who)
		}
		var hello control.MCPHello
		err = control.Call(r.data, h.Socket, control.Request{Op: "mcp-hello"}, nil, &hello)
		if notReached(err) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		who := fmt.Sprintf("'mnemofs %s' (pid %d)", h.Command, h.Pid)
		if h.Mountpoint != "" {
			who = fmt.Sprintf("the mount at %s (pid %d)", h.Mountpoint, h.Pid)
		}
		if err != nil {
			return fail("the store in %s is held by %s, which does not answer: %v", r.data, who, err)
		}
		if hello.User != "" {
			for _, u := range r.users() {
				if u != hello.User {
					return fail("the store in %s is held by %s for %s, which serves MCP sessions for %s alone, and 'mnemofs mcp%s' is for %s: run 'mnemofs mcp --user %s', or hold the store for every user (mount without --user) to serve every user",
						r.data, who, forUser(hello.User), hello.User, flagUser(u), forUser(u), hello.User)
				}
			}
		}
		r.socket, r.holder = h.Socket, who
		if hello.ReadOnly {
			r.holder += ", read-only"
		}
		return nil
	}
}

// notReached reports whether a control call failed before it reached the
// holder (the socket could not be dialled): it was not run.
func notReached(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func forUser(u string) string {
	if u == "" {
		return "every user (no --user)"
	}
	return "user " + u
}

func flagUser(u string) string {
	if u == "" {
		return ""
	}
	return " --user " + u
}

// open opens the store under lock, for every user, and serves the
// control socket from here.
func (r *mcpRoute) open(lock *control.Lock) error {
	eng := views.NewEngine(r.logger)
	keepIndex(eng, r.data, "", r.ro)
	kv, st, err := openStore(r.data, storeOpen{onChange: eng.Handle, readOnly: r.ro, create: !r.ro})
	if err != nil {
		lock.Release()
		return err
	}
	eng.Start(st)
	o := &openMCPStore{lock: lock, kv: kv, st: st, eng: eng, stopMaint: func() {}}
	notMount := func() error { return errors.New("this is 'mnemofs mcp', not a mount: stop it with Ctrl-C or SIGTERM") }
	o.ctl, err = control.Serve(r.data, st, eng, notMount, r.logger)
	if err != nil {
		r.logger.Printf("warning: no control socket (%v): other commands cannot reach this store while mcp runs", err)
		o.host = mcp.NewHost(st, eng, mcp.Options{Owner: store.Owner{Uid: uint32(os.Geteuid()), Gid: uint32(os.Getegid())}, Logger: r.logger})
	} else {
		o.host = o.ctl.MCP() // the calls of this server and of those reaching it, on one host
		lock.Update(control.Holder{Pid: os.Getpid(), Command: "mcp", Socket: o.ctl.Path()})
	}
	if !r.ro {
		o.stopMaint = startMaintenance(st, r.logger, func() func() { return func() {} }) // mcp keeps every CPU
	}
	r.local, r.socket, r.holder = o, "", ""
	return nil
}

// describe says what the server serves, for its ready line.
func (r *mcpRoute) describe() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.data
	if r.local != nil {
		s += " (holding the store itself)"
	} else {
		s += " (through " + r.holder + ")"
	}
	if r.ro {
		s += ", read-only"
	}
	return s
}

// Do runs a call where the store is.
func (r *mcpRoute) Do(ctx context.Context, c mcp.Call) (mcp.Result, error) {
	for try := 0; ; try++ {
		r.mu.Lock()
		local, socket, holder := r.local, r.socket, r.holder
		r.mu.Unlock()
		if local != nil {
			return local.host.Do(ctx, c)
		}
		var res mcp.Result
		err := control.Call(r.data, socket, control.Request{Op: "mcp", User: c.User, Via: c.Via, ReadOnly: c.ReadOnly || r.ro,
			ReadOnlyWhy: c.ReadOnlyWhy, Tool: c.Tool, Args: c.Args}, nil, &res)
		var remote *control.RemoteError
		switch {
		case err == nil:
			return res, nil
		case errors.As(err, &remote):
			return mcp.Result{Text: "Error: " + remote.Msg, IsError: true}, nil
		case !notReached(err):
			return mcp.Result{}, fmt.Errorf("the call reached %s, which failed before answering (%v): it may or may not have been applied; check with view before repeating it", holder, err)
		case try > 0:
			return mcp.Result{}, fmt.Errorf("%s went away and the store could not be reached again: nothing was changed", holder)
		}
		// The holder went away before the call reached it: find the store
		// again (take it, or go through whoever holds it now).
		r.mu.Lock()
		if r.local == nil && r.socket == socket {
			r.socket = ""
			if err := r.connect(time.Now().Add(10 * time.Second)); err != nil {
				r.mu.Unlock()
				return mcp.Result{}, fmt.Errorf("%s went away, and the store could not be reached again (%v): nothing was changed", holder, err)
			}
			r.logger.Printf("MCP: %s went away; the calls now go to %s", holder, r.describeLocked())
			r.report() // the new holder's stats count this server's sessions
		}
		r.mu.Unlock()
	}
}

// report tells the holder, soon, what this server serves now (its
// sessions and calls by user), for its stats: it does not block, and
// the reports asked for while one is sent make one more, reportEvery
// later. A holder that
// cannot be reached misses it: stats are no reason to fail a call.
func (r *mcpRoute) report() {
	r.reportMu.Lock()
	defer r.reportMu.Unlock()
	if r.reporting {
		r.again = true
		return
	}
	r.reporting = true
	go func() {
		for {
			r.sendReport()
			r.reportMu.Lock()
			if !r.again {
				r.reporting = false
				r.reportMu.Unlock()
				return
			}
			r.again = false
			r.reportMu.Unlock()
			time.Sleep(reportEvery) // what changes meanwhile goes in the next
		}
	}()
}

// reportEvery spaces the reports of a busy server.
const reportEvery = 100 * time.Millisecond

// sendReport sends what this server serves to the holder.
func (r *mcpRoute) sendReport() {
	if r.served == nil {
		return
	}
	served := r.served()
	r.mu.Lock()
	local, socket := r.local, r.socket
	r.mu.Unlock()
	if local != nil {
		local.host.Report(os.Getpid(), served)
		return
	}
	if socket != "" {
		control.Call(r.data, socket, control.Request{Op: "mcp-sessions", Pid: os.Getpid(), Served: served}, nil, nil)
	}
}

func (r *mcpRoute) describeLocked() string {
	if r.local != nil {
		return "the store, held by this process"
	}
	return r.holder
}

// Close closes the store if this process holds it.
func (r *mcpRoute) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.local
	if o == nil {
		if r.socket != "" { // this server serves no one now
			control.Call(r.data, r.socket, control.Request{Op: "mcp-sessions", Pid: os.Getpid()}, nil, nil)
		}
		return nil
	}
	r.local = nil
	o.host.Report(os.Getpid(), nil)
	o.stopMaint()
	if o.ctl != nil {
		o.ctl.Close()
	}
	o.eng.Stop()
	err := errors.Join(o.st.Close(), o.kv.Close())
	o.lock.Release()
	if err != nil {
		return fmt.Errorf("closing the store: %w", err)
	}
	return nil
}
