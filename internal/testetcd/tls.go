package testetcd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// TLSFiles are the PEM files of a TLS test server: the CA that signed its
// certificate, and a client certificate and key it accepts.
type TLSFiles struct{ CA, Cert, Key string }

// StartTLS starts one etcd member for t that serves clients over TLS only
// and requires a client certificate signed by its CA; it returns the
// member's host:port and the files a client needs.
func StartTLS(t testing.TB) (string, TLSFiles) {
	t.Helper()
	dir := t.TempDir()
	files, server, serverKey := writeCerts(t, dir)
	cp, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	pp, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	client, peer := fmt.Sprintf("https://127.0.0.1:%d", cp), fmt.Sprintf("http://127.0.0.1:%d", pp)
	logf, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(Binary(t), "--name", "tls", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "tls="+peer, "--initial-cluster-state", "new",
		"--cert-file", server, "--key-file", serverKey, "--trusted-ca-file", files.CA, "--client-cert-auth",
		"--logger", "zap", "--log-level", "error")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pair, err := tls.LoadX509KeyPair(files.Cert, files.Key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := os.ReadFile(files.CA)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{client}, DialTimeout: time.Second, Logger: zap.NewNop(),
		TLS: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	for deadline := time.Now().Add(20 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cli.Get(ctx, "health")
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "etcd.log"))
			t.Fatalf("the TLS etcd member does not answer: %v\n%s", err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Sprintf("127.0.0.1:%d", cp), files
}

// writeCerts writes a CA, a server certificate for 127.0.0.1 and a client
// certificate into dir.
func writeCerts(t testing.TB, dir string) (TLSFiles, string, string) {
	t.Helper()
	caKey, caCert, caDER := newCert(t, nil, nil, &x509.Certificate{
		Subject: pkix.Name{CommonName: "mnemofs test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature})
	files := TLSFiles{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "client.pem"), Key: filepath.Join(dir, "client-key.pem")}
	writePEM(t, files.CA, "CERTIFICATE", caDER)
	sKey, _, sDER := newCert(t, caCert, caKey, &x509.Certificate{
		Subject: pkix.Name{CommonName: "etcd"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}})
	server, serverKey := filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")
	writePEM(t, server, "CERTIFICATE", sDER)
	writeKey(t, serverKey, sKey)
	cKey, _, cDER := newCert(t, caCert, caKey, &x509.Certificate{
		Subject: pkix.Name{CommonName: "mnemofs"}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	writePEM(t, files.Cert, "CERTIFICATE", cDER)
	writeKey(t, files.Key, cKey)
	return files, server, serverKey
}

func newCert(t testing.TB, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, tmpl *x509.Certificate) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert, der
}

func writePEM(t testing.TB, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeKey(t testing.TB, path string, key *ecdsa.PrivateKey) {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, path, "EC PRIVATE KEY", der)
}
