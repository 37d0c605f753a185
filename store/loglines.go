package store

import (
	"bytes"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/mnemofs/mnemofs/memory"
)

// Logs shared by several users (SECURITY.md). Each line of a
// .jsonl/.ndjson log (each entry of a .log) may name its own users
// (memory.ParseLine). The record keeps the union of the users its lines
// name (Record.LineUsers) and whether some line names none (LinePublic),
// kept up to date at each commit from the lines it added (an append reads
// only the new lines).
//
// A log with no owner whose lines name a user other than U is a partial
// log for a store open for U: U sees it as only the lines U may see (the
// lines naming no user and those naming U), in order, as if the others
// were never written: its size, its bytes, its sha256, what is indexed
// and searched, what an export writes. It is read-only there (EACCES), so
// a write can never be made against bytes U does not see. A partial log
// none of whose lines U may see is hidden like any other memory, and so
// is a log too large to read line by line (lineScanMax): it fails closed.
// A log with an owner is the owner's, whole, as any memory.

// lineScanMax bounds the bytes of a log read at one commit to learn its
// lines' users, and the size of a log a partial view is made of.
const lineScanMax = 64 << 20

// IsLogName reports whether name is a log (.jsonl, .ndjson, .log), whose
// lines are memories.
func IsLogName(name string) bool { return isLogName(name) }

// isLogName is IsLogName.
func isLogName(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".jsonl", ".ndjson", ".log":
		return true
	}
	return false
}

// lineScan is what the complete lines of a log region name.
type lineScan struct {
	from, end uint64 // the region read: [from, end), end after its last newline
	users     []string
	public    bool
	tooBig    bool
}

// scanLines reads the complete lines of the log f, named name, from from
// to size. Caller holds f.mu.
func (s *Store) scanLines(f *openFile, name string, from, size uint64) lineScan {
	sc := lineScan{from: from, end: from}
	if size <= from {
		return sc
	}
	if size-from > lineScanMax {
		sc.tooBig = true
		return sc
	}
	b := make([]byte, size-from)
	n, err := s.readLocked(f.ino, f, b, from)
	if err != nil {
		sc.tooBig = true // unread: fail closed
		return sc
	}
	return scanBytes(memory.IsJSONLog(name), from, b[:n])
}

// unsureLine stands for the users of a line nobody can tell whose it is
// (memory.Line.Unsure): no user is it, so such a line is in no user's
// view of a shared log, and the log is partial for every user.
const unsureLine = "\x00"

// shownUsers is an audience as a memory's users are shown (by-user/,
// xattrs, reports): without unsureLine, which is no one's name.
func shownUsers(a []string) []string {
	if !slices.Contains(a, unsureLine) {
		return a
	}
	return slices.DeleteFunc(slices.Clone(a), func(u string) bool { return u == unsureLine })
}

// lineUsers returns the users a line of a log names, in a JSON log when
// jsonLog: unsureLine for a line whose users cannot be told.
func lineUsers(jsonLog bool, line []byte) []string {
	l := memory.ParseLine(line)
	if l.Unsure(jsonLog) {
		return []string{unsureLine}
	}
	return l.Users
}

// scanBytes is scanLines of the bytes b, which start at from, of a JSON
// log when jsonLog.
func scanBytes(jsonLog bool, from uint64, b []byte) lineScan {
	sc := lineScan{from: from, end: from}
	if uint64(len(b)) > lineScanMax {
		sc.tooBig = true
		return sc
	}
	// Every line counts, the unfinished last one too: it is shown as it
	// is until it is finished (projectLines). end stays after the last
	// newline, so the next append's scan reads that line again, finished
	// (planCommit); what it named unfinished stays named (a line cut
	// short, no one's, keeps the log partial for every user: fail closed).
	last := bytes.LastIndexByte(b, '\n')
	sc.end = from + uint64(last+1)
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if us := lineUsers(jsonLog, line); len(us) == 0 {
			sc.public = true
		} else {
			for _, u := range us {
				if !slices.Contains(sc.users, u) && len(sc.users) < memory.MaxValues {
					sc.users = append(sc.users, u)
				}
			}
		}
	}
	return sc
}

