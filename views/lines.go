package views

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mnemofs/mnemofs/memory"
	"github.com/mnemofs/mnemofs/search"
)

// Logs. Each line of a .jsonl/.ndjson log and each entry of a .log is a
// memory for retrieval: indexed on its own (search.Part = its line
// number), with its own metadata (memory.ParseLine). The catalog keeps,
// for a log, every line's users, speaker, created time and tags (LineMeta),
// and the log's Entry carries the union of its lines' users and tags
// (the first memory.MaxValues of each) and the span of their dates, so
// that a file-level filter keeps a log when any line could match; the
// line-level filter (lineMatch) then decides line by line.

// LineMeta is what one line of a log declares (memory.ParseLine).
type LineMeta struct {
	Line    uint32 // from 1
	Users   []string
	Speaker string
	Created time.Time // zero: the line names no time (the file's counts)
	Tags    []string
	// off and size: where the line's bytes are in the file (without
	// its newline).
	off  uint64
	size uint32
}

// logLines is the line metadata of one log, in line order. Shared by the
// Entries of successive appends: an append makes a new logLines whose
// lines extend the old slice (readers of the old one read only its
// length), never changing what a reader may hold.
type logLines struct {
	lines        []LineMeta
	users, tags  []string
	first, last  time.Time // span of the lines' own times (zero: none)
	hasLineDates bool
	undated      bool     // some line names no time
	days         []string // the days its lines name, as by-date/ does (the first memory.MaxValues)
}

// extend returns lg (nil: none yet) with more lines.
func (lg *logLines) extend(more []LineMeta) *logLines {
	out := &logLines{}
	if lg != nil {
		*out = *lg
		out.users, out.tags, out.days = slices.Clone(lg.users), slices.Clone(lg.tags), slices.Clone(lg.days)
	}
	out.lines = append(out.lines, more...)
	for _, l := range more {
		out.users = addValues(out.users, l.Users)
		out.tags = addValues(out.tags, l.Tags)
		out.undated = out.undated || l.Created.IsZero()
		if !l.Created.IsZero() {
			if !out.hasLineDates || l.Created.Before(out.first) {
				out.first = l.Created
			}
			if !out.hasLineDates || l.Created.After(out.last) {
				out.last = l.Created
			}
			out.hasLineDates = true
			out.days = addValues(out.days, []string{l.Created.UTC().Format("2006/01/02")})
		}
	}
	return out
}

