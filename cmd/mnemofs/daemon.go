package main

import (
	"bufio"
	"fmt"
	"io"
	"log/syslog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/coreos/go-systemd/v22/daemon"
	"golang.org/x/sys/unix"
)

// Running as a service. Three ways, one readiness: the mount is ready when
// a statfs of the mountpoint is answered by this process.
//   - In front (the default): the "mounted" line on stdout.
//   - Under systemd (Type=notify, NOTIFY_SOCKET set): READY=1 then, and
//     STOPPING=1 when the unmount begins (contrib/systemd/).
//   - In the background (--background, and the mount(8) form): the
//     command starts itself again in a session of its own, without a
//     terminal, and returns once that process says the mount is ready, or
//     fails with its error (readyEnv). Its log goes to --log-file, else to
//     syslog (the journal), else nowhere.

// readyEnv names the descriptor on which a background mount tells the
// command that started it "ok" (the mount answers) or its error.
const readyEnv = "MNEMOFS_READY_FD"

// readyPipe is that descriptor in the background process; nil in any
// other.
var readyPipe *os.File

// takeReadyPipe picks up the descriptor of readyEnv (at the start of a
// background process), so that no program the mount runs inherits it.
func takeReadyPipe() {
	v := os.Getenv(readyEnv)
	if v == "" {
		return
	}
	os.Unsetenv(readyEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return
	}
	syscall.CloseOnExec(fd)
	readyPipe = os.NewFile(uintptr(fd), "ready")
}

// inBackground reports whether this process is a background mount.
func inBackground() bool { return readyPipe != nil }

// tellStarter tells the command that started this background process how
// the start went: "ok", or the error (once; later calls do nothing).
func tellStarter(err error) {
	if readyPipe == nil {
		return
	}
	msg := "ok"
	if err != nil {
		msg = err.Error()
	}
	readyPipe.WriteString(msg + "\n")
	readyPipe.Close()
	readyPipe = nil
}

// mountReady is called once the mount at mnt answers: it tells the
// starter of a background process, and systemd, and lets go of the
// directory the process was started in (a background process must not
// keep a directory busy; every path it needs is absolute by now).
func mountReady(mnt, status string) {
	if readyPipe != nil {
		tellStarter(nil)
		os.Chdir("/")
	}
	daemon.SdNotify(false, daemon.SdNotifyReady+"\nSTATUS="+status)
}

// mountStopping tells systemd the unmount has begun.
func mountStopping() { daemon.SdNotify(false, daemon.SdNotifyStopping) }

// answers checks that the filesystem at mnt is a FUSE mount that answers
// a request (statfs goes to this process).
func answers(mnt string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(mnt, &st); err != nil {
		return fmt.Errorf("the mount at %s does not answer: %w", mnt, err)
	}
	if st.Type != unix.FUSE_SUPER_MAGIC {
		return fmt.Errorf("%s is not a FUSE mount after mounting (filesystem type %#x)", mnt, st.Type)
	}
	return nil
}

// startBackground runs args (this command line without --background)
// as a background process and waits for its word: nil once its mount is
// ready, its error otherwise.
func startBackground(args []string, mnt string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the mnemofs binary to start in the background: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), readyEnv+"=3")
	cmd.ExtraFiles = []*os.File{w} // descriptor 3
	// A session of its own: no terminal, not in the shell's job, so that
	// neither a Ctrl-C nor the end of the shell (or of mount.fuse3) stops
	// it. Standard input and output are /dev/null; it logs as told.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("starting the background mount: %w", err)
	}
	w.Close()
	word, _ := io.ReadAll(r) // until it closes its end, or exits
	msg := strings.TrimSpace(string(word))
	if msg == "ok" {
		fmt.Printf("mnemofs: mounted at %s, served in the background by pid %d (stop with 'umount %s' or 'mnemofs unmount %s')\n", mnt, cmd.Process.Pid, mnt, mnt)
		cmd.Process.Release()
		return nil
	}
	werr := cmd.Wait()
	if msg == "" {
		return fail("the background mount exited before the mount was ready (%v); its log says why (--log-file, or syslog)", werr)
	}
	return userError{strings.TrimPrefix(msg, "mnemofs: ")}
}

// withoutBackground is args with the --background flag taken out.
func withoutBackground(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if a == "--background" || strings.HasPrefix(a, "--background=") {
			continue
		}
		out = append(out, a)
	}
	return out
}

// logTo sends this process's standard output and error to file (appended),
// or, with file "" in a background process, to syslog when there is one.
func logTo(file string) error {
	var target *os.File
	switch {
	case file != "":
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fail("--log-file: %v", err)
		}
		target = f
	case inBackground():
		sl, err := syslog.New(syslog.LOG_INFO|syslog.LOG_DAEMON, "mnemofs")
		if err != nil {
			return nil // no syslog: the log goes nowhere, as it would to /dev/null
		}
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		go func() {
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				sl.Info(strings.TrimPrefix(sc.Text(), "mnemofs: "))
			}
		}()
		target = w
	default:
		return nil
	}
	for _, fd := range []int{1, 2} {
		if err := unix.Dup3(int(target.Fd()), fd, 0); err != nil {
			return fmt.Errorf("redirecting the log: %w", err)
		}
	}
	target.Close()
	return nil
}
