package e2e

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testenv"
	"github.com/mnemofs/mnemofs/internal/testfuse"
)

// TestVersion: 'mnemofs --version' and 'mnemofs version' print the same
// text: the version, commit and date lines, the Go version, and the
// engines' versions as go.mod requires them.
func TestVersion(t *testing.T) {
	t.Parallel()
	a, b := mustRun(t, "--version"), mustRun(t, "version")
	if a.stdout != b.stdout {
		t.Fatalf("--version and version differ:\n%s\n---\n%s", a.stdout, b.stdout)
	}
	mod, err := os.ReadFile("../../go.mod")
	check(t, err)
	want := []string{`^mnemofs \S+\n`, `\n- commit: \S+`, `\n- date: \S+`, `\n- go: go1\.\d+`, `\n- store format: 1\n`}
	for name, path := range map[string]string{"badger": "github.com/dgraph-io/badger/v4", "etcd client": "go.etcd.io/etcd/client/v3", "go-fuse": "github.com/hanwen/go-fuse/v2"} {
		m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(path) + ` (v\S+)`).FindSubmatch(mod)
		if m == nil {
			t.Fatalf("go.mod does not require %s", path)
		}
		want = append(want, `\n- `+name+`: `+regexp.QuoteMeta(string(m[1]))+`\n`)
	}
	for _, w := range want {
		if !regexp.MustCompile(w).MatchString(a.stdout) {
			t.Errorf("the version text lacks %s:\n%s", w, a.stdout)
		}
	}
}

// TestBackupRestoreMounted: a backup of a mounted store, taken through the
// mount while it is in use, restored into a new data directory, holds the
// memories, their history, the trash, user xattrs, a large file (a blob
// file on a local store) and the policy, and nothing written after it.
func TestBackupRestoreMounted(t *testing.T) {
	t.Parallel()
	data, mnt, dir := t.TempDir(), t.TempDir(), t.TempDir()
	m := startMount(t, data, mnt)
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	note := p("semantic/note.md")
	check(t, os.WriteFile(note, []byte("---\ntags: [plans]\n---\nfirst text\n"), 0o644))
	check(t, os.WriteFile(note, []byte("---\ntags: [plans]\n---\nsecond text\n"), 0o644))
	check(t, syscall.Setxattr(note, "user.color", []byte("blue"), 0))
	big := bytes.Repeat([]byte("a large memory line\n"), 20000) // 400 KB
	check(t, os.WriteFile(p("working/big.txt"), big, 0o644))
	check(t, os.WriteFile(p("episodic/gone.md"), []byte("removed later\n"), 0o644))
	time.Sleep(3100 * time.Millisecond) // older than a scratch file
	check(t, os.Remove(p("episodic/gone.md")))
	policy, err := os.ReadFile(p("meta/policy.yaml"))
	check(t, err)
	policy = append(policy, []byte("# kept by the backup\n")...)
	check(t, os.WriteFile(p("meta/policy.yaml"), policy, 0o644))
	policy, err = os.ReadFile(p("meta/policy.yaml"))
	check(t, err)

	file := filepath.Join(dir, "memory.backup")
	r := mustRun(t, "backup", "--data", data, file)
	if !strings.Contains(r.stdout, "backed up") {
		t.Fatalf("backup said:\n%s", r)
	}
	if m.exited() {
		t.Fatalf("the mount is gone after the backup:\n%s", m.dump())
	}
	check(t, os.WriteFile(p("semantic/after.md"), []byte("written after the backup\n"), 0o644))
	m.stop(t, syscall.SIGTERM)

	// Restored into a new local data directory, and mounted there (on
	// the etcd pass too: a backup of an etcd store restores locally).
	data2, mnt2 := filepath.Join(dir, "restored"), t.TempDir()
	cmd := exec.Command(mnemofsBin, "restore", "--data", data2, file)
	cmd.Env = append(os.Environ(), "MNEMOFS_BACKEND=")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "consistent") {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	startMountEnv(t, []string{"MNEMOFS_BACKEND="}, data2, mnt2)
	q := func(rel string) string { return filepath.Join(mnt2, rel) }
	for rel, want := range map[string]string{
		"semantic/note.md":               "second text",
		"history/semantic/note.md/v1.md": "first text",
		"archive/trash/episodic/gone.md": "removed later",
	} {
		if b, err := os.ReadFile(q(rel)); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("restored %s: %q, %v; want %q", rel, b, err, want)
		}
	}
	if b, err := os.ReadFile(q("working/big.txt")); err != nil || !bytes.Equal(b, big) {
		t.Errorf("restored working/big.txt: %d bytes, %v; want the %d written", len(b), err, len(big))
	}
	if v, err := getxattr(q("semantic/note.md"), "user.color"); err != nil || v != "blue" {
		t.Errorf("restored user.color: %q, %v", v, err)
	}
	if b, err := os.ReadFile(q("meta/policy.yaml")); err != nil || !bytes.Equal(b, policy) {
		t.Errorf("restored policy:\n%s\n(%v), want:\n%s", b, err, policy)
	}
	if _, err := os.Stat(q("semantic/after.md")); !os.IsNotExist(err) {
		t.Errorf("a memory written after the backup is in the restore: %v", err)
	}
	if b, err := os.ReadFile(q("search/second text/.results")); err != nil || !strings.Contains(string(b), "note.md") {
		t.Errorf("the restored store does not find its memory: %q, %v", b, err)
	}
	// A restore never writes over a store.
	again := exec.Command(mnemofsBin, "restore", "--data", data2, file)
	again.Env = cmd.Env
	if out, err := again.CombinedOutput(); err == nil || !strings.Contains(string(out), "not empty") {
		t.Errorf("a restore onto a store: %v\n%s", err, out)
	}
}