// addValues adds the values of vs not yet in list, up to memory.MaxValues.
func addValues(list, vs []string) []string {
	for _, v := range vs {
		if len(list) < memory.MaxValues && !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

// line returns the metadata of line n.
func (lg *logLines) line(n uint32) (LineMeta, bool) {
	if lg == nil {
		return LineMeta{}, false
	}
	i := sort.Search(len(lg.lines), func(i int) bool { return lg.lines[i].Line >= n })
	if i < len(lg.lines) && lg.lines[i].Line == n {
		return lg.lines[i], true
	}
	return LineMeta{}, false
}

// logParts makes one indexed part per non-empty line of text, which
// starts at byte base of its file, numbering from first, with the line's
// metadata; it returns how many lines (empty or not) the text has.
func logParts(text string, first uint32, base uint64) ([]search.Part, []LineMeta, uint32) {
	lines := strings.Split(text, "\n")
	var parts []search.Part
	var metas []LineMeta
	off := base
	for i, l := range lines {
		at := off
		off += uint64(len(l)) + 1
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := first + uint32(i)
		pl := memory.ParseLine([]byte(l))
		m := LineMeta{Line: n, Users: pl.Users, Speaker: pl.Speaker, Tags: pl.Tags, off: at, size: uint32(len(l))}
		if pl.Created != nil {
			m.Created = *pl.Created
		}
		parts = append(parts, search.Part{Part: n, Text: lineIndexText(pl), Meta: lineMetaText(pl)})
		metas = append(metas, m)
	}
	return parts, metas, uint32(len(lines))
}

// lineIndexText is what search sees of a log line: as for a file
// (indexText), the words among its metadata values (users, speaker, tags,
// other keys' short phrases), its date in words, and its body (for a
// record without a text field, all its other keys' strings).
func lineIndexText(l memory.Line) string {
	var b strings.Builder
	b.WriteString(lineMetaText(l))
	if l.Body == "" {
		// A record with no text field: its strings are its text.
		for _, k := range sortedKeys(l.Extra) {
			if s, ok := l.Extra[k].(string); ok && !isWords(s) {
				b.WriteString(s)
				b.WriteByte('\n')
			}
		}
	}
	if l.Created != nil {
		b.WriteString(l.Created.UTC().Format("2 January 2006\n"))
	}
	b.WriteString(l.Body)
	return b.String()
}

// lineMetaText is the words among a log line's metadata values (users,
// speaker, tags, other keys' short phrases), one a line.
func lineMetaText(l memory.Line) string {
	var b strings.Builder
	add := func(v string) {
		if isWords(v) {
			b.WriteString(v)
			b.WriteByte('\n')
		}
	}
	for _, list := range [][]string{l.Tags, l.Users} {
		for _, v := range list {
			add(v)
		}
	}
	add(l.Speaker)
	for _, k := range sortedKeys(l.Extra) {
		if s, ok := l.Extra[k].(string); ok {
			add(s)
		}
	}
	return b.String()
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// lineMatch reports whether line n of the log ent passes the line-level
// part of f: users, tags and dates as the line declares them (a line
// without a time has the file's).
func lineMatch(ent *Entry, n uint32, f Filter) bool {
	if ent == nil || ent.log == nil {
		return true
	}
	l, ok := ent.log.line(n)
	if !ok || f.Reader != nil && !f.Reader.SeesLine(ent.Ino, n) {
		return false
	}
	for _, u := range f.Users {
		if !slices.Contains(l.Users, u) {
			return false
		}
	}
	for _, t := range f.Tags {
		if !slices.Contains(l.Tags, t) {
			return false
		}
	}
	created := l.Created
	if created.IsZero() {
		created = ent.Created
	}
	if f.Date != "" && !strings.HasPrefix(created.UTC().Format("2006/01/02"), f.Date) {
		return false
	}
	if f.After != nil && created.Before(*f.After) {
		return false
	}
	return f.Before == nil || created.Before(*f.Before)
}

// lineFiltered reports whether f has a line-level part at all.
func (f Filter) lineFiltered() bool {
	return len(f.Users) > 0 || len(f.Tags) > 0 || f.Date != "" || f.After != nil || f.Before != nil || f.Reader != nil
}

// dateSpan is the span of created times a memory covers: its own, or
// for a log whose lines name times, theirs (with the file's own time for
// lines that name none).
func (ent *Entry) dateSpan() (time.Time, time.Time) {
	if ent.log == nil || !ent.log.hasLineDates {
		return ent.Created, ent.Created
	}
	first, last := ent.log.first, ent.log.last
	if ent.log.undated && ent.Created.Before(first) {
		first = ent.Created
	}
	if ent.log.undated && ent.Created.After(last) {
		last = ent.Created
	}
	return first, last
}

// onDate reports whether the memory, spanning first to last, is of a day
// with the prefix date ("2024", "2024/05", "2024/05/01"): a log when one
// of its lines is (or, past the days it keeps, when its span reaches it).
func (ent *Entry) onDate(date string, first, last time.Time) bool {
	day := func(t time.Time) string { return t.UTC().Format("2006/01/02") }
	if ent.log == nil || !ent.log.hasLineDates {
		return strings.HasPrefix(day(first), date)
	}
	if ent.log.undated && strings.HasPrefix(day(ent.Created), date) {
		return true
	}
	for _, d := range ent.log.days {
		if strings.HasPrefix(d, date) {
			return true
		}
	}
	if len(ent.log.days) < memory.MaxValues {
		return false
	}
	lo, hi := date, date+"\xff" // every day with the prefix sorts between
	return day(first) <= hi && day(last) >= lo
}

// setLog gives a log's Entry its lines, and their users and tags.
func (ent *Entry) setLog(lg *logLines) {
	ent.log = lg
	ent.Users = addValues(slices.Clone(ent.Users), lg.users)
	ent.Tags = addValues(slices.Clone(ent.Tags), lg.tags)
}
