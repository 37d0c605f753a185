package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mnemofs/mnemofs/internal/testenv"
)

// TestReadmeWalkthrough runs the README's walkthrough (the sh blocks after
// each "<!-- walkthrough -->" marker) top to bottom, as written, against a
// real mount at ~/memory, with ./mnemofs the binary.
func TestReadmeWalkthrough(t *testing.T) {
	t.Parallel()
	testenv.Tools(t, "getfattr", "sed", "grep")
	b, err := os.ReadFile("../../README.md")
	check(t, err)
	var script strings.Builder
	parts := strings.Split(string(b), "<!-- walkthrough -->\n```sh\n")
	for _, p := range parts[1:] {
		block, _, ok := strings.Cut(p, "\n```")
		if !ok {
			t.Fatal("a walkthrough block is not closed")
		}
		script.WriteString(block + "\n")
	}
	if len(parts) < 3 {
		t.Fatalf("README has %d walkthrough blocks, want 2", len(parts)-1)
	}
	home, data, work := t.TempDir(), t.TempDir(), t.TempDir()
	mnt := filepath.Join(home, "memory")
	check(t, os.Mkdir(mnt, 0o755))
	check(t, os.Symlink(mnemofsBin, filepath.Join(work, "mnemofs")))
	m := startMount(t, data, mnt)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script.String())
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "HOME="+home, "MNEMOFS_DATA="+data)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the walkthrough failed: %v\n%s\n--- script:\n%s", err, out, script.String())
	}
	for _, want := range []string{"Alice is vegetarian and likes ramen.", "01-alice.md", "user.mnemofs.lineage",
		"/episodic/trip.md", "trip.md"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the walkthrough's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "\n 2 ") {
		t.Errorf("'search zermatt k:1' printed a second result:\n%s", out)
	}
	m.stop(t, syscall.SIGTERM)
}