// TestSystemdNotify: the unit in contrib/systemd (Type=notify) runs a
// mount that says READY=1 on $NOTIFY_SOCKET once it answers, and
// STOPPING=1 when SIGTERM stops it; it then exits 0 with the mount gone.
// The unit's ExecStart= line is run as systemd would, %f being the
// mountpoint, with the binary under test.
func TestSystemdNotify(t *testing.T) {
	t.Parallel()
	unit, err := os.ReadFile("../../contrib/systemd/mnemofs@.service")
	check(t, err)
	for _, want := range []string{"\nType=notify\n", "\nRestart=on-failure\n", "\nExecStart=/usr/local/bin/mnemofs mount %f\n"} {
		if !strings.Contains(string(unit), want) {
			t.Fatalf("the unit lacks %q", want)
		}
	}
	exec := regexp.MustCompile(`(?m)^ExecStart=/usr/local/bin/mnemofs (.*)$`).FindSubmatch(unit)
	data, mnt := t.TempDir(), t.TempDir()
	args := strings.Fields(strings.ReplaceAll(string(exec[1]), "%f", mnt))
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	check(t, err)
	defer conn.Close()
	m := startMountArgs(t, []string{"NOTIFY_SOCKET=" + sock, "MNEMOFS_DATA=" + data}, args, data, mnt)
	next := func(within time.Duration) string {
		conn.SetReadDeadline(time.Now().Add(within))
		buf := make([]byte, 4096)
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("no message on NOTIFY_SOCKET: %v\nstderr: %s", err, m.stderr.String())
		}
		return string(buf[:n])
	}
	msg := next(10 * time.Second)
	if !strings.Contains(msg, "READY=1") || !strings.Contains(msg, "STATUS=mounted") {
		t.Fatalf("first message %q, want READY=1 and a STATUS", msg)
	}
	if ents, err := os.ReadDir(mnt); err != nil || len(ents) == 0 {
		t.Fatalf("READY=1 came, but the mount does not answer: %v", err)
	}
	m.stop(t, syscall.SIGTERM)
	if msg := next(time.Second); msg != "STOPPING=1" {
		t.Errorf("after SIGTERM: %q, want STOPPING=1", msg)
	}
}

