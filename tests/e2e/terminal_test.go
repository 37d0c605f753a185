package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the controller, and the terminal a
// program is given.
func openPTY(t *testing.T) (ctl, tty *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	unix.SetNonblock(fd, true) // pollable: reads obey deadlines
	ctl = os.NewFile(uintptr(fd), "ptmx")
	t.Cleanup(func() { ctl.Close() })
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	check(t, err)
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	check(t, err)
	t.Cleanup(func() { tty.Close() })
	return ctl, tty
}

// drain reads what programs wrote to the terminal until none has it
// open any more (the caller closes its own tty), at most 30 s.
func drain(ctl *os.File) string {
	var b bytes.Buffer
	buf := make([]byte, 64<<10)
	ctl.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		n, err := ctl.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// smallStore imports a few files into a new data directory.
func smallStore(t *testing.T, files int) (data, src string) {
	t.Helper()
	data, src = t.TempDir(), t.TempDir()
	check(t, os.MkdirAll(filepath.Join(src, "semantic"), 0o755))
	for i := range files {
		check(t, os.WriteFile(filepath.Join(src, "semantic", fmt.Sprintf("n%d.md", i)), []byte(fmt.Sprintf("note %d about zermatt\n", i)), 0o644))
	}
	return data, src
}

// TestReportNotToTerminal: 'mnemofs report' with no --out writes the page
// to standard output only when it is no terminal; to a terminal it
// refuses, saying how, and writes nothing there.
func TestReportNotToTerminal(t *testing.T) {
	t.Parallel()
	data, src := smallStore(t, 3)
	mustRun(t, "import", "--data", data, src)
	ctl, tty := openPTY(t)
	cmd := exec.Command(mnemofsBin, "report", "--data", data)
	withBackend(t, cmd, data)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = tty, &stderr
	err := cmd.Run()
	tty.Close()
	shown := drain(ctl)
	if err == nil || !strings.Contains(stderr.String(), "--out") || strings.Contains(shown, "<html") {
		t.Fatalf("report to a terminal: %v, stderr %q, terminal %q", err, stderr.String(), shown)
	}
	r := mustRun(t, "report", "--data", data)
	if !strings.HasPrefix(r.stdout, "<!DOCTYPE html>") {
		t.Fatalf("report to a pipe: %.100q", r.stdout)
	}
}

// TestProgressOnlyOnTerminal: import's progress bar is drawn on a
// terminal and left out when standard error is a pipe or a file, which
// would fill with carriage-return lines; the summary is printed either way.
func TestProgressOnlyOnTerminal(t *testing.T) {
	t.Parallel()
	data, src := smallStore(t, 2000)
	r := mustRun(t, "import", "--data", data, src)
	if strings.Contains(r.stderr, "\r") || !strings.Contains(r.stdout, "imported 2000 files") {
		t.Fatalf("import with standard error a pipe:\n%q\n%s", r.stderr, r.stdout)
	}
	ctl, tty := openPTY(t)
	data2 := t.TempDir()
	cmd := exec.Command(mnemofsBin, "import", "--data", data2, src)
	withBackend(t, cmd, data2)
	cmd.Stdout, cmd.Stderr = io.Discard, tty
	check(t, cmd.Start())
	shown := make(chan string)
	go func() { shown <- drain(ctl) }()
	check(t, cmd.Wait())
	tty.Close()
	if s := <-shown; !strings.Contains(s, "\r") || !strings.Contains(s, "importing") {
		t.Fatalf("import on a terminal drew no bar: %q", s)
	}
}

// TestSearchHelp: 'mnemofs search --help' lists the filters.
func TestSearchHelp(t *testing.T) {
	t.Parallel()
	r := mustRun(t, "search", "--help")
	for _, f := range []string{"user:", "type:", "tag:", "path:", "after:YYYY-MM-DD", "before:YYYY-MM-DD", "k:N", "archived:true"} {
		if !strings.Contains(r.stdout, f) {
			t.Errorf("search --help does not name %s:\n%s", f, r.stdout)
		}
	}
}

// TestMetaJSONEndsWithNewline: the generated JSON files end with a
// newline, as text files do (cat, diff and editors expect one).
func TestMetaJSONEndsWithNewline(t *testing.T) {
	t.Parallel()
	data, mnt := t.TempDir(), t.TempDir()
	startMount(t, data, mnt)
	for _, f := range []string{"stats.json", "index.json", "schema.json"} {
		b, err := os.ReadFile(filepath.Join(mnt, "meta", f))
		if err != nil || !bytes.HasSuffix(b, []byte("}\n")) {
			t.Errorf("meta/%s ends with %q (%v)", f, b[max(0, len(b)-10):], err)
		}
	}
}
