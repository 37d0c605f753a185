package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/mnemofs/mnemofs/mcp"
	"github.com/mnemofs/mnemofs/store"
)

func mcpCmd() *cobra.Command {
	var user, addr, tokenFile string
	var ro bool
	c := &cobra.Command{
		Use:   "mcp [--data DIR] [--user NAME] [--read-only] [--http ADDR --token-file FILE]",
		Short: "serve the memory over MCP (stdio, or streamable HTTP with --http), with or without a mount",
		Args:  exactArgs(0, "no arguments (it serves on stdin/stdout, or with --http ADDR)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("user") && !store.ValidName(user) {
				return fail("--user needs a user name usable as a file name (got %q)", user)
			}
			var token string
			if addr != "" || tokenFile != "" {
				var err error
				if addr, err = mcpAddr(addr, tokenFile); err != nil {
					return err
				}
				if token, err = readTokenFile(tokenFile); err != nil {
					return err
				}
			}
			return serveMCP(user, ro, addr, token)
		},
	}
	c.Flags().StringVar(&user, "user", "", "serve only this user's memories (and those naming no user), as 'mount --user' does; a running mount must be for the same user")
	c.Flags().BoolVar(&ro, "read-only", false, "change nothing: the memory tool only views")
	c.Flags().StringVar(&addr, "http", "", "serve streamable HTTP on ADDR (HOST:PORT; ':PORT' is loopback) instead of stdio; needs --token-file")
	c.Flags().StringVar(&tokenFile, "token-file", "", "file holding the bearer token every HTTP request must carry (private: chmod 600)")
	return c
}

// mcpAddr checks --http and --token-file and returns the address to bind:
// loopback unless a host is named; every HTTP request needs the token, and
// a non-loopback address without one is refused with its own message.
func mcpAddr(addr, tokenFile string) (string, error) {
	if addr == "" {
		return "", fail("--token-file goes with --http ADDR (stdio needs no token: the client starts the server)")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", fail("--http needs HOST:PORT or :PORT (such as 127.0.0.1:7077 or :7077), got %q", addr)
	}
	if host == "" {
		host = "127.0.0.1" // loopback unless asked otherwise
	}
	loopback := true
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return "", fail("--http %s: cannot resolve %q: %v", addr, host, err)
	}
	for _, ip := range ips {
		loopback = loopback && ip.IsLoopback()
	}
	switch {
	case tokenFile == "" && !loopback:
		return "", fail("--http %s is not a loopback address: serving the memory beyond this host needs --token-file FILE (and TLS in front of it: the token travels in clear)", addr)
	case tokenFile == "":
		return "", fail("--http needs --token-file FILE: every request must carry 'Authorization: Bearer <the file's token>' (make one with 'head -c 32 /dev/urandom | base64 > FILE; chmod 600 FILE')")
	}
	return net.JoinHostPort(host, port), nil
}

// readTokenFile reads the bearer token, refusing a file others can read
// (checked on the open file, as key files are). Messages never show it.
func readTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fail("cannot read the token file: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fail("cannot read the token file: %v", err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch me := uint32(os.Geteuid()); {
	case fi.Mode().Perm()&0o077 != 0:
		return "", fail("the token file %s is open to other users (mode %04o): make it private with 'chmod 600 %s'", path, fi.Mode().Perm(), path)
	case st != nil && me != 0 && st.Uid != me:
		return "", fail("the token file %s belongs to uid %d, not to you (uid %d): use a token file of your own", path, st.Uid, me)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4097))
	if err != nil {
		return "", fail("cannot read the token file: %v", err)
	}
	tok := string(bytes.TrimSpace(b))
	switch {
	case len(b) > 4096:
		return "", fail("the token file %s is over 4096 bytes: it should hold one token (16 to 4096 printable characters)", path)
	case len(tok) < 16:
		return "", fail("the token in %s is too short (%d bytes): use at least 16 random characters ('head -c 32 /dev/urandom | base64 > %s')", path, len(tok), path)
	case strings.IndexFunc(tok, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0:
		return "", fail("the token in %s holds spaces or characters an HTTP header cannot carry: use printable ASCII ('head -c 32 /dev/urandom | base64 > %s')", path, path)
	}
	return tok, nil
}

// version is the binary's module version, for the MCP handshake.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// serveMCP serves until the client goes (stdio) or a signal comes.
func serveMCP(user string, ro bool, addr, token string) error {
	data, err := dataDir()
	if err != nil {
		return err
	}
	logger := log.New(os.Stderr, "mnemofs: ", 0)
	route := &mcpRoute{data: data, user: user, ro: ro, logger: logger}
	if err := route.connect(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	defer route.Close()
	srv := mcp.NewServer(route, version(), nil)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if addr == "" {
		logger.Printf("MCP server on stdio for %s", route.describe())
		tr, restore := stdioTransport()
		defer restore()
		err := srv.Run(ctx, traced(tr))
		if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("MCP over stdio: %w", err)
		}
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fail("cannot listen on %s: %v", addr, err)
	}
	hs := &http.Server{Handler: mcp.HTTPHandler(srv, token, logger), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	logger.Printf("MCP server on http://%s/ for %s", ln.Addr(), route.describe())
	select {
	case <-ctx.Done():
	case err := <-done:
		return fmt.Errorf("serving HTTP on %s: %w", addr, err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	return nil
}

// traced is tr, whose messages are also written to stderr, each with the
// time it was read or written, when $MNEMOFS_MCP_TRACE is set (a
// diagnosis aid: which side of a pipe a slow call waited on).
func traced(tr sdk.Transport) sdk.Transport {
	if os.Getenv("MNEMOFS_MCP_TRACE") == "" {
		return tr
	}
	return &sdk.LoggingTransport{Transport: tr, Writer: stampWriter{os.Stderr}}
}

// stampWriter prefixes each write with "mcp-trace", the time and a space.
type stampWriter struct{ w io.Writer }

func (s stampWriter) Write(b []byte) (int, error) {
	_, err := fmt.Fprintf(s.w, "mcp-trace %s %s", time.Now().Format("15:04:05.000000"), b)
	return len(b), err
}

// stdioTransport is MCP over stdin and stdout. When stdin is a pipe or a
// socket (as an MCP client starts a server), it is read in non-blocking
// mode through Go's poller, so that no thread sits in a read of stdin
// between two messages. Seen with go1.26.8 under load, about once in
// hundreds of sessions: a request read at once was decoded only when the
// client's next bytes came (its cancellation, 60 s later), and once the
// server was caught in a garbage collection's stop of the world with the
// stdin reader just back from its read; a stop that waits for a blocking
// read is the likely cause (not proven). restore puts stdin back in
// blocking mode. Lines are checked one by one before the SDK reads them
// (lineGuard).
func stdioTransport() (tr sdk.Transport, restore func()) {
	out := &syncWriter{w: os.Stdout}
	guarded := func(in io.ReadCloser) sdk.Transport {
		return &sdk.IOTransport{Reader: newLineGuard(in, out), Writer: out}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(0, &st); err != nil {
		return guarded(os.Stdin), func() {}
	}
	if m := st.Mode & syscall.S_IFMT; m != syscall.S_IFIFO && m != syscall.S_IFSOCK {
		return guarded(os.Stdin), func() {} // a terminal or a file: as it is
	}
	if err := syscall.SetNonblock(0, true); err != nil {
		return guarded(os.Stdin), func() {}
	}
	in := os.NewFile(0, "stdin") // non-blocking: read through the poller
	return guarded(in), func() { syscall.SetNonblock(0, false) }
}
