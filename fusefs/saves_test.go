package fusefs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mnemofs/mnemofs/internal/testenv"
	"github.com/mnemofs/mnemofs/store"
)

// memoryState is what a save must carry on: history, identity, metadata.
type memoryState struct {
	versions            int
	created, lineage    string
	color               string
	previous, treeNames string
	trash               string
}

func xattr(t *testing.T, p, name string) string {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Getxattr(p, name, buf)
	if err != nil {
		t.Fatalf("getxattr %s %s: %v", p, name, err)
	}
	return string(buf[:n])
}

// names lists a directory below the mount, recursively, sorted.
func names(t *testing.T, dir string) string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			out = append(out, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, " ")
}

func stateOf(t *testing.T, tf *testFS, rel string) memoryState {
	t.Helper()
	p := tf.path(rel)
	h := tf.path("history/" + rel)
	ents, _ := os.ReadDir(h)
	s := memoryState{versions: len(ents), created: xattr(t, p, "user.mnemofs.created"),
		lineage: xattr(t, p, "user.mnemofs.lineage"), color: xattr(t, p, "user.color"),
		treeNames: names(t, filepath.Dir(p)), trash: names(t, tf.path("archive/trash"))}
	if len(ents) > 0 {
		b, err := os.ReadFile(filepath.Join(h, ents[len(ents)-1].Name()))
		must(t, err)
		s.previous = string(b)
	}
	return s
}

// saveCase is one way people save: it changes the file at p from the text
// before to the text after.
type saveCase struct {
	name  string
	tools []string // the programs it runs (the case skips without them)
	save  func(t *testing.T, tf *testFS, p, after string)
}

