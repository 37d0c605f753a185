package policy

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Operator is the host-local configuration of whoever runs mnemofs on a
// host (operator.yaml in the data directory, never in the store): the
// programs a lifecycle pass may run. Nothing reachable through a mount, the
// control socket's users other than the operator, MCP or a shared store
// can change it, and a program named here runs only in a pass of a store
// that is not read-only.
type Operator struct {
	// Consolidation writes summary.md of a session from its turns (on
	// its stdin); unset, the summary is extractive.
	Consolidation *Command `yaml:"consolidation"`
	// Extraction writes the body of semantic/profiles/<user>.md from the
	// user's own turns (on its stdin); unset, extractive.
	Extraction *Command `yaml:"extraction"`
}

// Command is a program to run: no shell, an argv list. A shell is what
// the operator writes out ([sh, -c, "..."]), never a default.
type Command struct {
	// Argv is the program and its arguments.
	Argv Argv `yaml:"command"`
	// Timeout bounds a run (default 1m); the program's process group is
	// killed past it.
	Timeout Duration `yaml:"timeout"`
}

// Argv is a YAML list of strings; a single string is refused rather
// than split, since splitting would need a shell's rules.
type Argv []string

// UnmarshalYAML reads the list.
func (a *Argv) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("line %d: command must be a list [program, argument, ...], not one string (for a shell, write it out: [sh, -c, \"...\"])", n.Line)
	}
	var l []string
	if err := n.Decode(&l); err != nil {
		return err
	}
	*a = l
	return nil
}

// DefaultCommandTimeout is a Command's timeout when none is given.
const DefaultCommandTimeout = Duration(time.Minute)

// ParseOperator reads operator.yaml. Empty input configures nothing.
func ParseOperator(b []byte) (Operator, error) {
	var o Operator
	if len(bytes.TrimSpace(b)) == 0 {
		return o, nil
	}
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err := d.Decode(&o); err != nil {
		return Operator{}, fmt.Errorf("operator.yaml: %v", err)
	}
	for name, c := range map[string]*Command{"consolidation": o.Consolidation, "extraction": o.Extraction} {
		if c != nil {
			if err := c.validate(); err != nil {
				return Operator{}, fmt.Errorf("operator.yaml: %s: %v", name, err)
			}
		}
	}
	return o, nil
}

func (c *Command) validate() error {
	if len(c.Argv) == 0 || strings.TrimSpace(c.Argv[0]) == "" {
		return errors.New("command must be a list: [program, argument, ...]")
	}
	for _, a := range c.Argv {
		if strings.ContainsRune(a, 0) {
			return errors.New("command has a NUL byte")
		}
	}
	if c.Timeout < 0 {
		return errors.New("timeout must not be negative")
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultCommandTimeout
	}
	return nil
}

// OperatorExample is what README and errors show.
const OperatorExample = `consolidation:
  command: [llm, -s, "Summarise this conversation"]
  timeout: 1m`
