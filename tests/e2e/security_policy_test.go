package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// writeSession writes a session of two turns and no summary under the
// mount mnt.
func writeSession(t *testing.T, mnt, name string) string {
	t.Helper()
	dir := filepath.Join(mnt, "episodic/sessions", name)
	check(t, os.MkdirAll(dir, 0o755))
	check(t, os.WriteFile(filepath.Join(dir, "turn-1.md"), []byte("We should fly to Lisbon in May.\n"), 0o644))
	check(t, os.WriteFile(filepath.Join(dir, "turn-2.md"), []byte("Agreed, book the flight.\n"), 0o644))
	return dir
}

// TestPolicyCommandNotFromMount: a --user mount cannot change the policy
// at all (the finding: an agent set consolidation.command and got it run
// as root); no mount and no CLI can put a command into the policy; a
// --read-only mount runs no pass; the one way to name a command is the
// operator's private operator.yaml, which runs it without a shell.
func TestPolicyCommandNotFromMount(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	marker := filepath.Join(t.TempDir(), "pwned")
	attack := "consolidation:\n  command: \"touch " + marker + "\"\nmaintenance:\n  interval: 1m\n"

	m := startMount(t, data, mnt, "--user", "alice")
	writeSession(t, mnt, "s1")
	pol := filepath.Join(mnt, "meta/policy.yaml")
	if err := os.WriteFile(pol, []byte(attack), 0o644); !errors.Is(err, syscall.EACCES) {
		t.Errorf("alice writing meta/policy.yaml: %v, want EACCES", err)
	}
	if err := os.WriteFile(pol, []byte("lifecycle:\n  trash_retention: 1ns\n"), 0o644); !errors.Is(err, syscall.EACCES) {
		t.Errorf("alice setting trash_retention: %v, want EACCES", err)
	}
	if err := os.Truncate(pol, 0); err == nil {
		t.Errorf("alice truncated meta/policy.yaml")
	}
	if fi, err := os.Stat(pol); err != nil || fi.Mode().Perm() != 0o444 {
		t.Errorf("meta/policy.yaml in a --user mount: %v %v, want mode 0444", fi.Mode(), err)
	}
	// The pass (through the mount, as the operator) runs no command.
	mustRun(t, "maintain", "--data", data)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a command from a --user mount ran")
	}
	m.stop(t, syscall.SIGTERM)

	// The operator's own mount: a policy naming a command is refused.
	m = startMount(t, data, mnt)
	if err := os.WriteFile(pol, []byte(attack), 0o644); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a policy with consolidation.command through the operator's mount: %v, want EINVAL", err)
	}
	check(t, os.WriteFile(pol, []byte("lifecycle:\n  working_idle: 2h\n"), 0o644))
	writeSession(t, mnt, "s2")
	m.stop(t, syscall.SIGTERM)
	bad := filepath.Join(t.TempDir(), "p.yaml")
	check(t, os.WriteFile(bad, []byte(attack), 0o644))
	r := runMnemofs(t, "policy", "set", "--data", data, bad)
	oneErrorLine(t, r, "operator.yaml")
	if out := mustRun(t, "policy", "show", "--data", data).stdout; !strings.Contains(out, "working_idle: 2h") {
		t.Errorf("policy show after a refused set:\n%s", out)
	}

	// A read-only mount runs no pass, even asked to.
	writeOperator(t, data, "consolidation:\n  command: [touch, "+marker+"]\n")
	m = startMount(t, data, mnt, "--read-only")
	r = runMnemofs(t, "maintain", "--data", data)
	if r.code == 0 || !strings.Contains(r.stderr, "read-only") {
		t.Errorf("maintain through a read-only mount:\n%s", r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a read-only mount ran the consolidation command")
	}
	if _, err := os.Stat(filepath.Join(mnt, "episodic/sessions/s2/summary.md")); err == nil {
		t.Fatal("a read-only mount wrote a summary")
	}
	m.stop(t, syscall.SIGTERM)

	// operator.yaml open to others is refused, and nothing runs.
	check(t, os.Chmod(operatorFile(data), 0o666))
	r = runMnemofs(t, "maintain", "--data", data)
	oneErrorLine(t, r, "writable by others")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a command from a world-writable operator.yaml ran")
	}
	// The operator's private file: the program runs, without a shell (the
	// argument with shell syntax is one argument).
	out := filepath.Join(t.TempDir(), "argv")
	writeOperator(t, data, "consolidation:\n  command: [sh, -c, 'printf \"%s\" \"$1\" > "+out+"; cat', x, 'a; touch "+marker+"']\n")
	mustRun(t, "maintain", "--data", data)
	if b, _ := os.ReadFile(out); string(b) != "a; touch "+marker {
		t.Errorf("the command's argument: %q", b)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("an argument was run by a shell")
	}
	m = startMount(t, data, mnt)
	if b, err := os.ReadFile(filepath.Join(mnt, "episodic/sessions/s2/summary.md")); err != nil || !strings.Contains(string(b), "Lisbon") {
		t.Errorf("the operator's command wrote no summary: %v %q", err, b)
	}
	m.stop(t, syscall.SIGTERM)
}

// writeOperator writes data's operator.yaml, private to the operator.
func writeOperator(t *testing.T, data, text string) {
	t.Helper()
	check(t, os.WriteFile(operatorFile(data), []byte(text), 0o600))
	check(t, os.Chmod(operatorFile(data), 0o600))
}

// TestReadOnlyMountWritesNothing: reading through a --read-only mount
// counts no access and changes no record.
func TestReadOnlyMountWritesNothing(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	p := filepath.Join(mnt, "semantic/a.md")
	check(t, os.WriteFile(p, []byte("hello\n"), 0o644))
	m.stop(t, syscall.SIGTERM)
	count := func() string {
		v, err := getxattr(p, "user.mnemofs.access_count")
		check(t, err)
		return v
	}
	m = startMount(t, data, mnt)
	before := count()
	m.stop(t, syscall.SIGTERM)

	m = startMount(t, data, mnt, "--read-only")
	for range 3 {
		if _, err := os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mnt, "semantic/b.md"), []byte("x"), 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("write in a read-only mount: %v, want EROFS", err)
	}
	m.stop(t, syscall.SIGTERM)
	m = startMount(t, data, mnt)
	if after := count(); after != before {
		t.Errorf("access_count %s before the read-only mount, %s after", before, after)
	}
	m.stop(t, syscall.SIGTERM)
}

// operatorFile is DATA/operator.yaml, the operator's configuration
// (README's "Commands a policy may run").
func operatorFile(data string) string { return filepath.Join(data, "operator.yaml") }
