package fusefs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// needTool skips a test whose tool is not installed, or fails it when
// MNEMOFS_REQUIRE_FUSE=1 (CI) makes the optional tools required.
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("MNEMOFS_REQUIRE_FUSE") == "1" {
			t.Fatalf("%s required (MNEMOFS_REQUIRE_FUSE=1) but not installed", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return p
}

// xattrNames lists the extended attributes of p, sorted.
func xattrNames(t testing.TB, p string) []string {
	t.Helper()
	buf := make([]byte, 64<<10)
	n, err := unix.Llistxattr(p, buf)
	must(t, err)
	var names []string
	for _, k := range strings.Split(string(buf[:n]), "\x00") {
		if k != "" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return names
}

// runTool runs a command and fails the test unless it exits 0 saying
// nothing on stderr.
func runTool(t testing.TB, name string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil || errb.Len() > 0 {
		t.Fatalf("%s %q: %v\nstderr: %s", name, args, err, errb.String())
	}
	return out.String()
}

// TestSystemXattrsUnlisted: the generated user.mnemofs.* attributes are
// read by name and listed only to a program that names their prefix, so
// that copies never carry them.
func TestSystemXattrsUnlisted(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("semantic/a.md")
	must(t, os.WriteFile(p, []byte("hello\n"), 0o644))
	must(t, unix.Setxattr(p, "user.color", []byte("blue"), 0))
	if got := xattrNames(t, p); !slices.Equal(got, []string{"user.color"}) {
		t.Errorf("listxattr: %q, want only user.color", got)
	}
	buf := make([]byte, 128)
	n, err := unix.Getxattr(p, "user.mnemofs.sha256", buf)
	must(t, err)
	if got := string(buf[:n]); got != shaHex([]byte("hello\n")) {
		t.Errorf("user.mnemofs.sha256 = %q", got)
	}
	// Writing one stays refused: the values are the filesystem's.
	wantErrno(t, unix.Setxattr(p, "user.mnemofs.tags", []byte("x"), 0), syscall.EPERM)

	getfattr := needTool(t, "getfattr")
	out := runTool(t, getfattr, "--absolute-names", "-d", "-m", "user.mnemofs", p)
	for _, k := range []string{"user.mnemofs.sha256=", "user.mnemofs.version=", "user.mnemofs.created="} {
		if !strings.Contains(out, k) {
			t.Errorf("getfattr -d -m user.mnemofs lacks %s:\n%s", k, out)
		}
	}
	if out := runTool(t, getfattr, "--absolute-names", "-d", p); strings.Contains(out, "mnemofs") || !strings.Contains(out, `user.color="blue"`) {
		t.Errorf("getfattr -d (no prefix asked for):\n%s", out)
	}
	if out := runTool(t, getfattr, "--absolute-names", "--only-values", "-n", "user.mnemofs.size", p); out != "6" {
		t.Errorf("getfattr -n user.mnemofs.size: %q", out)
	}
}

// TestXattrCopyRoundTrip: cp -a, rsync -aX and tar --xattrs copy a tree
// out of the mount onto the local disk and back in without an error, and
// carry exactly the attributes a user set, as they do through the
// loopback; the copy made back in the mount has metadata of its own.
func TestXattrCopyRoundTrip(t *testing.T) {
	t.Parallel()
	cp, rsync, tar := needTool(t, "cp"), needTool(t, "rsync"), needTool(t, "tar")
	for _, s := range sides(t) {
		t.Run(s.name, func(t *testing.T) {
			src := filepath.Join(s.dir, "src")
			must(t, os.MkdirAll(filepath.Join(src, "sub"), 0o755))
			files := map[string]string{"a.md": "alpha\n", "sub/b.md": "---\ntags: [x]\n---\nbeta\n"}
			for name, body := range files {
				p := filepath.Join(src, name)
				must(t, os.WriteFile(p, []byte(body), 0o640))
				must(t, unix.Setxattr(p, "user.color", []byte(name), 0))
			}
			disk := t.TempDir() // ext4, or whatever the test's disk is
			back := filepath.Join(s.dir, "back")
			must(t, os.MkdirAll(back, 0o755))

			runTool(t, cp, "-a", src, filepath.Join(disk, "cp"))
			runTool(t, rsync, "-aX", src+"/", filepath.Join(disk, "rsync")+"/")
			runTool(t, tar, "--xattrs", "-cf", filepath.Join(disk, "t.tar"), "-C", src, ".")
			must(t, os.Mkdir(filepath.Join(disk, "tar"), 0o755))
			runTool(t, tar, "--xattrs", "-xf", filepath.Join(disk, "t.tar"), "-C", filepath.Join(disk, "tar"))
			// And back into the mount, each way.
			runTool(t, cp, "-a", filepath.Join(disk, "cp"), filepath.Join(back, "cp"))
			runTool(t, rsync, "-aX", filepath.Join(disk, "rsync")+"/", filepath.Join(back, "rsync")+"/")
			must(t, os.Mkdir(filepath.Join(back, "tar"), 0o755))
			runTool(t, tar, "--xattrs", "-xf", filepath.Join(disk, "t.tar"), "-C", filepath.Join(back, "tar"))
			// A second rsync changes nothing and says nothing.
			runTool(t, rsync, "-aX", src+"/", filepath.Join(disk, "rsync")+"/")

			for _, root := range []string{filepath.Join(disk, "cp"), filepath.Join(disk, "rsync"), filepath.Join(disk, "tar"),
				filepath.Join(back, "cp"), filepath.Join(back, "rsync"), filepath.Join(back, "tar")} {
				for name, body := range files {
					p := filepath.Join(root, name)
					if got := xattrNames(t, p); !slices.Equal(got, []string{"user.color"}) {
						t.Errorf("%s: xattrs %q, want only user.color", p, got)
					}
					if b, err := os.ReadFile(p); err != nil || string(b) != body {
						t.Errorf("%s: %q, %v", p, b, err)
					}
					if s.tf == nil || !strings.HasPrefix(root, back) {
						continue
					}
					// The copy in the mount describes itself.
					buf := make([]byte, 128)
					n, err := unix.Getxattr(p, "user.mnemofs.sha256", buf)
					if err != nil || string(buf[:n]) != shaHex([]byte(body)) {
						t.Errorf("%s: user.mnemofs.sha256 %q, %v", p, buf[:n], err)
					}
					n, err = unix.Getxattr(p, "user.mnemofs.path", buf)
					if want := "/" + strings.TrimPrefix(p, s.tf.dir+"/"); err != nil || string(buf[:n]) != want {
						t.Errorf("%s: user.mnemofs.path %q, %v; want %q", p, buf[:n], err, want)
					}
				}
			}
		})
	}
}

// TestXattrWhileWriting: setting an xattr on a file being written keeps
// what was written (tar and cp -a set them before the close).
func TestXattrWhileWriting(t *testing.T) {
	t.Parallel()
	tf := testMount(t)
	p := tf.path("working/a.md")
	f, err := os.Create(p)
	must(t, err)
	_, err = f.Write([]byte("alpha\n"))
	must(t, err)
	must(t, unix.Fsetxattr(int(f.Fd()), "user.color", []byte("x"), 0))
	must(t, f.Chmod(0o600))
	must(t, f.Close())
	if got := read(t, p); got != "alpha\n" {
		t.Errorf("reads %q", got)
	}
}
