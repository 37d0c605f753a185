package fusefs

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/mnemofs/mnemofs/store"
)

// TestPolicyFile: meta/policy.yaml shows the defaults, takes a valid
// policy (kept across a remount), refuses an invalid one with EINVAL at
// close and keeps the old, and is described in meta/schema.json.
func TestPolicyFile(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	tf := mountAt(t, data, store.Options{ScratchAge: -1})
	p := tf.path("meta/policy.yaml")
	def := read(t, p)
	for _, want := range []string{"semantic:", "update: versioned", "episodic:", "update: append", "working_idle: 1h", "sessions_cold: 30d"} {
		if !strings.Contains(def, want) {
			t.Errorf("default policy lacks %q:\n%s", want, def)
		}
	}
	ents, err := os.ReadDir(tf.path("meta"))
	must(t, err)
	listed := false
	for _, e := range ents {
		listed = listed || e.Name() == "policy.yaml"
	}
	if !listed {
		t.Error("meta/ does not list policy.yaml")
	}

	valid := "trees:\n  notes: {update: versioned}\nlifecycle:\n  working_idle: 2h\n"
	must(t, os.WriteFile(p, []byte(valid), 0o644))
	if got := read(t, p); got != valid {
		t.Fatalf("after writing a valid policy: %q", got)
	}

	// An invalid policy: the close fails with EINVAL, the old one stays.
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	must(t, err)
	_, err = f.WriteString("trees:\n  semantic: {update: sometimes}\n")
	must(t, err)
	wantErrno(t, f.Close(), syscall.EINVAL)
	if got := read(t, p); got != valid {
		t.Fatalf("an invalid policy replaced the valid one: %q", got)
	}
	if !strings.Contains(read(t, tf.path("meta/schema.json")), "sessions_importance") {
		t.Error("meta/schema.json does not document the policy")
	}

	tf.unmount()
	tf = mountAt(t, data, store.Options{ScratchAge: -1})
	if got := read(t, tf.path("meta/policy.yaml")); got != valid {
		t.Fatalf("policy after a remount: %q", got)
	}
	// truncate -s 0: back to the defaults.
	must(t, os.Truncate(tf.path("meta/policy.yaml"), 0))
	if got := read(t, tf.path("meta/policy.yaml")); got != def {
		t.Fatalf("after truncating to 0: %q, want the defaults", got)
	}
}