// applyLines folds a scan into r: from the start it replaces what r knew,
// from where r's knowledge ended it adds to it, and anything else (a scan
// of another state) leaves r not knowing.
func (r *Record) applyLines(sc lineScan) {
	switch {
	case sc.tooBig:
		r.LinesUnknown = true
	case sc.from == 0:
		r.LineUsers, r.LinePublic, r.LinesAt, r.LinesUnknown = sc.users, sc.public, sc.end, false
	case sc.from == r.LinesAt:
		for _, u := range sc.users {
			if !slices.Contains(r.LineUsers, u) {
				r.LineUsers = append(r.LineUsers, u)
			}
		}
		r.LinePublic = r.LinePublic || sc.public
		r.LinesAt = sc.end
	default:
		r.LinesUnknown = true
	}
}

// lineVisible reports whether a line naming users is seen by u.
func lineVisible(users []string, u string) bool { return len(users) == 0 || slices.Contains(users, u) }

// partial reports whether user u sees only part of the log with record
// r (a shared log with lines of other users).
func (r *Record) partial(u string) bool {
	if u == "" || r.Owner != "" {
		return false
	}
	if r.LinesUnknown {
		return true
	}
	for _, x := range r.LineUsers {
		if x != u {
			return true
		}
	}
	return false
}

// partialVisible reports whether u sees any line of the partial log r.
func (r *Record) partialVisible(u string) bool {
	return !r.LinesUnknown && (r.LinePublic || slices.Contains(r.LineUsers, u))
}

// projection is the part of a partial log its reader sees, cached per
// inode while the content is the same (sha256).
type projection struct {
	sha   string // of the whole log
	data  []byte
	sum   string   // sha256 of data
	users []string // the users its lines name
}

type projections struct {
	mu sync.Mutex
	m  map[uint64]projection
}

// partialOf returns the bytes the store's user sees of ino, and true, when
// ino is a partial log for the store's user.
func (s *Store) partialOf(ino uint64) ([]byte, bool, error) {
	u := s.opts.User
	if u == "" {
		return nil, false, nil
	}
	r, reg, err := s.memoryRecord(ino)
	if err != nil || !reg || !r.partial(u) {
		return nil, false, err
	}
	s.proj.mu.Lock()
	p, ok := s.proj.m[ino]
	s.proj.mu.Unlock()
	if ok && p.sha == r.SHA256 && r.SHA256 != "" {
		return p.data, true, nil
	}
	i, err := s.inode(ino)
	if err != nil {
		return nil, true, err
	}
	s.icMu.RLock()
	size, jsonLog := i.Size, false
	for _, l := range i.Links {
		jsonLog = jsonLog || memory.IsJSONLog(l.Name) // any of its names: fail closed
	}
	s.icMu.RUnlock()
	if size > lineScanMax {
		return nil, true, nil // too large to show in part: nothing of it
	}
	b := make([]byte, size)
	n, err := s.readLocked(ino, nil, b, 0) // committed bytes: no one writes a partial log here
	if err != nil {
		return nil, true, err
	}
	out, users := projectLines(jsonLog, b[:n], u)
	s.proj.mu.Lock()
	if s.proj.m == nil || len(s.proj.m) > 256 {
		s.proj.m = map[uint64]projection{}
	}
	s.proj.m[ino] = projection{r.SHA256, out, sha(out), users}
	s.proj.mu.Unlock()
	return out, true, nil
}

// projectLines returns the lines of the log b (a JSON log when jsonLog)
// that user u sees, in order, and the users those lines name. An
// unfinished last line is shown as it is when it is a line u sees, so
// that u's view ends as the log does.
func projectLines(jsonLog bool, b []byte, u string) (out []byte, users []string) {
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) == 0 {
			out = append(out, line...)
			continue
		}
		if us := lineUsers(jsonLog, t); lineVisible(us, u) {
			out = append(out, line...)
			for _, x := range us {
				if !slices.Contains(users, x) {
					users = append(users, x)
				}
			}
		}
	}
	return out, users
}

// partialInfo makes in describe what the store's user sees of a partial
// log: the size and sha256 of those lines.
func (s *Store) partialInfo(in *Info) {
	if s.opts.User == "" || !isLogName(in.Path) {
		return
	}
	if b, ok, err := s.partialOf(in.Ino); ok && err == nil {
		s.proj.mu.Lock()
		p := s.proj.m[in.Ino]
		s.proj.mu.Unlock()
		in.Size, in.SHA256 = uint64(len(b)), p.sum
		in.Users = p.users // only the users of the lines shown
	}
}
