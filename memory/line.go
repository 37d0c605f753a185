package memory

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"
)

// Line is what one line of a log (.jsonl, .ndjson) or one entry of a
// .log declares about itself. A log file carries no file-level metadata:
// each line is a memory for retrieval, with its own.
type Line struct {
	Users   []string   `json:"users,omitempty"`
	Speaker string     `json:"speaker,omitempty"`
	Created *time.Time `json:"created,omitempty"`
	Tags    []string   `json:"tags,omitempty"`
	// Body is the line's text: its text/content/message field, or the
	// whole line when it is no JSON object or has none of them.
	Body string `json:"body"`
	// Extra holds the keys not recognised above (kept, filterable).
	Extra map[string]any `json:"extra,omitempty"`
	// JSON: the line is a JSON object.
	JSON bool `json:"json"`
	// Unreadable: the line starts as a JSON object but cannot be read as
	// one (not valid JSON, over MaxLine), or it names its users
	// ambiguously (a user key twice, in two spellings, or one set at the
	// top and another under "metadata"): whom it names is unknown, and
	// isolation hides it (Unsure).
	Unreadable bool `json:"unreadable,omitempty"`
}

// IsJSONLog reports a log whose every line is a JSON object (.jsonl,
// .ndjson), as against a .log of text entries.
func IsJSONLog(name string) bool {
	switch ext(name) {
	case ".jsonl", ".ndjson":
		return true
	}
	return false
}

// Unsure reports whether nobody can tell whom line l of a log names: it is
// Unreadable, or it is not a JSON object in a JSON log (jsonLog), such as
// one line of an object written over several. A user's view of a shared
// log leaves such a line out (it fails closed, as a file whose front
// matter cannot be read is hidden).
func (l Line) Unsure(jsonLog bool) bool { return l.Unreadable || jsonLog && !l.JSON }

// MaxLine is the longest line whose JSON is parsed; a longer one is all
// body.
const MaxLine = 1 << 20

// Keys of a log line, in order of preference within each group.
var (
	lineUserKeys    = []string{"user", "users"}
	lineSpeakerKeys = []string{"speaker", "name", "role", "author", "from"}
	lineTimeKeys    = []string{"created", "timestamp", "time", "date", "ts"}
	lineTagKeys     = []string{"tags", "tag", "topic", "topics"}
	lineBodyKeys    = []string{"text", "content", "message", "body", "msg"}
)

// ParseLine reads the metadata of one log line (without its newline).
// It never fails: what cannot be read is left out (a bad date is no date),
// and a line that is not a JSON object is all body. A plain-text line
// that starts with a timestamp ("2024-05-01T10:00:00Z ...", "2024-05-01
// 10:00:00 ...", "[2024-05-01 10:00] ...") gets it as Created.
func ParseLine(line []byte) Line {
	t := bytes.TrimSpace(line)
	object := len(t) > 0 && t[0] == '{'
	if object && len(t) <= MaxLine {
		var obj map[string]any
		if err := json.Unmarshal(t, &obj); err == nil {
			l := lineFromObject(obj)
			l.Unreadable = l.Unreadable || userKeyTwice(t)
			return l
		}
	}
	l := Line{Body: string(t), Unreadable: object}
	l.Created, l.Body = leadingTime(l.Body)
	return l
}

// userKeyTwice reports a JSON object whose top level holds a user key
// (lineUserKeys) twice: json.Unmarshal keeps the last, another reader
// may keep the first.
func userKeyTwice(t []byte) bool {
	if bytes.Count(bytes.ToLower(t), []byte(`"user`)) < 2 {
		return false // the common case, without a second parse
	}
	d := json.NewDecoder(bytes.NewReader(t))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	seen := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return true
		}
		k, _ := tok.(string)
		if seen[k] && slices.Contains(lineUserKeys, strings.ToLower(k)) {
			return true
		}
		seen[k] = true
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return true
		}
	}
	return false
}

