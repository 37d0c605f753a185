package main

// How mnemofs reaches a secured etcd cluster: TLS (--etcd-ca, and a client
// certificate with --etcd-cert and --etcd-key) and etcd's own users
// (--etcd-user, with the password in MNEMOFS_ETCD_PASSWORD only, so that
// it is not on a command line). Each flag has an environment variable,
// which the flag overrides. All of it is handed to etcd's client as it is.

import (
	"crypto/tls"
	"crypto/x509"
	"os"

	"github.com/mnemofs/mnemofs/backend"
	"github.com/spf13/cobra"
)

var etcdFlags struct{ ca, cert, key, user string }

func addEtcdFlags(c *cobra.Command) {
	f := c.PersistentFlags()
	f.StringVar(&etcdFlags.ca, "etcd-ca", "", "with --backend: the CA certificate (PEM) that signed the etcd members' certificates; turns TLS on (env MNEMOFS_ETCD_CA)")
	f.StringVar(&etcdFlags.cert, "etcd-cert", "", "with --backend: this host's client certificate (PEM) for etcd; turns TLS on (env MNEMOFS_ETCD_CERT)")
	f.StringVar(&etcdFlags.key, "etcd-key", "", "with --backend: the key of --etcd-cert (PEM; env MNEMOFS_ETCD_KEY)")
	f.StringVar(&etcdFlags.user, "etcd-user", "", "with --backend: the etcd user to authenticate as; the password is read from MNEMOFS_ETCD_PASSWORD (env MNEMOFS_ETCD_USER)")
}

func flagOrEnv(v, env string) string {
	if v != "" {
		return v
	}
	return os.Getenv(env)
}

// etcdAuth sets o's TLS and user from the flags and the environment.
func etcdAuth(o *backend.EtcdOptions) error {
	ca, cert, key := flagOrEnv(etcdFlags.ca, "MNEMOFS_ETCD_CA"), flagOrEnv(etcdFlags.cert, "MNEMOFS_ETCD_CERT"), flagOrEnv(etcdFlags.key, "MNEMOFS_ETCD_KEY")
	if user := flagOrEnv(etcdFlags.user, "MNEMOFS_ETCD_USER"); user != "" {
		o.Username, o.Password = user, os.Getenv("MNEMOFS_ETCD_PASSWORD")
		if o.Password == "" {
			return fail("--etcd-user %s: set the password in MNEMOFS_ETCD_PASSWORD", user)
		}
	}
	if ca == "" && cert == "" && key == "" {
		return nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return fail("--etcd-ca: %v", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return fail("--etcd-ca %s holds no PEM certificate", ca)
		}
	}
	if (cert == "") != (key == "") {
		return fail("--etcd-cert and --etcd-key go together")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return fail("--etcd-cert/--etcd-key: %v", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	o.TLS = c
	return nil
}
