package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// args are the arguments of one call, checked field by field so that every
// mistake gets a message naming the field, what it should be, and what was
// sent. A field sent as null counts as absent.
type args struct {
	m   map[string]json.RawMessage
	cmd string // "memory create", "search": for messages
}

// parseArgs decodes the arguments object of a call. Invalid UTF-8 is
// refused here, on the bytes the client sent (a JSON decoder would replace
// it silently).
func parseArgs(raw []byte) (args, error) {
	a := args{m: map[string]json.RawMessage{}}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return a, nil
	}
	if !utf8.Valid(raw) {
		return a, errorf("the arguments are not valid UTF-8: send text as UTF-8 (binary content cannot go through the memory tool)")
	}
	if raw[0] != '{' {
		return a, errorf("the arguments must be a JSON object, got %s", kind(raw))
	}
	if err := json.Unmarshal(raw, &a.m); err != nil {
		return a, errorf("the arguments are not a valid JSON object: %v", err)
	}
	return a, nil
}

// has reports whether field k was sent (and is not null).
func (a args) has(k string) bool {
	v, ok := a.m[k]
	return ok && string(v) != "null"
}

// only refuses fields other than allowed, naming the ones the command takes.
func (a args) only(allowed ...string) error {
	var extra []string
	for k := range a.m {
		if !slices.Contains(allowed, k) && a.has(k) {
			extra = append(extra, "`"+k+"`")
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	if len(allowed) == 0 {
		return errorf("unknown parameter %s for %s: it takes none", strings.Join(extra, ", "), a.cmd)
	}
	return errorf("unknown parameter %s for %s: it takes %s", strings.Join(extra, ", "), a.cmd, strings.Join(allowed, ", "))
}

// str returns string field k (ok false when absent).
func (a args) str(k string) (s string, ok bool, err error) {
	if !a.has(k) {
		return "", false, nil
	}
	v := a.m[k]
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false, errorf("`%s` must be a string, got %s", k, kind(v))
	}
	if lone := strings.Count(s, "\uFFFD") - replacementsSent(v); lone > 0 {
		return "", false, errorf("`%s` is not valid UTF-8 text: it holds %d unpaired surrogate escape(s) (\\uD800-\\uDFFF alone); send UTF-8 text", k, lone)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", false, errorf("`%s` holds a NUL byte (\\u0000): the memory tool takes text, and NUL makes it binary", k)
	}
	return s, true, nil
}

// need returns required string field k.
func (a args) need(k string) (string, error) {
	s, ok, err := a.str(k)
	if err == nil && !ok {
		err = errorf("missing required parameter `%s` for %s", k, a.cmd)
	}
	return s, err
}

// integer returns integer field k (ok false when absent).
func (a args) integer(k string) (n int64, ok bool, err error) {
	if !a.has(k) {
		return 0, false, nil
	}
	v := a.m[k]
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false, errorf("`%s` must be an integer, got %s", k, kind(v))
	}
	return int64(f), true, nil
}

// ints returns integer-array field k (ok false when absent).
func (a args) ints(k string) (ns []int64, ok bool, err error) {
	if !a.has(k) {
		return nil, false, nil
	}
	v := a.m[k]
	var fs []json.RawMessage
	if err := json.Unmarshal(v, &fs); err != nil {
		return nil, false, errorf("`%s` must be an array of integers, got %s", k, kind(v))
	}
	for _, x := range fs {
		var f float64
		if err := json.Unmarshal(x, &f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return nil, false, errorf("`%s` must be an array of integers, but holds %s", k, kind(x))
		}
		ns = append(ns, int64(f))
	}
	return ns, true, nil
}

// replacementsSent counts the U+FFFD characters a JSON string literally
// holds (as the character or as an escape): any more after decoding were
// made by the decoder from unpaired surrogates.
func replacementsSent(v json.RawMessage) int {
	return bytes.Count(v, []byte("\uFFFD")) + bytes.Count(bytes.ToLower(v), []byte(`\ufffd`))
}

// kind names the JSON type of v for messages, with a short excerpt.
func kind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	t := "a value"
	switch {
	case len(v) == 0:
		return "nothing"
	case v[0] == '"':
		t = "a string"
	case v[0] == '{':
		t = "an object"
	case v[0] == '[':
		t = "an array"
	case string(v) == "true" || string(v) == "false":
		t = "a boolean"
	case string(v) == "null":
		return "null"
	default:
		t = "a number"
	}
	return fmt.Sprintf("%s (%s)", t, clip(string(v), 40))
}
