package store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/memory"
	"github.com/mnemofs/mnemofs/policy"
)

// Consolidation (SPEC §6): a session directory under episodic/sessions/
// with at least two turns and no summary.md gets one, written through the
// store like any memory (so it is indexed and versioned by the policy).

// sessionsDir holds the session directories consolidation looks at.
const sessionsDir = "/episodic/sessions"

// summaryName is the file consolidation writes.
const summaryName = "summary.md"

// sessionsToSummarize lists the session directories of mems needing one,
// with their turns in name order.
func sessionsToSummarize(mems []Info) map[string][]Info {
	turns := map[string][]Info{}
	has := map[string]bool{}
	for _, in := range mems {
		dir := path.Dir(in.Path)
		if path.Dir(dir) != sessionsDir {
			continue
		}
		if path.Base(in.Path) == summaryName {
			has[dir] = true
			continue
		}
		turns[dir] = append(turns[dir], in)
	}
	for dir, ts := range turns {
		if has[dir] || len(ts) < 2 {
			delete(turns, dir)
			continue
		}
		sort.Slice(ts, func(a, b int) bool { return ts[a].Path < ts[b].Path })
	}
	return turns
}

// summarize writes dir/summary.md from the turns, with the operator's
// command when there is one (c nil: extractive). The summary is seen by
// whoever sees every turn (sharedAudience): it belongs to that user, or
// names those users in its front matter.
func (s *Store) summarize(dir string, turns []Info, c *policy.Command) error {
	users, ok := sharedAudience(turns)
	if !ok {
		return fmt.Errorf("the turns belong to users who cannot see each other's")
	}
	var in bytes.Buffer
	for _, t := range turns {
		b, err := s.readAllOf(t)
		if err != nil {
			return err
		}
		fmt.Fprintf(&in, "## %s\n\n%s\n\n", path.Base(t.Path), bytes.TrimSpace(b[min(len(b), t.BodyOffset):]))
	}
	var out []byte
	if c != nil {
		b, err := runCommand(c, &in)
		if err != nil {
			return err
		}
		out = b
	} else {
		out = extractive(path.Base(dir), turns, in.String())
	}
	owner := ""
	if len(users) == 1 {
		owner = users[0]
	}
	return s.writeNew(dir, summaryName, withAudience(out, users), owner)
}

// sharedAudience is who sees every one of mems: nil for everyone (all are
// public), else the users in every audience; ok is false when that is no
// one, or a memory's audience is unknown.
func sharedAudience(mems []Info) (users []string, ok bool) {
	var set map[string]bool
	for _, m := range mems {
		if m.unsure {
			return nil, false
		}
		if len(m.Users) == 0 {
			continue // public: seen by everyone
		}
		next := map[string]bool{}
		for _, u := range m.Users {
			if set == nil || set[u] {
				next[u] = true
			}
		}
		if len(next) == 0 {
			return nil, false
		}
		set = next
	}
	for u := range set {
		users = append(users, u)
	}
	sort.Strings(users)
	return users, true
}

// withAudience makes a summary name exactly users in its front matter
// (none: left as it is): whatever front matter the text had is replaced,
// so a command's output cannot widen who sees it.
func withAudience(text []byte, users []string) []byte {
	if len(users) == 0 {
		return text
	}
	if p := memory.Parse(summaryName, text); p.BodyOffset > 0 {
		text = text[p.BodyOffset:]
	}
	fm := "---\ntype: summary\ntags: [summary]\nusers: [" + strings.Join(quoteAll(users), ", ") + "]\n---\n"
	return append([]byte(fm), text...)
}

func quoteAll(l []string) []string {
	out := make([]string, len(l))
	for k, x := range l {
		out[k] = strconv.Quote(x)
	}
	return out
}

// commandOutputMax bounds what a command may write (a summary).
const commandOutputMax = 1 << 20

// runCommand runs the operator's program (no shell) with stdin, within its
// timeout, and returns its output. Past the timeout its whole process
// group is killed.
func runCommand(c *policy.Command, stdin io.Reader) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(c.Timeout))
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Stdin = stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stdout, stderr capped
	stdout.max, stderr.max = commandOutputMax, 4096
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	name := path.Base(c.Argv[0])
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("consolidation command %s timed out after %v", name, time.Duration(c.Timeout))
	case err != nil:
		return nil, fmt.Errorf("consolidation command %s failed: %v: %s", name, err, strings.TrimSpace(stderr.String()))
	case stdout.over:
		return nil, fmt.Errorf("consolidation command %s wrote more than %d bytes", name, commandOutputMax)
	case len(bytes.TrimSpace(stdout.Bytes())) == 0:
		return nil, fmt.Errorf("consolidation command %s wrote nothing", name)
	}
	return stdout.Bytes(), nil
}

// capped keeps the first max bytes written to it.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.over = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// extractive is the default summary: the first sentence of each turn.
func extractive(session string, turns []Info, text string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "---\ntype: summary\ntags: [summary]\n---\n# Summary of %s (%d turns, extractive)\n\n", session, len(turns))
	for _, part := range strings.Split(text, "## ")[1:] {
		name, body, _ := strings.Cut(part, "\n")
		body = strings.Join(strings.Fields(body), " ")
		if end := strings.IndexAny(body, ".!?"); end >= 0 && end < 200 {
			body = body[:end+1]
		} else if len(body) > 200 {
			body = body[:200] + "…"
		}
		if body != "" {
			fmt.Fprintf(&b, "- %s: %s\n", name, body)
		}
	}
	return []byte(b.String())
}

// readAllOf reads a memory's bytes (bounded).
func (s *Store) readAllOf(in Info) ([]byte, error) {
	b := make([]byte, min(in.Size, memory.MaxParse))
	n, err := s.ReadAt(in.Ino, b, 0)
	return b[:n], err
}

// writeNew creates dir/name with data for maintenance, belonging to owner
// (Record.Owner; "" for none), whoever the store is open for.
func (s *Store) writeNew(dir, name string, data []byte, owner string) error {
	b := &bulk{s: s, owner: owner}
	own := Owner{Uid: uint32(syscall.Getuid()), Gid: uint32(syscall.Getgid())}
	if err := b.addFile(path.Join(dir, name), data, 0o644, own, s.now().UnixNano()); err != nil {
		b.cancel()
		return err
	}
	return b.flush()
}
