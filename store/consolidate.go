package store

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path"
	"sort"
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

// summarize writes dir/summary.md from the turns.
func (s *Store) summarize(dir string, turns []Info, c policy.Consolidation) error {
	var in bytes.Buffer
	for _, t := range turns {
		b, err := s.readAllOf(t)
		if err != nil {
			return err
		}
		fmt.Fprintf(&in, "## %s\n\n%s\n\n", path.Base(t.Path), bytes.TrimSpace(b[min(len(b), t.BodyOffset):]))
	}
	var out []byte
	if c.Command != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(c.Timeout))
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", c.Command)
		cmd.Stdin = &in
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		b, err := cmd.Output()
		if ctx.Err() != nil {
			return fmt.Errorf("consolidation command timed out after %v", time.Duration(c.Timeout))
		}
		if err != nil {
			return fmt.Errorf("consolidation command failed: %v: %s", err, strings.TrimSpace(stderr.String()))
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return fmt.Errorf("consolidation command wrote nothing")
		}
		out = b
	} else {
		out = extractive(path.Base(dir), turns, in.String())
	}
	return s.writeNew(dir, summaryName, out)
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

// writeNew creates dir/name with data, as a write through the mount would.
func (s *Store) writeNew(dir, name string, data []byte) error {
	d, err := s.Resolve(dir)
	if err != nil {
		return err
	}
	i, err := s.Create(d, name, 0o644, Owner{Uid: uint32(syscall.Getuid()), Gid: uint32(syscall.Getgid())})
	if err != nil {
		return err
	}
	if err := s.Open(i.Ino, false); err != nil {
		return err
	}
	_, err = s.WriteAt(i.Ino, data, 0)
	if rerr := s.Release(i.Ino); err == nil {
		err = rerr
	}
	s.notifyEntry(d, name)
	return err
}
