package fusefs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testfuse"

	"github.com/mnemofs/mnemofs/audit"
	"github.com/mnemofs/mnemofs/backend"
	"github.com/mnemofs/mnemofs/lifecycle"
	"github.com/mnemofs/mnemofs/report"
	"github.com/mnemofs/mnemofs/store"
	"github.com/mnemofs/mnemofs/views"
)

type testFS struct {
	dir  string // mountpoint
	data string
	kv   backend.KV
	st   *store.Store
	srv  *Server
	eng  *views.Engine
}

// mountAt mounts the store in data (created if empty) on a new temp dir.
func mountAt(t testing.TB, data string, o store.Options) *testFS {
	t.Helper()
	return mountWith(t, data, o, Config{})
}

// mountWith is mountAt with cfg's settings (its DataDir, Views and Debug
// are set here).
func mountWith(t testing.TB, data string, o store.Options, cfg Config) *testFS {
	t.Helper()
	testfuse.Require(t)
	kv := testKV(t, data)
	n := NewNotifier()
	eng := views.NewEngine(nil)
	o.Notify = n
	o.Reserved = ReservedNames()
	if o.BlobDir == "" && !onEtcd() {
		o.BlobDir = filepath.Join(data, "blobs") // as the binary does
	}
	o.OnChange = eng.Handle
	st, err := store.Open(kv, o)
	if err != nil {
		t.Fatal(err)
	}
	eng.SetMetaSources(views.MetaSources{ // as the binary does
		Maintenance: func(may views.May) ([]byte, error) { return lifecycle.Log(st, may) },
		MCP:         func(may views.May) ([]byte, error) { return audit.Log(st, may) },
		Report:      func(may views.May) ([]byte, error) { return report.HTML(st, may, report.Options{}) },
	})
	eng.Start(st)
	mnt := t.TempDir()
	cfg.DataDir, cfg.Views, cfg.Debug = data, eng, os.Getenv("MNEMOFS_FUSE_DEBUG") != ""
	srv, err := Mount(mnt, st, n, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tf := &testFS{dir: mnt, data: data, kv: kv, st: st, srv: srv, eng: eng}
	t.Cleanup(tf.unmount)
	return tf
}

// testMount mounts a fresh store.
func testMount(t testing.TB) *testFS {
	return mountAt(t, t.TempDir(), store.Options{ScratchAge: -1})
}

func (tf *testFS) unmount() {
	if tf.srv == nil {
		return
	}
	// The kernel releases a test's last files asynchronously: on a loaded
	// machine the mount can still be busy after go-fuse's own retries
	// (~0.3 s). Try again for a few seconds, then detach it lazily.
	var err error
	for try := 0; try < 50; try++ {
		if err = tf.srv.Unmount(); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		if out, lerr := exec.Command("fusermount3", "-uz", tf.dir).CombinedOutput(); lerr != nil {
			panic(fmt.Sprintf("unmount: %v; lazy unmount: %v %s", err, lerr, out))
		}
	}
	tf.srv.Wait()
	tf.eng.Stop()
	tf.st.Close()
	tf.kv.Close()
	tf.srv = nil
}

func (tf *testFS) path(p string) string { return filepath.Join(tf.dir, p) }
