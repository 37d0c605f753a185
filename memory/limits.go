package memory

import (
	"bytes"
	"fmt"
	"strings"
)

// Limits on what one memory declares. Every list key (tags, users,
// entities, related, and lists under unknown keys) keeps at most MaxValues
// values, and a tag, user, entity or related value longer than MaxValueLen
// bytes is dropped (it could not be a name in a view). What is dropped is
// reported as a parse problem; the file's bytes are stored as written.
const (
	MaxValues   = 256
	MaxValueLen = 255
)

// limit keeps the values of key within the limits above, appending what
// it dropped to errs.
func limit(key string, vals []string, errs []string) ([]string, []string) {
	long := 0
	out := vals[:0]
	for _, v := range vals {
		if len(v) > MaxValueLen {
			long++
			continue
		}
		out = append(out, v)
	}
	if long > 0 {
		errs = append(errs, fmt.Sprintf("%s: %d %s longer than %d bytes dropped", key, long, plural(long, "value"), MaxValueLen))
	}
	out = dedup(out)
	if len(out) > MaxValues {
		errs = append(errs, fmt.Sprintf("%s: %d values, only the first %d are kept", key, len(out), MaxValues))
		out = out[:MaxValues:MaxValues]
	}
	return out, errs
}

// limitExtra cuts lists under unknown keys to MaxValues values.
func limitExtra(extra map[string]any, errs []string) []string {
	for k, v := range extra {
		if l, ok := v.([]any); ok && len(l) > MaxValues {
			errs = append(errs, fmt.Sprintf("%s: %d values, only the first %d are kept", k, len(l), MaxValues))
			extra[k] = l[:MaxValues:MaxValues]
		}
	}
	return errs
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// Unparsed is the problem to report for a file over MaxParse bytes, whose
// metadata is not parsed, given its first bytes (up to MaxParse of them):
// nil when it declares none.
func Unparsed(name string, head []byte) error {
	if !HasMetadata(name) {
		return nil
	}
	head = head[:min(len(head), MaxParse)]
	if strings.EqualFold(ext(name), ".json") {
		if t := bytes.TrimLeft(head, " \t\r\n"); len(t) > 0 && t[0] == '{' {
			return fmt.Errorf("JSON over %d bytes: its metadata is not parsed", MaxParse)
		}
		return nil
	}
	rest, _, ok := frontMatterOpen(head)
	if !ok {
		return nil
	}
	if _, _, closed := frontMatterEnd(head, rest); closed {
		return fmt.Errorf("file over %d bytes: its front matter is not parsed", MaxParse)
	}
	return fmt.Errorf("front matter over %d bytes not parsed", MaxParse)
}
