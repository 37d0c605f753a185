package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemofs/mnemofs/internal/testetcd"
)

// TestTeamOverTLS: a store on an etcd member that serves clients over TLS
// only, with client certificates: two mounts given --etcd-ca, --etcd-cert
// and --etcd-key share it; a command without them is refused with a clear
// error, and one with the CA but no client certificate too.
func TestTeamOverTLS(t *testing.T) {
	t.Parallel()
	ep, f := testetcd.StartTLS(t)
	be := "etcd://" + ep + "/tls"
	creds := []string{"--backend", be, "--etcd-ca", f.CA, "--etcd-cert", f.Cert, "--etcd-key", f.Key}
	a := startMount(t, t.TempDir(), t.TempDir(), creds...)
	b := startMount(t, t.TempDir(), t.TempDir(), creds...)
	note := "The team's memory travels over TLS.\n"
	check(t, os.WriteFile(filepath.Join(a.mnt, "semantic", "tls.md"), []byte(note), 0o644))
	within(t, 2*time.Second, "the file on B", func() bool {
		got, err := os.ReadFile(filepath.Join(b.mnt, "semantic", "tls.md"))
		return err == nil && string(got) == note
	})
	r := runMnemofs(t, "--backend", be, "--etcd-ca", f.CA, "--etcd-cert", f.Cert, "--etcd-key", f.Key, "--data", t.TempDir(), "search", "travels over TLS")
	if r.code != 0 || !strings.Contains(r.stdout, "tls.md") {
		t.Fatalf("search with the credentials:\n%s", r)
	}
	for _, args := range [][]string{
		{"--backend", be},
		{"--backend", be, "--etcd-ca", f.CA},
	} {
		r := runMnemofs(t, append(args, "--data", t.TempDir(), "stats")...)
		if r.code == 0 || !strings.Contains(r.stderr, ep) {
			t.Errorf("stats with %q: want a failure that names the cluster:\n%s", args, r)
		}
		t.Logf("%q: %s", args, strings.TrimSpace(r.stderr))
	}
}
