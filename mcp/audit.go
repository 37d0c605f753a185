package mcp

import (
	"strings"

	"github.com/mnemofs/mnemofs/audit"
	"github.com/mnemofs/mnemofs/store"
)

// Every change a call makes is recorded in meta/mcp.log (package audit):
// the session's user and how it came, the command, the paths, and the
// memory with who could see it, so that each reader of the log is shown
// only what it may see.

// changed is the memory a command changed, and who could see it.
type changed struct {
	ino    uint64
	users  []string
	unsure bool
}

// memoryAt returns the memory at p (ok false for none, or a directory).
func (t *Tools) memoryAt(field string, a args) (changed, bool) {
	p, err := pathArg(a, field)
	if err != nil {
		return changed{}, false
	}
	n, err := t.resolve(p)
	if err != nil || !n.exists || !n.in.IsReg() {
		return changed{}, false
	}
	in, err := t.whole().Info(n.in.Ino)
	if err != nil {
		return changed{}, false
	}
	return changed{ino: n.in.Ino, users: in.Users, unsure: in.Unsure()}, true
}

// target is what a deletion removes, found before it runs (the memory is
// in the trash after); nil for other commands.
func (t *Tools) target(cmd string, a args) *changed {
	if cmd != "delete" {
		return nil
	}
	if c, ok := t.memoryAt("path", a); ok {
		return &c
	}
	return nil
}

// record adds the change cmd just made to meta/mcp.log; a failure to is
// logged (the change is made).
func (t *Tools) record(cmd string, a args, before *changed) {
	e := audit.Entry{User: t.call.User, Via: t.call.Via, Command: cmd}
	field := "path"
	if cmd == "rename" {
		field = "old_path"
	}
	p, _ := pathArg(a, field)
	e.Path = "/" + strings.Join(p.parts, "/")
	c, ok := changed{}, false
	switch {
	case before != nil:
		c, ok = *before, true
	case cmd == "rename":
		to, _ := pathArg(a, "new_path")
		e.To = "/" + strings.Join(to.parts, "/")
		c, ok = t.memoryAt("new_path", a)
	default:
		c, ok = t.memoryAt("path", a)
	}
	if ok {
		e.Ino, e.Users, e.Unsure = c.ino, c.users, c.unsure
	}
	if err := audit.Record(t.whole(), e); err != nil {
		t.opts.Logger.Printf("mcp: %s %s was made but not recorded in meta/mcp.log: %v", cmd, e.Path, err)
	}
}

// whole is the store of which st is a view (st itself when it is none):
// what a memory's audience is, whoever reads it.
func (t *Tools) whole() *store.Store {
	if t.base != nil {
		return t.base
	}
	return t.st
}
