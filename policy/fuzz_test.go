package policy

import (
	"reflect"
	"testing"
)

// FuzzPolicy: any bytes written to meta/policy.yaml are refused with an
// error or give a policy that validates, names no program, and survives
// Marshal and Parse unchanged; a stored policy never panics either and
// never keeps a consolidation section.
func FuzzPolicy(f *testing.F) {
	for _, s := range []string{"", "trees:\n  notes: {update: versioned}\n", "lifecycle:\n  trash_retention: 1ns\n",
		"consolidation:\n  command: id\n", "maintenance:\n  interval: 0\n", "a: [\n", "- x\n", "lifecycle:\n  working_idle: 1e400d\n",
		"trees:\n  \"\": {update: append}\n", "&a [*a]\n", "health:\n  files_per_dir: -1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, _, err := ParseStored(b); err == nil && p.Consolidation != nil {
			t.Fatal("a stored policy kept its consolidation section")
		}
		p, err := Parse(b)
		if err != nil {
			return
		}
		if p.Consolidation != nil {
			t.Fatal("an accepted policy names a program")
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted but invalid: %v", err)
		}
		q, err := Parse(Marshal(p))
		if err != nil {
			t.Fatalf("Marshal of an accepted policy does not parse: %v\n%s", err, Marshal(p))
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the policy:\n%+v\n%+v", p, q)
		}
	})
}

// FuzzOperator: any operator.yaml is refused or names programs as argv
// lists with a positive timeout.
func FuzzOperator(f *testing.F) {
	for _, s := range []string{"", OperatorExample, "consolidation:\n  command: \"rm -rf /\"\n", "consolidation:\n  command: []\n",
		"consolidation:\n  command: [\"\"]\n", "consolidation:\n  command: [a]\n  timeout: -1s\n", "x: 1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := ParseOperator(b)
		if err != nil || o.Consolidation == nil {
			return
		}
		c := o.Consolidation
		if len(c.Argv) == 0 || c.Argv[0] == "" || c.Timeout <= 0 {
			t.Fatalf("accepted a command that cannot run: %+v", c)
		}
	})
}
