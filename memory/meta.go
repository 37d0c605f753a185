package memory

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Meta is the metadata a memory declares about itself.
type Meta struct {
	ID         string         `json:"id,omitempty"`
	Type       string         `json:"type,omitempty"`
	Users      []string       `json:"users,omitempty"`
	Entities   []string       `json:"entities,omitempty"`
	Tags       []string       `json:"tags,omitempty"`
	Importance *float64       `json:"importance,omitempty"`
	Created    *time.Time     `json:"created,omitempty"`
	Expires    *time.Time     `json:"expires,omitempty"`
	Related    []string       `json:"related,omitempty"`
	Extra      map[string]any `json:"extra,omitempty"`
}

// Key is one recognised metadata key: its name, the aliases that mean
// the same, and how a value is read into a Meta. Keys feeds the front
// matter parser, the JSON path (top-level and "metadata" keys) and
// meta/schema.json alike.
type Key struct {
	Key     string
	Aliases []string
	Kind    string
	Doc     string
	set     func(m *Meta, v any) error
}

// Keys lists the recognised keys.
var Keys = []Key{
	{"id", []string{"memory_id"}, "string", "stable identifier of the memory",
		func(m *Meta, v any) error { m.ID = scalar(v); return nil }},
	{"type", nil, "string", "memory type; defaults to the top-level directory",
		func(m *Meta, v any) error { m.Type = scalar(v); return nil }},
	{"user", []string{"users"}, "string or list", "users the memory belongs to",
		func(m *Meta, v any) error { m.Users = append(m.Users, list(v)...); return nil }},
	{"entities", nil, "list", "entities such as user:alice, project:beta; user:X also counts as a user",
		func(m *Meta, v any) error {
			for _, e := range list(v) {
				m.Entities = append(m.Entities, e)
				if u, ok := UserEntity(e); ok {
					m.Users = append(m.Users, u)
				}
			}
			return nil
		}},
	{"tags", []string{"tag", "topic", "topics"}, "string or list", "tags; a comma-separated string is split",
		func(m *Meta, v any) error { m.Tags = append(m.Tags, list(v)...); return nil }},
	{"importance", []string{"importance_score"}, "number 0..1", "how much the memory matters",
		func(m *Meta, v any) error {
			f, err := number(v)
			if err != nil {
				return err
			}
			if f < 0 || f > 1 {
				return fmt.Errorf("must be between 0 and 1, got %v", f)
			}
			m.Importance = &f
			return nil
		}},
	{"created", nil, "date or RFC 3339 time", "when the memory was made (else the file's creation)",
		func(m *Meta, v any) (err error) { m.Created, err = timeOf(v); return err }},
	{"expires", nil, "date or RFC 3339 time", "when the memory stops being current",
		func(m *Meta, v any) (err error) { m.Expires, err = timeOf(v); return err }},
	{"related", []string{"related_files"}, "string or list", "paths or ids of linked memories",
		func(m *Meta, v any) error { m.Related = append(m.Related, list(v)...); return nil }},
}

// keyByName finds a key by its name or an alias (lower case).
var keyByName = func() map[string]*Key {
	m := map[string]*Key{}
	for k := range Keys {
		m[Keys[k].Key] = &Keys[k]
		for _, a := range Keys[k].Aliases {
			m[a] = &Keys[k]
		}
	}
	return m
}()

// fromMap fills m from decoded key/values, returning the problems found.
func (m *Meta) fromMap(kv map[string]any) []string {
	var errs []string
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic order of users and tags
	for _, k := range keys {
		v := kv[k]
		key, known := keyByName[strings.ToLower(k)]
		if !known {
			if m.Extra == nil {
				m.Extra = map[string]any{}
			}
			m.Extra[k] = v
			continue
		}
		if err := key.set(m, v); err != nil {
			errs = append(errs, fmt.Sprintf("key %q: %v", k, err))
		}
	}
	m.Users, errs = limit("users", m.Users, errs)
	m.Entities, errs = limit("entities", m.Entities, errs)
	m.Tags, errs = limit("tags", m.Tags, errs)
	m.Related, errs = limit("related", m.Related, errs)
	errs = limitExtra(m.Extra, errs)
	sort.Strings(errs)
	return errs
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(x)
	case time.Time:
		return x.Format(time.RFC3339)
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

func list(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if s := scalar(e); s != "" {
				out = append(out, s)
			}
		}
	case string:
		for _, s := range strings.Split(x, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	default:
		if s := scalar(v); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func number(v any) (float64, error) {
	switch x := v.(type) {
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		return strconv.ParseFloat(strings.TrimSpace(x), 64)
	}
	return 0, fmt.Errorf("not a number: %v", v)
}

var timeLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04",
	"2006-01-02", "2006/01/02", "3:04 pm on 2 January, 2006", "3:04 pm on 2 Jan, 2006",
}

// ParseTime reads the date and time forms accepted in front matter.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("not a date or time: %q (use YYYY-MM-DD or RFC 3339)", s)
}

func timeOf(v any) (*time.Time, error) {
	if t, ok := v.(time.Time); ok {
		t = t.UTC()
		return &t, nil
	}
	t, err := ParseTime(scalar(v))
	if err != nil {
		return nil, err
	}
	return &t, nil
}

func dedup(s []string) []string {
	if len(s) < 2 {
		return s
	}
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// UserEntity returns the user an entity names ("user:alice", the prefix in
// any case), and whether it names one.
func UserEntity(e string) (string, bool) {
	if len(e) > 5 && strings.EqualFold(e[:5], "user:") {
		return e[5:], true
	}
	return "", false
}
