package backend

import (
	"os"
	"testing"

	"github.com/mnemofs/mnemofs/internal/testetcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"time"
)

// The etcd servers of the tests are internal/testetcd's.

func sharedEtcd(t *testing.T) []string { return testetcd.Shared(t) }

func startCluster(t *testing.T, n int) *testetcd.Cluster { return testetcd.StartCluster(t, n) }

func testPrefix(t *testing.T) string { return testetcd.Prefix(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	testetcd.StopShared()
	os.Exit(code)
}

// openEtcdKV opens a KV on eps under prefix, closed at the test's end.
func openEtcdKV(t *testing.T, eps []string, prefix string, mod func(*EtcdOptions)) KV {
	t.Helper()
	o := EtcdOptions{Endpoints: eps, Prefix: prefix}
	if mod != nil {
		mod(&o)
	}
	kv, err := OpenEtcd(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kv.Close() })
	return kv
}

// rawClient is a plain etcd client, to look at what the KV stored.
func rawClient(t *testing.T, eps []string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}
