package memory

import (
	"errors"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// decodeYAML decodes front matter into key/values in time linear in its
// size. yaml.Unmarshal into a map compares every key of a mapping with
// every other one (quadratic: 40,000 keys took 3.6 s, a 4 MiB block would
// take minutes inside a close), so the document is parsed into nodes
// (linear) and converted here: duplicate keys are found with a map, and
// what aliases expand to is bounded by a budget proportional to the input.
// Values are those yaml.Unmarshal gives (scalars are decoded by yaml
// itself), except that nested mappings are always map[string]any (their
// keys as written), which the store can encode as JSON. Most front matter
// is decoded without the parser (simpleYAML), with the same result.
func decodeYAML(src []byte) (map[string]any, error) {
	if kv, ok := simpleYAML(src); ok {
		return kv, nil
	}
	return decodeNodes(src)
}

// decodeNodes is decodeYAML through yaml's parser.
func decodeNodes(src []byte) (map[string]any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, nil
		}
		root = root.Content[0]
	}
	if root.Kind == 0 {
		return nil, nil // empty
	}
	d := &yamlDecoder{budget: 3*len(src) + 64<<10, expanding: map[*yaml.Node]bool{}}
	v, err := d.value(root)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return x, nil
	}
	return nil, fmt.Errorf("line %d: cannot unmarshal %s into key: value pairs", root.Line, root.ShortTag())
}

// maxYAMLDepth bounds nesting (yaml's own scanner stops at 10,000 levels;
// aliases can nest further).
const maxYAMLDepth = 10000

var errAliasing = errors.New("document contains excessive aliasing")

type yamlDecoder struct {
	// budget is what may still be produced, in nodes plus scalar bytes:
	// a document without aliases stays well within it, and aliases
	// cannot expand it beyond a few times the input.
	budget int
	depth  int
	// expanding holds the aliases being expanded, to refuse an anchor
	// whose value contains itself.
	expanding map[*yaml.Node]bool
}

func (d *yamlDecoder) value(n *yaml.Node) (any, error) {
	d.budget -= 1 + len(n.Value)
	if d.budget < 0 {
		return nil, errAliasing
	}
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxYAMLDepth {
		return nil, fmt.Errorf("line %d: nested more than %d levels deep", n.Line, maxYAMLDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.value(n.Content[0])
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: unknown anchor %q", n.Line, n.Value)
		}
		if d.expanding[n] {
			return nil, fmt.Errorf("anchor '%s' value contains itself", n.Value)
		}
		d.expanding[n] = true
		defer delete(d.expanding, n)
		return d.value(n.Alias)
	case yaml.ScalarNode:
		if n.ShortTag() == "!!str" {
			return n.Value, nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		return v, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := d.value(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return d.mapping(n)
	}
	return nil, fmt.Errorf("line %d: cannot decode node of kind %d", n.Line, n.Kind)
}

func (d *yamlDecoder) mapping(n *yaml.Node) (map[string]any, error) {
	out := make(map[string]any, len(n.Content)/2)
	lines := make(map[string]int, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			merges = append(merges, v)
			continue
		}
		line := k.Line
		for k.Kind == yaml.AliasNode && k.Alias != nil && !d.expanding[k] {
			k = k.Alias
		}
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a mapping key must be a scalar", line)
		}
		null := k.ShortTag() == "!!null"
		key := k.Value
		if t := k.ShortTag(); !null && t != "!!str" {
			// As yaml decodes a key into a map of strings (a !!binary
			// one is its bytes, a bad one an error).
			if err := k.Decode(&key); err != nil {
				return nil, err
			}
		}
		if null {
			key = "\x00null" // null keys are dropped, but twice is an error, as in yaml
		}
		if prev, dup := lines[key]; dup {
			return nil, fmt.Errorf("line %d: mapping key %q already defined at line %d", line, k.Value, prev)
		}
		lines[key] = line
		if null {
			continue // as yaml.Unmarshal into a map of strings does
		}
		val, err := d.value(v)
		if err != nil {
			return nil, err
		}
		out[key] = val
	}
	// Merged keys (<<: *base) never replace the mapping's own, and the
	// first merge that sets a key wins.
	for _, m := range merges {
		var maps []*yaml.Node
		if m.Kind == yaml.SequenceNode {
			maps = m.Content
		} else {
			maps = []*yaml.Node{m}
		}
		for _, mm := range maps {
			v, err := d.value(mm)
			if err != nil {
				return nil, err
			}
			src, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("line %d: map merge requires map or sequence of maps as the value", mm.Line)
			}
			for k, v := range src {
				if _, set := out[k]; !set {
					out[k] = v
				}
			}
		}
	}
	return out, nil
}

// isMerge is yaml's test for a merge key.
func isMerge(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "<<" && (n.Tag == "" || n.Tag == "!" || n.Tag == "!!merge" || n.Tag == "tag:yaml.org,2002:merge")
}
