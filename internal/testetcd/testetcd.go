// Package testetcd starts real etcd servers for tests: the etcd-server
// Debian package's binary (etcd on PATH; MNEMOFS_ETCD names another),
// members on loopback ports, data in a temporary directory, killed at the
// end (and by the kernel if the test binary dies first).
package testetcd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/mnemofs/mnemofs/internal/testenv"
	"go.uber.org/zap"
)

// Binary returns the etcd server binary: $MNEMOFS_ETCD, else etcd on
// PATH (Debian's etcd-server installs /usr/bin/etcd). Without one the
// etcd tests skip, or fail when MNEMOFS_REQUIRE_FUSE=1 (CI, whose .ci/run
// installs etcd-server).
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("MNEMOFS_ETCD"); p != "" {
		return p
	}
	return testenv.Tool(t, "etcd")
}

type member struct {
	name, dir, client, peer string
	cmd                     *exec.Cmd
}

type Cluster struct {
	bin, initial, token string
	mu                  sync.Mutex
	members             []*member
}

func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// NewCluster starts n members with their data under root and waits until
// every one answers.
func NewCluster(bin, root string, n int) (*Cluster, error) {
	var id [4]byte
	rand.Read(id[:])
	c := &Cluster{bin: bin, token: "mnemofs-test-" + hex.EncodeToString(id[:])}
	var initial []string
	for i := 0; i < n; i++ {
		cp, err := FreePort()
		if err != nil {
			return nil, err
		}
		pp, err := FreePort()
		if err != nil {
			return nil, err
		}
		m := &member{name: fmt.Sprintf("m%d", i), dir: filepath.Join(root, fmt.Sprintf("m%d", i)),
			client: fmt.Sprintf("http://127.0.0.1:%d", cp), peer: fmt.Sprintf("http://127.0.0.1:%d", pp)}
		c.members = append(c.members, m)
		initial = append(initial, m.name+"="+m.peer)
	}
	c.initial = strings.Join(initial, ",")
	for i := range c.members {
		if err := c.Start(i); err != nil {
			c.Stop()
			return nil, err
		}
	}
	for i := range c.members {
		if err := c.WaitHealthy(i, 20*time.Second); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

// Start runs member i (again, on its data, after a kill).
func (c *Cluster) Start(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.members[i]
	logf, err := os.OpenFile(m.dir+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(c.bin, "--name", m.name, "--data-dir", m.dir,
		"--listen-client-urls", m.client, "--advertise-client-urls", m.client,
		"--listen-peer-urls", m.peer, "--initial-advertise-peer-urls", m.peer,
		"--initial-cluster", c.initial, "--initial-cluster-state", "new",
		"--initial-cluster-token", c.token, "--logger", "zap", "--log-level", "error")
	cmd.Stdout, cmd.Stderr = logf, logf
	// The kernel kills it if the test binary dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	m.cmd = cmd
	return nil
}

func (c *Cluster) WaitHealthy(i int, d time.Duration) error {
	m := c.members[i]
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.client}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cli.Get(clientv3.WithRequireLeader(ctx), "health")
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(m.dir + ".log")
			return fmt.Errorf("etcd member %s not healthy after %v: %v\n%s", m.name, d, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Kill stops member i at once (SIGKILL), as a crash would.
func (c *Cluster) Kill(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.members[i]; m.cmd != nil {
		m.cmd.Process.Kill()
		m.cmd.Wait()
		m.cmd = nil
	}
}

func (c *Cluster) Stop() {
	for i := range c.members {
		c.Kill(i)
	}
}

func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.members {
		eps = append(eps, m.client)
	}
	return eps
}

// Leader returns the index of the member that leads, or -1.
func (c *Cluster) Leader() int {
	for i, m := range c.members {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{m.client}, DialTimeout: time.Second, Logger: zap.NewNop()})
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		st, err := cli.Status(ctx, m.client)
		cancel()
		cli.Close()
		if err == nil && st.Leader == st.Header.MemberId {
			return i
		}
	}
	return -1
}

// StartCluster starts n members for one test, stopped at its end.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	c, err := NewCluster(Binary(t), t.TempDir(), n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// shared is one single-member server for the tests that need no faults;
// each test has a prefix of its own in it. StopShared stops it.
var shared struct {
	once sync.Once
	dir  string
	c    *Cluster
	err  error
}

func Shared(t testing.TB) []string {
	t.Helper()
	bin := Binary(t)
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "mnemofs-etcd-"); shared.err == nil {
			shared.c, shared.err = NewCluster(bin, shared.dir, 1)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.c.Endpoints()
}

// StopShared stops the shared server, if one was started (TestMain calls
// it after m.Run).
func StopShared() {
	if shared.c != nil {
		shared.c.Stop()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

// Prefix is a store prefix no other test uses.
func Prefix(t testing.TB) string {
	var id [4]byte
	rand.Read(id[:])
	return "mnemofs-test/" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + hex.EncodeToString(id[:])
}
