package lifecycle

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/mnemofs/mnemofs/policy"
)

// The operator's programs (policy.Operator): run with no shell, a
// timeout that kills their process group, and capped output.

// commandOutputMax bounds what a command may write (a summary).
const commandOutputMax = 1 << 20

// runCommand runs the operator's program (no shell) with stdin, within its
// timeout, and returns its output. Past the timeout its whole process
// group is killed.
func runCommand(what string, c *policy.Command, stdin io.Reader) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(c.Timeout))
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Stdin = stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stdout, stderr capped
	stdout.max, stderr.max = commandOutputMax, 4096
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	name := path.Base(c.Argv[0])
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s command %s timed out after %v", what, name, time.Duration(c.Timeout))
	case err != nil:
		return nil, fmt.Errorf("%s command %s failed: %v: %s", what, name, err, strings.TrimSpace(stderr.String()))
	case stdout.over:
		return nil, fmt.Errorf("%s command %s wrote more than %d bytes", what, name, commandOutputMax)
	case len(bytes.TrimSpace(stdout.Bytes())) == 0:
		return nil, fmt.Errorf("%s command %s wrote nothing", what, name)
	}
	return stdout.Bytes(), nil
}

// capped keeps the first max bytes written to it.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.over = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}
