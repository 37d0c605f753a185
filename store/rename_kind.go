package store

import (
	"path"
	"strings"
	"syscall"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/memory"
)

// A memory's metadata is read as its name says: front matter for most
// files, the object of a .json file, the lines of a log (.jsonl, .ndjson,
// .log). A rename to a name of another kind (a save written under a
// temporary name and renamed to a.jsonl, t.txt renamed to t.json) reads
// its committed content again as the new name says, in the rename's own
// transaction: otherwise the lines of a shared log saved that way would
// name no one, and every user would see them all. A log whose lines named
// users, renamed to a name that reads no users from them, is hidden from
// every user's mount rather than made public (isolation fails closed).

// parseKind is how metadata is read from a file named name.
func parseKind(name string) string {
	switch {
	case memory.IsJSONLog(name):
		return "jsonlog"
	case isLogName(name):
		return "log"
	case strings.EqualFold(path.Ext(name), ".json"):
		return "json"
	}
	return "text"
}

// reparsed is a memory's metadata read again under a new name.
type reparsed struct {
	ino   uint64
	p     memory.Parsed
	lines *lineScan // nil: not a log
}

// reparseAs reads the committed content of the regular file ino again as
// a file named newName would be, when oldName is of another kind; nil
// when nothing changes. Caller holds mu.
func (s *Store) reparseAs(ino uint64, mode uint32, oldName, newName string) (*reparsed, error) {
	if mode&syscall.S_IFMT != syscall.S_IFREG || parseKind(oldName) == parseKind(newName) {
		return nil, nil
	}
	i, err := s.inode(ino)
	if err != nil {
		return nil, err
	}
	s.icMu.RLock()
	size := i.Size
	s.icMu.RUnlock()
	r := &reparsed{ino: ino}
	want := uint64(headMax + 1)
	if isLogName(newName) {
		want = lineScanMax + 1
	}
	b := make([]byte, min(size, want))
	n, err := s.readLocked(ino, nil, b, 0)
	if err != nil {
		return nil, err
	}
	b = b[:n]
	if size > headMax {
		r.p = memory.ParseLarge(newName, b[:min(len(b), 64)])
	} else {
		r.p = memory.Parse(newName, b)
	}
	if isLogName(newName) {
		sc := lineScan{tooBig: true}
		if size <= lineScanMax {
			sc = scanBytes(memory.IsJSONLog(newName), 0, b)
		}
		r.lines = &sc
	}
	return r, nil
}

// apply writes the record of r.ino with its metadata read again, in t.
func (r *reparsed) apply(t backend.Txn) error {
	rec, err := getRecord(t, r.ino)
	if err != nil {
		return err
	}
	named := len(rec.LineUsers) > 0 || rec.LinesUnknown // some line named users, or may have
	rec.applyParse(r.p)
	if r.lines != nil {
		rec.applyLines(*r.lines)
	} else {
		rec.LineUsers, rec.LinePublic, rec.LinesAt, rec.LinesUnknown = nil, false, 0, false
		if named && rec.Owner == "" && len(rec.Meta.Users) == 0 && !rec.Unreadable {
			// A log whose lines named users, renamed to a name whose
			// metadata names none (turns.jsonl to turns.jsonl~, an
			// editor's backup): not made public, hidden instead, as
			// anything whose users cannot be told.
			rec.Unreadable = true
			rec.Error = "its lines named users, and as a file of this name it names none: hidden from every user's mount (rename it back to a log, or give it front matter)"
		}
	}
	return putRecord(t, r.ino, rec)
}
