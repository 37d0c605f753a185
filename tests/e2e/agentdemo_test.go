package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testfuse"
)

// TestAgentDemo runs scripts/agent-demo.sh (plain tools against a real
// mount of a fresh store, see its header) with the binary TestMain built,
// and fails with the script's output when any of its checks fails.
func TestAgentDemo(t *testing.T) {
	t.Parallel()
	testfuse.Require(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("the agent demo needs bash: %v", err)
	}
	scratch := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "../../scripts/agent-demo.sh")
	cmd.Env = append(os.Environ(), "MNEMOFS_BIN="+mnemofsBin, "SCRATCH_PARENT="+scratch, "KEEP=0")
	// Its own process group: on timeout the script and its mount get
	// SIGTERM together (the mount unmounts, which frees any stuck
	// operation, and the script's trap cleans up); SIGKILL 30 s later.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	t.Cleanup(func() {
		// The script unmounts on every exit; this covers it being killed.
		if b, _ := os.ReadFile("/proc/mounts"); strings.Contains(string(b), scratch) {
			for _, l := range strings.Split(string(b), "\n") {
				if f := strings.Fields(l); len(f) >= 2 && strings.HasPrefix(f[1], scratch) {
					t.Errorf("agent-demo left a mount: %s", l)
					exec.Command("fusermount3", "-uz", f[1]).Run()
				}
			}
		}
	})
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		t.Fatalf("agent-demo.sh timed out after %v:\n%s", time.Since(start).Round(time.Second), out.String())
	case err != nil:
		t.Fatalf("agent-demo.sh: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	t.Logf("agent-demo.sh: %s (%v)", lines[len(lines)-1], time.Since(start).Round(100*time.Millisecond))
	if testing.Verbose() {
		t.Log("\n" + out.String())
	}
}
