package e2e

import (
	"bytes"
	"context"
	"time"

	"crypto/sha256"
	"encoding/hex"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mnemofs/mnemofs/internal/testetcd"
)

// The backend under the tests: the binary's default (Badger in the data
// directory), or, with MNEMOFS_TEST_BACKEND=etcd, a real etcd server
// (internal/testetcd, started at the first use) that every run of the
// binary is pointed at with MNEMOFS_BACKEND, one prefix per data
// directory, so that runs on the same data directory find the same store.
// Tests of what only a local store has (files in the data directory,
// blob files, passthrough) skip there (needLocalStore).

func onEtcd() bool { return os.Getenv("MNEMOFS_TEST_BACKEND") == "etcd" }

// withBackend points cmd, which runs the binary on data, at the test
// backend.
func withBackend(t testing.TB, cmd *exec.Cmd, data string) {
	t.Helper()
	if !onEtcd() || slices.ContainsFunc(cmd.Env, func(e string) bool { return strings.HasPrefix(e, "MNEMOFS_BACKEND=") }) {
		return // not on etcd, or the test chose the backend itself
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "MNEMOFS_BACKEND="+etcdURL(t, data))
}

// etcdURL is the --backend of data's store on the test server.
func etcdURL(t testing.TB, data string) string {
	sum := sha256.Sum256([]byte(data))
	eps := testetcd.Shared(t)
	hosts := make([]string, len(eps))
	for i, e := range eps {
		hosts[i] = strings.TrimPrefix(e, "http://")
	}
	return "etcd://" + strings.Join(hosts, ",") + "/mnemofs-e2e/" + hex.EncodeToString(sum[:8])
}

// dataArg is the value of --data in args ("" when there is none).
func dataArg(args []string) string {
	for i, a := range args {
		if a == "--data" && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--data="); ok {
			return v
		}
	}
	return ""
}

// etcdDump is every key and value etcd holds of data's store.
func etcdDump(t testing.TB, data string) []byte {
	t.Helper()
	u := etcdURL(t, data)
	prefix := u[strings.LastIndex(u, "/mnemofs-e2e/")+1:]
	cli, err := clientv3.New(clientv3.Config{Endpoints: testetcd.Shared(t), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, prefix+"/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, kv := range resp.Kvs {
		b.Write(kv.Key)
		b.WriteByte(0)
		b.Write(kv.Value)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// needLocalStore skips a test of what only a local store has.
func needLocalStore(t testing.TB) {
	t.Helper()
	if onEtcd() {
		t.Skip("looks at the local store's files (data directory, blob files, passthrough)")
	}
}
