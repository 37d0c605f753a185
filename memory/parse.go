package memory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// MaxParse is the largest file whose metadata is parsed; larger files are
// stored and searchable but declare no metadata, and one that starts with
// front matter (or a JSON object) gets a problem saying so (Unparsed).
const MaxParse = 4 << 20

// Parsed is the result of Parse.
type Parsed struct {
	Meta Meta
	// BodyOffset is where the text after the front matter starts.
	BodyOffset int
	// Err describes broken front matter or bad values; the bytes are kept
	// as written regardless.
	Err error
	// Unreadable: the file has a metadata block that could not be read
	// (not valid YAML or JSON, never closed, or over MaxParse), so whom
	// it names is unknown; isolation hides such a memory (fails closed).
	Unreadable bool
}

// HasMetadata reports whether files of this name can declare metadata
// (logs cannot), so callers can skip reading them for Parse.
func HasMetadata(name string) bool {
	switch ext(name) {
	case ".jsonl", ".ndjson", ".log":
		return false
	}
	return true
}

// Parse reads metadata from a memory named name with the given content.
func Parse(name string, content []byte) Parsed {
	if len(content) > MaxParse {
		return ParseLarge(name, content)
	}
	var p Parsed
	switch ext(name) {
	case ".json":
		p.Err = parseJSON(content, &p.Meta)
		p.Unreadable = errors.Is(p.Err, errUnreadable)
	case ".jsonl", ".ndjson", ".log":
		// Logs carry no file-level metadata.
	default:
		p.BodyOffset, p.Err = parseFrontMatter(content, &p.Meta)
		p.Unreadable = errors.Is(p.Err, errUnreadable)
	}
	return p
}

// ParseLarge is Parse for a file over MaxParse, of which head is the
// start: its metadata is not read, and a file that starts like a metadata
// block says so (Err, Unreadable) rather than silently declaring nothing.
func ParseLarge(name string, head []byte) Parsed {
	var p Parsed
	if p.Err = Unparsed(name, head); p.Err != nil {
		p.Unreadable = true
	}
	return p
}

// errUnreadable marks front matter that could not be read at all.
var errUnreadable = errors.New("unreadable")

// quiet wraps an error without adding to the message.
type quiet struct{ err error }

func (q quiet) Error() string { return "" }
func (q quiet) Unwrap() error { return q.err }

func errQuiet(err error) error { return quiet{err} }

// keyLine is a block whose first line that says something starts as a
// YAML key ("user:").
var keyLine = regexp.MustCompile(`^(?:[ \t\r]*\n)*[ \t]*[\p{L}_][\p{L}\p{N}_-]*[ \t]*:`)

// frontMatterOpen finds the line opening front matter: the first line,
// after a UTF-8 byte order mark if there is one, or the first after blank
// lines (late: what follows is front matter only if it reads as a map).
// It returns the lines after it, or ok false when there is none.
func frontMatterOpen(content []byte) (rest []byte, late, ok bool) {
	b := bytes.TrimPrefix(content, []byte("\xef\xbb\xbf"))
	for {
		first, next, more := cutLine(b)
		switch t := strings.TrimRight(string(first), " \t\r"); {
		case t == "---" && more:
			return next, late, true
		case t == "" && more:
			b, late = next, true
		default:
			return nil, false, false
		}
	}
}

func parseFrontMatter(content []byte, m *Meta) (int, error) {
	rest, late, ok := frontMatterOpen(content)
	if !ok {
		return 0, nil
	}
	yamlEnd, end, closed := frontMatterEnd(content, rest)
	if !closed {
		if late {
			return 0, nil // a rule after blank lines, never closed: text
		}
		return 0, fmt.Errorf("front matter starts with --- but is never closed by a --- line%w", errQuiet(errUnreadable))
	}
	yml := content[len(content)-len(rest) : yamlEnd]
	if late && !keyLine.Match(yml) {
		return 0, nil // text between two rules after blank lines
	}
	kv, err := decodeYAML(yml)
	if err != nil {
		// After blank lines too, once it starts as keys: whom it names
		// cannot be told, and isolation fails closed.
		return end, fmt.Errorf("front matter is not valid YAML: %v%w", yamlMsg(err), errQuiet(errUnreadable))
	}
	if md, ok := kv["metadata"].(map[string]any); ok {
		for k, v := range md { // as in a JSON memory (parseJSON)
			kv[k] = v
		}
	}
	if errs := m.fromMap(kv); len(errs) > 0 {
		return end, fmt.Errorf("front matter: %s", strings.Join(errs, "; "))
	}
	return end, nil
}

// frontMatterEnd finds the line closing front matter in content, whose
// lines after the opening one are rest: it returns where that line starts
// (the end of the YAML) and the offset after it (the body's start).
func frontMatterEnd(content, rest []byte) (int, int, bool) {
	for len(rest) > 0 {
		line, next, _ := cutLine(rest)
		t := bytes.TrimRight(line, " \t\r")
		if string(t) == "---" || string(t) == "..." {
			return len(content) - len(rest), len(content) - len(next), true
		}
		rest = next
	}
	return 0, 0, false
}

func parseJSON(content []byte, m *Meta) error {
	if len(bytes.TrimSpace(content)) == 0 {
		return nil
	}
	var top any
	if err := json.Unmarshal(content, &top); err != nil {
		return fmt.Errorf("not valid JSON: %v%w", err, errQuiet(errUnreadable))
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return nil // arrays and scalars are fine, they just carry no metadata
	}
	if userKeyTwice(bytes.TrimSpace(content)) {
		// json.Unmarshal keeps the last, another reader the first.
		return fmt.Errorf("metadata: a user key appears twice, so whose it is cannot be told%w", errQuiet(errUnreadable))
	}
	kv := map[string]any{}
	for k, v := range obj {
		if _, known := keyByName[strings.ToLower(k)]; known {
			kv[k] = v
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		for k, v := range md {
			kv[k] = v
		}
	}
	if errs := m.fromMap(kv); len(errs) > 0 {
		return fmt.Errorf("metadata: %s", strings.Join(errs, "; "))
	}
	return nil
}

func ext(name string) string { return strings.ToLower(path.Ext(name)) }

func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

func yamlMsg(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}