// tmux runs a terminal program in a detached tmux session, types keys
// into it one group at a time, and waits for it to exit. Each call has a
// tmux server of its own (-L), killed at the end, and every tmux command
// a deadline: a server left wedged by an earlier run (its program stuck
// on a dead mount) cannot hang this one.
func tmux(t *testing.T, cmd string, keys ...string) {
	t.Helper()
	sess := fmt.Sprintf("mnemofs-%d", time.Now().UnixNano())
	run := func(args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return exec.CommandContext(ctx, "tmux", append([]string{"-L", sess}, args...)...).CombinedOutput()
	}
	defer run("kill-server")
	if out, err := run("new-session", "-d", "-s", sess, "-x", "120", "-y", "40", cmd); err != nil {
		t.Fatalf("tmux: %v %s", err, out)
	}
	time.Sleep(300 * time.Millisecond) // the program draws its screen
	for _, k := range keys {
		if out, err := run("send-keys", "-t", sess, k); err != nil {
			t.Fatalf("tmux send-keys %q: %v %s", k, err, out)
		}
		time.Sleep(150 * time.Millisecond)
	}
	for i := 0; ; i++ {
		if _, err := run("has-session", "-t", sess); err != nil {
			return // the program exited, and its session with it
		}
		if i == 100 {
			screen, _ := run("capture-pane", "-p", "-t", sess)
			t.Fatalf("%s did not exit; its screen:\n%s", cmd, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// inDir is a command that runs name in dir. The chdir happens in a shell
// after exec, never in the test process's own fork: with the mount served
// by this process and one P, a vfork child blocked in chdir on the mount
// would stop the very process that must answer it.
func inDir(dir, name string, args ...string) *exec.Cmd {
	return exec.Command("sh", append([]string{"-c", `cd "$0" && exec "$@"`, dir, name}, args...)...)
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	c := inDir(dir, name, args...)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

var saveCases = []saveCase{
	{"sed -i", []string{"sed"}, func(t *testing.T, tf *testFS, p, after string) {
		run(t, filepath.Dir(p), "sed", "-i", "s/version two/"+after+"/", p)
	}},
	{"python os.replace", []string{"python3"}, func(t *testing.T, tf *testFS, p, after string) {
		py := `import os, sys, tempfile
p, text = sys.argv[1], sys.argv[2]
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(p))
old = open(p).read()
with os.fdopen(fd, "w") as f:
    f.write(old.replace("version two", text))
os.replace(tmp, p)`
		run(t, filepath.Dir(p), "python3", "-c", py, p, after)
	}},
	{"vim by rename", []string{"tmux", "vim"}, func(t *testing.T, tf *testFS, p, after string) {
		tmux(t, "vim -u NONE -N -i NONE -n -c 'set backupcopy=no writebackup nobackup backupskip=' "+p,
			":%s/version two/"+after+"/", "Enter", ":wq", "Enter")
	}},
	{"vim in place", []string{"tmux", "vim"}, func(t *testing.T, tf *testFS, p, after string) {
		tmux(t, "vim -u NONE -N -i NONE -n -c 'set backupcopy=yes writebackup nobackup backupskip=' "+p,
			":%s/version two/"+after+"/", "Enter", ":wq", "Enter")
	}},
	{"nano", []string{"tmux", "nano"}, func(t *testing.T, tf *testFS, p, after string) {
		// Ctrl-\ replaces: find "version two", replace with after, All.
		tmux(t, "nano --ignorercfiles "+p, "C-\\", "version two", "Enter", after, "Enter", "a", "C-o", "Enter", "C-x")
	}},
	{"rsync over it", []string{"rsync"}, func(t *testing.T, tf *testFS, p, after string) {
		src := filepath.Join(t.TempDir(), filepath.Base(p))
		b, err := os.ReadFile(p)
		must(t, err)
		must(t, os.WriteFile(src, []byte(strings.Replace(string(b), "version two", after, 1)), 0o644))
		run(t, filepath.Dir(p), "rsync", "-t", src, p)
	}},
}

// TestSavesAreEdits: each way people save a file — editors, sed -i, an
// SDK's atomic replace, rsync — is one new version of the memory: history
// grows by one with the replaced bytes, created time, lineage and user
// xattrs carry on, and nothing stray is left in the tree or the trash.
func TestSavesAreEdits(t *testing.T) {
	t.Parallel()
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	tf := mountAt(t, t.TempDir(), store.Options{Now: func() time.Time { return time.Unix(0, now.Add(int64(time.Millisecond))) }, ScratchAge: -1})
	for k, c := range saveCases {
		t.Run(c.name, func(t *testing.T) {
			testenv.Tools(t, c.tools...)
			rel := fmt.Sprintf("semantic/notes/n%d.md", k)
			p := tf.path(rel)
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, []byte("---\ntags: [save]\n---\nversion one\n"), 0o644))
			must(t, unix.Setxattr(p, "user.color", []byte("blue"), 0))
			must(t, os.WriteFile(p, []byte("---\ntags: [save]\n---\nversion two\n"), 0o644))
			before := stateOf(t, tf, rel)
			now.Add(int64(5 * time.Minute)) // the memory is old; a temp made now is fresh
			after := fmt.Sprintf("version three by %s", c.name)
			c.save(t, tf, p, after)
			got := stateOf(t, tf, rel)
			if b := read(t, p); !strings.Contains(b, after) {
				t.Fatalf("the save did not happen: %q", b)
			}
			if got.versions != before.versions+1 {
				t.Errorf("history: %d versions, want %d", got.versions, before.versions+1)
			}
			if !strings.Contains(got.previous, "version two") {
				t.Errorf("the last version is %q, want the replaced bytes", got.previous)
			}
			if got.created != before.created || got.lineage != before.lineage || got.color != "blue" {
				t.Errorf("created %s→%s, lineage %s→%s, user.color %q", before.created, got.created, before.lineage, got.lineage, got.color)
			}
			if got.treeNames != before.treeNames || got.trash != before.trash {
				t.Errorf("strays: tree %q → %q, trash %q → %q", before.treeNames, got.treeNames, before.trash, got.trash)
			}
		})
	}
}

// TestMoveOverIsNotASave: the rule's other half. A memory that has been
// one for a while, moved onto another's name, is a different memory: it
// keeps its own history and lineage, and the one it replaces goes to the
// trash (before, it was lost).
func TestMoveOverIsNotASave(t *testing.T) {
	t.Parallel()
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	tf := mountAt(t, t.TempDir(), store.Options{Now: func() time.Time { return time.Unix(0, now.Load()) }, ScratchAge: -1})
	a, b := tf.path("semantic/a.md"), tf.path("semantic/b.md")
	must(t, os.WriteFile(a, []byte("memory a\n"), 0o644))
	must(t, os.WriteFile(b, []byte("memory b\n"), 0o644))
	must(t, os.WriteFile(b, []byte("memory b, edited\n"), 0o644))
	lin := xattr(t, a, "user.mnemofs.lineage")
	now.Add(int64(time.Hour))
	must(t, os.Rename(a, b))
	if got := xattr(t, b, "user.mnemofs.lineage"); got != lin {
		t.Errorf("the moved memory's lineage %s, want its own %s", got, lin)
	}
	if got := read(t, tf.path("archive/trash/semantic/b.md")); got != "memory b, edited\n" {
		t.Errorf("the replaced memory is not in the trash: %q", got)
	}
	if ents, _ := os.ReadDir(tf.path("history/semantic/b.md")); len(ents) != 0 {
		t.Errorf("the moved memory took the replaced one's history: %v", ents)
	}
}

// TestHistoryFollowsTheName: history/<path>/ is right at once after a
// save (not the old inode's until the next mount).
func TestHistoryFollowsTheName(t *testing.T) {
	t.Parallel()
	tf := mountAt(t, t.TempDir(), store.Options{ScratchAge: -1})
	p := tf.path("semantic/h.md")
	must(t, os.WriteFile(p, []byte("one\n"), 0o644))
	must(t, os.WriteFile(p, []byte("two\n"), 0o644))
	if ents, _ := os.ReadDir(tf.path("history/semantic/h.md")); len(ents) != 1 {
		t.Fatalf("history before the save: %v", ents)
	}
	run(t, tf.dir, "sed", "-i", "s/two/three/", p)
	ents, err := os.ReadDir(tf.path("history/semantic/h.md"))
	must(t, err)
	if len(ents) != 2 || read(t, tf.path("history/semantic/h.md/v2.md")) != "two\n" {
		t.Fatalf("history after the save: %v", ents)
	}
}

// TestSaveWithoutChangeKeepsNoVersion: a save that writes back the same
// bytes (vim's :wq without an edit, by rename or in place; sed -i that
// matches nothing; an SDK's atomic replace with the same text) adds no
// version and leaves the version number as it was, while the file's
// times move as on a disk (the save wrote it). The memory at the root
// (MEMORY.md, versioned by the policy's other:) is saved the same way.
func TestSaveWithoutChangeKeepsNoVersion(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"vim", "tmux", "python3", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for this test (apt-get install vim tmux)", tool)
		}
	}
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	tf := mountAt(t, t.TempDir(), store.Options{Now: func() time.Time { return time.Unix(0, now.Add(int64(time.Millisecond))) }, ScratchAge: -1})
	cases := []saveCase{
		{"vim by rename", []string{"vim", "tmux"}, func(t *testing.T, tf *testFS, p, _ string) {
			tmux(t, "vim -u NONE -N -i NONE -n -c 'set backupcopy=no writebackup nobackup backupskip=' "+p, ":wq", "Enter")
		}},
		{"vim in place", []string{"vim", "tmux"}, func(t *testing.T, tf *testFS, p, _ string) {
			tmux(t, "vim -u NONE -N -i NONE -n -c 'set backupcopy=yes writebackup nobackup backupskip=' "+p, ":wq", "Enter")
		}},
		{"vim defaults", []string{"vim", "tmux"}, func(t *testing.T, tf *testFS, p, _ string) {
			tmux(t, "vim -u NONE -N -i NONE -n "+p, ":w!", "Enter", ":q", "Enter")
		}},
		saveCases[0], // sed -i 's/version two/.../': matches nothing here
		{"python os.replace", []string{"python3"}, func(t *testing.T, tf *testFS, p, _ string) {
			py := `import os, sys, tempfile
p = sys.argv[1]
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(p))
with os.fdopen(fd, "w") as f:
    f.write(open(p).read())
os.replace(tmp, p)`
			run(t, filepath.Dir(p), "python3", "-c", py, p)
		}},
	}
	for k, c := range cases {
		for _, rel := range []string{fmt.Sprintf("semantic/same/n%d.md", k), fmt.Sprintf("ROOT%d.md", k)} {
			t.Run(c.name+" "+rel, func(t *testing.T) {
				p := tf.path(rel)
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(t, os.WriteFile(p, []byte("one\n"), 0o644))
				must(t, unix.Setxattr(p, "user.color", []byte("blue"), 0))
				must(t, os.WriteFile(p, []byte("two\n"), 0o644))
				before := stateOf(t, tf, rel)
				version := xattr(t, p, "user.mnemofs.version")
				var st0 unix.Stat_t
				must(t, unix.Stat(p, &st0))
				if before.versions != 1 {
					t.Fatalf("%d versions before the save, want 1", before.versions)
				}
				now.Add(int64(5 * time.Minute)) // the memory is old; a temp made now is fresh
				time.Sleep(10 * time.Millisecond)
				c.save(t, tf, p, "")
				if b := read(t, p); b != "two\n" {
					t.Fatalf("the file changed: %q", b)
				}
				got := stateOf(t, tf, rel)
				if got.versions != before.versions || got.previous != "one\n" {
					t.Errorf("history: %d versions (last %q), want %d (last \"one\\n\")", got.versions, got.previous, before.versions)
				}
				if v := xattr(t, p, "user.mnemofs.version"); v != version {
					t.Errorf("version %s → %s after a save that changed nothing", version, v)
				}
				if got.lineage != before.lineage || got.created != before.created || got.treeNames != before.treeNames || got.trash != before.trash {
					t.Errorf("lineage %s→%s, created %s→%s, tree %q→%q, trash %q→%q", before.lineage, got.lineage, before.created, got.created,
						before.treeNames, got.treeNames, before.trash, got.trash)
				}
				var st1 unix.Stat_t
				must(t, unix.Stat(p, &st1))
				if c.name != "sed -i" && st1.Mtim == st0.Mtim {
					t.Errorf("mtime unchanged by a save that wrote the file (a disk's moves)")
				}
				// The next real edit is a version again.
				must(t, os.WriteFile(p, []byte("three\n"), 0o644))
				if got := stateOf(t, tf, rel); got.versions != before.versions+1 || got.previous != "two\n" {
					t.Errorf("after an edit: %d versions (last %q), want %d (last \"two\\n\")", got.versions, got.previous, before.versions+1)
				}
			})
		}
	}
}