func lineFromObject(obj map[string]any) Line {
	l := Line{JSON: true}
	used := map[string]bool{}
	// Keys match case-insensitively; for each, the first present wins.
	lower := make(map[string]string, len(obj))
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if lk := strings.ToLower(k); lower[lk] == "" {
			lower[lk] = k
		}
	}
	get := func(names []string) (any, bool) {
		for _, n := range names {
			if k := lower[n]; k != "" {
				used[k] = true
				return obj[k], true
			}
		}
		return nil, false
	}
	var errs []string
	for _, n := range lineUserKeys {
		if k := lower[n]; k != "" {
			used[k] = true
			l.Users = append(l.Users, list(obj[k])...)
		}
	}
	// Entities naming users ("user:bob"), as in a file's front matter
	// (not taken out of Extra: they stay filterable as they are).
	if k := lower["entities"]; k != "" {
		l.Users = append(l.Users, entityUsers(obj[k])...)
	}
	// A user key in two spellings ("User" and "user"), or users also
	// named under "metadata" (as a .json file may name them) that differ
	// from the top level's: whose the line is cannot be told.
	for _, k := range keys {
		if lk := strings.ToLower(k); slices.Contains(lineUserKeys, lk) && lower[lk] != k {
			l.Unreadable = true
		}
	}
	if k := lower["metadata"]; k != "" {
		if md, ok := obj[k].(map[string]any); ok {
			var inner []string
			for mk, v := range md {
				switch lk := strings.ToLower(mk); {
				case slices.Contains(lineUserKeys, lk):
					inner = append(inner, list(v)...)
				case lk == "entities":
					inner = append(inner, entityUsers(v)...)
				}
			}
			switch {
			case len(l.Users) == 0:
				l.Users = inner
			case len(inner) > 0 && !sameSet(l.Users, inner):
				l.Unreadable = true
			}
		}
	}
	if v, ok := get(lineSpeakerKeys); ok {
		if s := scalar(v); len(s) <= MaxValueLen {
			l.Speaker = s
		}
	}
	for _, n := range lineTimeKeys {
		k := lower[n]
		if k == "" {
			continue
		}
		if tm := lineTime(obj[k]); tm != nil {
			used[k] = true
			l.Created = tm
			break
		}
	}
	for _, n := range lineTagKeys {
		if k := lower[n]; k != "" {
			used[k] = true
			l.Tags = append(l.Tags, list(obj[k])...)
		}
	}
	if v, ok := get(lineBodyKeys); ok {
		l.Body = bodyText(v)
	}
	for _, k := range keys {
		if !used[k] {
			if l.Extra == nil {
				l.Extra = map[string]any{}
			}
			l.Extra[k] = obj[k]
		}
	}
	l.Users, errs = limit("users", l.Users, errs)
	l.Tags, _ = limit("tags", l.Tags, errs)
	limitExtra(l.Extra, nil)
	return l
}

// entityUsers returns the users an entities value names ("user:alice",
// in any case).
func entityUsers(v any) []string {
	var out []string
	for _, e := range list(v) {
		if u, ok := UserEntity(e); ok {
			out = append(out, u)
		}
	}
	return out
}

// lineTime reads a time value: a date string, or a Unix time in seconds
// or milliseconds.
func lineTime(v any) *time.Time {
	if f, ok := v.(float64); ok {
		if f <= 0 || f > 1e14 {
			return nil
		}
		var t time.Time
		if f > 1e11 { // milliseconds
			t = time.UnixMilli(int64(f)).UTC()
		} else {
			t = time.Unix(int64(f), 0).UTC()
		}
		return &t
	}
	s, ok := v.(string)
	if !ok {
		return nil
	}
	t, err := ParseTime(s)
	if err != nil {
		return nil
	}
	return &t
}

// bodyText is the text of a body value: a string, or the text parts of a
// list of content blocks ([{"type":"text","text":"..."}], as chat APIs
// write them), joined by newlines.
func bodyText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, e := range x {
			switch b := e.(type) {
			case string:
				parts = append(parts, b)
			case map[string]any:
				for _, k := range []string{"text", "content"} {
					if s, ok := b[k].(string); ok {
						parts = append(parts, s)
						break
					}
				}
			}
		}
		return strings.Join(parts, "\n")
	case map[string]any:
		return bodyText([]any{x})
	case nil:
		return ""
	}
	return scalar(v)
}

// leadingTime splits a timestamp off the start of a plain-text log entry.
func leadingTime(s string) (*time.Time, string) {
	if len(s) < 10 || s[0] != '[' && (s[0] < '0' || s[0] > '9') {
		return nil, s
	}
	open := s[0] == '['
	rest := s
	if open {
		rest = s[1:]
	}
	// The longest prefix that parses: "date time", "dateTtime", "date".
	end := strings.IndexAny(rest, " ]\t")
	if end < 0 {
		end = len(rest)
	}
	cands := []int{end}
	if end < len(rest) && rest[end] == ' ' {
		if e2 := strings.IndexAny(rest[end+1:], " ]\t"); e2 > 0 {
			cands = []int{end + 1 + e2, end}
		} else if e2 < 0 {
			cands = []int{len(rest), end}
		}
	}
	for _, n := range cands {
		tok := strings.TrimSuffix(strings.TrimSuffix(rest[:n], ","), ":")
		if len(tok) < 10 || len(tok) > 40 {
			continue
		}
		t, err := ParseTime(tok)
		if err != nil {
			continue
		}
		body := rest[n:]
		if open {
			body = strings.TrimPrefix(body, "]")
		}
		return &t, strings.TrimLeft(body, " \t:-|]")
	}
	return nil, s
}

// sameSet reports whether a and b hold the same values.
func sameSet(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}
