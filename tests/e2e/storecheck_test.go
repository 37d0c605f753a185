package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mnemofs/mnemofs/internal/testetcd"
)

// runLocal runs the binary with no backend in its environment (the test
// picks the backend itself), to completion.
func runLocal(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(mnemofsBin, args...)
	cmd.Env = append(os.Environ(), append([]string{"MNEMOFS_BACKEND=", "MNEMOFS_DATA="}, env...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{out.String(), errb.String(), 0}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("mnemofs %q: %v", args, err)
	}
	return r
}

// TestMistypedDataDir: every command but mount and import, given a data
// directory that holds no store (mistyped, or empty), fails with its path
// and a hint, and leaves nothing there; import makes the store, and then
// the same commands answer.
func TestMistypedDataDir(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	typo := filepath.Join(base, "memroy-typo")
	empty := filepath.Join(base, "empty")
	check(t, os.Mkdir(empty, 0o700))
	commands := [][]string{
		{"stats"}, {"search", "trip"}, {"fsck"}, {"maintain", "--dry-run"}, {"export", filepath.Join(base, "out")},
		{"policy", "show"}, {"report"}, {"mcp", "--read-only"},
	}
	for _, dir := range []string{typo, empty} {
		for _, c := range commands {
			r := runLocal(t, nil, append([]string{"--data", dir}, c...)...)
			oneErrorLine(t, r, "there is no store in "+dir, "mnemofs mount", "mnemofs import")
		}
	}
	if _, err := os.Stat(typo); !os.IsNotExist(err) {
		t.Errorf("the mistyped data directory was made: %v", err)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("the empty data directory holds %v after the commands", ents)
	}
	if _, err := os.Stat(filepath.Join(base, "out")); !os.IsNotExist(err) {
		t.Errorf("export wrote to its destination from no store: %v", err)
	}
	// The default one says it is the default.
	home := t.TempDir()
	r := runLocal(t, []string{"HOME=" + home, "XDG_DATA_HOME="}, "stats")
	oneErrorLine(t, r, "there is no store in "+filepath.Join(home, ".local/share/mnemofs")+" (the default data directory)")
	// import makes one; then the questions are answered.
	src := t.TempDir()
	check(t, os.MkdirAll(filepath.Join(src, "semantic"), 0o755))
	check(t, os.WriteFile(filepath.Join(src, "semantic/trip.md"), []byte("a trip to Zermatt\n"), 0o644))
	if r := runLocal(t, nil, "--data", empty, "import", src); r.code != 0 {
		t.Fatalf("import into an empty data directory: %s", r)
	}
	if r := runLocal(t, nil, "--data", empty, "search", "zermatt"); r.code != 0 || !strings.Contains(r.stdout, "trip.md") {
		t.Errorf("search after the import: %s", r)
	}
}

// TestSharedStoreDataDirIsNotBadger: the data directory of a host of a
// store on etcd holds only host-local state and says whose: every command
// run on it without --backend (mount included) refuses, naming the
// backend, and makes no local store there; a data directory that holds a
// local store is refused as a shared store's; and a command on a prefix
// that holds no store fails, naming it.
func TestSharedStoreDataDirIsNotBadger(t *testing.T) {
	t.Parallel()
	eps := testetcd.Shared(t)
	hosts := make([]string, len(eps))
	for i, e := range eps {
		hosts[i] = strings.TrimPrefix(e, "http://")
	}
	url := "etcd://" + strings.Join(hosts, ",") + "/mnemofs-e2e/datadir-" + filepath.Base(t.TempDir())
	data, src := t.TempDir(), t.TempDir()
	check(t, os.MkdirAll(filepath.Join(src, "semantic"), 0o755))
	check(t, os.WriteFile(filepath.Join(src, "semantic/a.md"), []byte("on etcd\n"), 0o644))

	r := runLocal(t, nil, "--data", data, "--backend", url, "stats")
	oneErrorLine(t, r, "there is no store at "+url)
	if r := runLocal(t, nil, "--data", data, "--backend", url, "import", src); r.code != 0 {
		t.Fatalf("import to etcd: %s", r)
	}
	if r := runLocal(t, nil, "--data", data, "--backend", url, "stats"); r.code != 0 {
		t.Fatalf("stats on etcd: %s", r)
	}
	for _, c := range [][]string{{"stats"}, {"search", "etcd"}, {"import", src}} {
		r := runLocal(t, nil, append([]string{"--data", data}, c...)...)
		oneErrorLine(t, r, data, url, "--backend "+url)
	}
	mnt := t.TempDir()
	r = runLocal(t, nil, "--data", data, "mount", mnt)
	oneErrorLine(t, r, "--backend "+url)
	if _, err := os.Stat(filepath.Join(data, "db")); !os.IsNotExist(err) {
		t.Errorf("a local store was made in the shared store's data directory: %v", err)
	}
	// The other way round: a local store's directory is no host's state.
	local := t.TempDir()
	if r := runLocal(t, nil, "--data", local, "import", src); r.code != 0 {
		t.Fatalf("import: %s", r)
	}
	r = runLocal(t, nil, "--data", local, "--backend", url, "stats")
	oneErrorLine(t, r, local, "holds a local store")
}

// makeStore makes an empty store in data (as an operator does before
// setting its policy: import of an empty directory).
func makeStore(t *testing.T, data string, extra ...string) {
	t.Helper()
	mustRun(t, append([]string{"import", "--data", data, t.TempDir()}, extra...)...)
}