// TestMountHelper: 'mount -t fuse.mnemofs DATA MNT -o OPTIONS' through
// the real mount(8) and mount.fuse3, and the fstab line, both as
// docs/operations.md gives them:
// each returns once the mount answers, served by a background process;
// 'umount MNT' ends that process cleanly (it logs its unmount and exits).
// mount(8) runs helpers with a fixed PATH, so the test runs in a mount
// namespace of its own in which /usr/local/sbin holds the binary under
// test, and /etc/fstab is the test's: nothing of the machine's changes.
func TestMountHelper(t *testing.T) {
	t.Parallel()
	if onEtcd() {
		t.Skip("nothing of the store's backend in it")
	}
	testfuse.Require(t)
	testenv.Tools(t, "unshare", "mount", "umount", "findmnt", "mount.fuse3")
	if os.Geteuid() != 0 {
		testenv.Missing(t, "mount(8) of a FUSE filesystem from fstab in a mount namespace of its own needs root")
	}
	dir := t.TempDir()
	data, mnt, bin, log := filepath.Join(dir, "data dir"), filepath.Join(dir, "memory"), filepath.Join(dir, "bin"), filepath.Join(dir, "mount.log")
	check(t, os.Mkdir(mnt, 0o755))
	check(t, os.Mkdir(bin, 0o755))
	check(t, os.Symlink(mnemofsBin, filepath.Join(bin, "mnemofs")))
	// The command and the fstab line of docs/operations.md, with the
	// test's paths.
	doc, err := os.ReadFile("../../docs/operations.md")
	check(t, err)
	typed := regexp.MustCompile(`(?m)^sudo mount -t fuse\.mnemofs \S+ \S+ -o (\S+)$`).FindSubmatch(doc)
	line := regexp.MustCompile(`(?m)^\S+\s+\S+\s+fuse\.mnemofs\s+(\S+)\s+0\s+0$`).FindSubmatch(doc)
	if typed == nil || line == nil {
		t.Fatal("docs/operations.md shows no mount -t fuse.mnemofs command or no fstab line")
	}
	fstab := filepath.Join(dir, "fstab")
	esc := strings.NewReplacer(" ", `\040`)
	check(t, os.WriteFile(fstab, []byte(fmt.Sprintf("%s %s fuse.mnemofs %s,log_file=%s 0 0\n",
		esc.Replace(data), esc.Replace(mnt), line[1], log)), 0o644))
	script := `set -eu
mount --bind "$BIN" /usr/local/sbin
mount --bind "$FSTAB" /etc/fstab
check() {
	test "$(findmnt -n -o FSTYPE --mountpoint "$MNT")" = fuse.mnemofs || { echo "no fuse.mnemofs mount at $MNT after $1"; exit 1; }
	echo "$1" >> "$MNT/semantic/$1.md"
	test "$(cat "$MNT/semantic/$1.md")" = "$1"
	pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' "$DATA/mnemofs.lock")
	test -n "$pid" || { echo "no pid in the lock file"; exit 1; }
	umount "$MNT"
	# The background process closes the store and exits.
	for i in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	if kill -0 "$pid" 2>/dev/null; then echo "pid $pid still runs 10 s after umount"; kill "$pid"; exit 1; fi
}
mount -t fuse.mnemofs "$DATA" "$MNT" -o "$OPTS,log_file=$LOG"
check typed
mount "$MNT"
check fstab
`
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "BIN="+bin, "FSTAB="+fstab, "DATA="+data, "MNT="+mnt, "LOG="+log, "OPTS="+string(typed[1]))
	out, err := cmd.CombinedOutput()
	logged, _ := os.ReadFile(log)
	if err != nil {
		t.Fatalf("%v\n%s\n--- the mount's log:\n%s", err, out, logged)
	}
	if n := strings.Count(string(logged), "mnemofs: unmounted "+mnt); n != 2 {
		t.Errorf("the log shows %d clean unmounts, want 2:\n%s", n, logged)
	}
	// Both mounts wrote to one store, which a command now opens alone.
	r := mustRun(t, "export", "--data", data, filepath.Join(dir, "out"))
	for _, f := range []string{"typed", "fstab"} {
		if b, err := os.ReadFile(filepath.Join(dir, "out", "semantic", f+".md")); err != nil || string(b) != f+"\n" {
			t.Errorf("%s.md: %q, %v (export: %s)", f, b, err, r.stdout)
		}
	}
}

// TestBackupEncrypted: the backup of an encrypted store (a passphrase) is
// encrypted: none of a memory's words are in it; it restores with the
// same passphrase into a store that opens with it, and without it, or
// with another, it is refused and nothing is made.
func TestBackupEncrypted(t *testing.T) {
	t.Parallel()
	dir, src := t.TempDir(), t.TempDir()
	key, wrong := filepath.Join(dir, "key"), filepath.Join(dir, "wrong")
	check(t, os.WriteFile(key, []byte("correct horse battery staple\n"), 0o600))
	check(t, os.WriteFile(wrong, []byte("incorrect horse battery staple\n"), 0o600))
	check(t, os.MkdirAll(filepath.Join(src, "semantic"), 0o755))
	secret := "the vault code is marmalade-tangerine"
	check(t, os.WriteFile(filepath.Join(src, "semantic", "vault.md"), []byte(secret+"\n"), 0o644))
	data := filepath.Join(dir, "data")
	mustRun(t, "import", "--data", data, "--encryption-key-file", key, src)
	file := filepath.Join(dir, "enc.backup")
	mustRun(t, "backup", "--data", data, "--encryption-key-file", key, file)
	b, err := os.ReadFile(file)
	check(t, err)
	if bytes.Contains(b, []byte("marmalade")) || bytes.Contains(b, []byte("vault")) {
		t.Fatal("the backup of an encrypted store shows its content")
	}
	restore := func(data string, extra ...string) (string, error) {
		cmd := exec.Command(mnemofsBin, append([]string{"restore", "--data", data, file}, extra...)...)
		cmd.Env = append(os.Environ(), "MNEMOFS_BACKEND=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, extra := range [][]string{nil, {"--encryption-key-file", wrong}} {
		d := filepath.Join(dir, "refused")
		if out, err := restore(d, extra...); err == nil || !strings.Contains(out, "key") {
			t.Errorf("restore %v: %v\n%s", extra, err, out)
		}
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("a refused restore left %s: %v", d, err)
		}
	}
	data2 := filepath.Join(dir, "restored")
	if out, err := restore(data2, "--encryption-key-file", key); err != nil || !strings.Contains(out, "consistent") {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	cmd := exec.Command(mnemofsBin, "export", "--data", data2, "--encryption-key-file", key, filepath.Join(dir, "out"))
	cmd.Env = append(os.Environ(), "MNEMOFS_BACKEND=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("export of the restored store: %v\n%s", err, out)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "out", "semantic", "vault.md")); err != nil || string(got) != secret+"\n" {
		t.Fatalf("restored vault.md: %q, %v", got, err)
	}
}
