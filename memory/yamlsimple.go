package memory

import (
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// simpleYAML decodes the front matter most memories have, one
// `key: value` a line whose value is a plain scalar or a flow sequence of
// plain scalars, without yaml's parser: for five such lines the parser
// and its nodes cost ~50 µs, a third of an import's CPU. It returns false
// for anything else (comments, quotes at the start of a value, nesting,
// block scalars, anchors, tags, tabs, carriage returns, non-ASCII bytes,
// duplicate keys, keys yaml would not read as strings), which yaml then
// decodes as before. The structure is all that is read here: every scalar
// is resolved by yaml itself (its tag, then its value), so the result is
// the one decodeYAML gives through the parser.
func simpleYAML(src []byte) (map[string]any, bool) {
	s := string(src)
	out := make(map[string]any, strings.Count(s, "\n")+1)
	for line := range strings.SplitSeq(s, "\n") {
		if strings.Trim(line, " ") == "" {
			continue
		}
		colon := strings.IndexByte(line, ':')
		if colon <= 0 || colon > maxSimpleKey || !simpleKey(line[:colon]) {
			return nil, false
		}
		key, rest := line[:colon], line[colon+1:]
		if rest != "" && rest[0] != ' ' {
			return nil, false // key:value is one plain scalar in yaml
		}
		if _, dup := out[key]; dup {
			return nil, false // an error, in yaml's words
		}
		if !isStr(key) {
			return nil, false // true:, null: ... are not string keys
		}
		v, ok := simpleValue(strings.Trim(rest, " "))
		if !ok {
			return nil, false
		}
		out[key] = v
	}
	return out, len(out) > 0
}

// maxSimpleKey is well under yaml's 1024-character limit on implicit keys.
const maxSimpleKey = 128

func simpleKey(k string) bool {
	if c := k[0]; !isLetter(c) && c != '_' {
		return false
	}
	for i := 1; i < len(k); i++ {
		if c := k[i]; !isLetter(c) && !isDigit(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// simpleValue is a trimmed value: empty (null), [a, b, ...] or a plain
// scalar on its line.
func simpleValue(v string) (any, bool) {
	if v == "" {
		return scalarValue(v)
	}
	if v[0] != '[' {
		if !plainScalar(v, false) {
			return nil, false
		}
		return scalarValue(v)
	}
	if v[len(v)-1] != ']' {
		return nil, false
	}
	inner := v[1 : len(v)-1]
	if strings.Trim(inner, " ") == "" {
		return []any{}, true
	}
	items := make([]any, 0, strings.Count(inner, ",")+1)
	for it := range strings.SplitSeq(inner, ",") {
		it = strings.Trim(it, " ")
		if !plainScalar(it, true) {
			return nil, false // also [a,,b] and [a, b,]
		}
		x, ok := scalarValue(it)
		if !ok {
			return nil, false
		}
		items = append(items, x)
	}
	return items, true
}

// plainScalar reports whether s, trimmed and not empty, is read by yaml as
// one plain scalar on one line: it starts with a letter, a digit or one of
// _ . + / ~ ( (or a - followed by a letter, digit or .), and holds only
// printable ASCII without # [ ] { } & * ! | > % @ ` \ and, in a flow
// sequence, without : , ' ". A : is allowed outside flow only when a
// non-space follows it.
func plainScalar(s string, flow bool) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case isLetter(c) || isDigit(c) || strings.IndexByte("_.+/~(", c) >= 0:
	case c == '-' && len(s) > 1 && (isLetter(s[1]) || isDigit(s[1]) || s[1] == '.'):
	default:
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c < ' ' || c > '~' || strings.IndexByte("#[]{}&*!|>%@`\\", c) >= 0:
			return false
		case flow && strings.IndexByte(":,'\"", c) >= 0:
			return false
		case c == ':' && (i+1 == len(s) || s[i+1] == ' '):
			return false
		}
	}
	return true
}

// scalarValue is what decodeYAML gives for the plain scalar s, decoded by
// yaml (which resolves its tag as the parser does). A word is looked up
// first: most are strings, which yaml tells from their first letter.
func scalarValue(s string) (any, bool) {
	n := yaml.Node{Kind: yaml.ScalarNode, Value: s}
	if s != "" && isLetter(s[0]) && n.ShortTag() == "!!str" {
		return s, true
	}
	if v, ok := plainNumberOrTime(s, &n); ok {
		return v, true
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, false // yaml's error, from yaml
	}
	return v, true
}

// plainNumberOrTime gives the value of s, which yaml resolves to an int,
// a float or a timestamp, for the plain forms memories write (123, -0.94,
// 2024-01-01T09:01:00Z), as yaml's decoding of n would: yaml resolves the
// tag (and so whether s is one of these), strconv and time read the
// value, without the decoder's reflection (half of a typical front
// matter's time). ok is false for anything else.
func plainNumberOrTime(s string, n *yaml.Node) (any, bool) {
	if s == "" || !(isDigit(s[0]) || s[0] == '-') {
		return nil, false
	}
	switch n.ShortTag() {
	case "!!int":
		if digits := strings.TrimPrefix(s, "-"); len(digits) <= 18 && decimal(digits) && (digits[0] != '0' || s == "0") {
			if v, err := strconv.ParseInt(s, 10, 64); err == nil {
				return int(v), true
			}
		}
	case "!!float":
		whole, frac, ok := strings.Cut(strings.TrimPrefix(s, "-"), ".")
		if ok && decimal(whole) && decimal(frac) && (whole[0] != '0' || whole == "0") {
			if v, err := strconv.ParseFloat(s, 64); err == nil {
				return v, true
			}
		}
	case "!!timestamp":
		if len(s) >= 20 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[len(s)-1] == 'Z' {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t, true
			}
		}
	}
	return nil, false
}

// decimal reports whether s is one or more ASCII digits.
func decimal(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func isStr(s string) bool {
	n := yaml.Node{Kind: yaml.ScalarNode, Value: s}
	return n.ShortTag() == "!!str"
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
