package main

import (
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

// mcpFlags are the flags of 'mnemofs mcp'.
type mcpFlags struct {
	user, addr, tokenFile, tokens string
	ro                            bool
	limits                        mcp.Limits
}

func mcpCmd() *cobra.Command {
	var f mcpFlags
	c := &cobra.Command{
		Use:   "mcp [--data DIR] [--user NAME] [--read-only] [--http ADDR (--tokens FILE | --token-file FILE)]",
		Short: "serve the memory over MCP (stdio, or streamable HTTP with --http), with or without a mount",
		Args:  exactArgs(0, "no arguments (it serves on stdin/stdout, or with --http ADDR)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("user") && !store.ValidName(f.user) {
				return fail("--user needs a user name usable as a file name (got %q)", f.user)
			}
			limited := cmd.Flags().Changed("calls-per-second") || cmd.Flags().Changed("concurrent-calls")
			switch {
			case f.tokens != "" && f.tokenFile != "":
				return fail("--tokens and --token-file do not go together: --tokens FILE holds a token per user (NAME TOKEN [read-only] a line), --token-file FILE the one token of a server for one user")
			case f.tokens != "" && cmd.Flags().Changed("user"):
				return fail("--tokens names the user of each token (NAME TOKEN a line): --user goes with stdio or --token-file")
			case f.addr == "" && f.tokens != "":
				return fail("--tokens goes with --http ADDR (stdio needs no token: the client starts the server)")
			case f.addr == "" && limited:
				return fail("--calls-per-second and --concurrent-calls limit the tokens of --http ADDR --tokens FILE (a stdio server has one client, which started it)")
			case f.limits.PerSecond < 0 || f.limits.Concurrent < 0:
				return fail("--calls-per-second and --concurrent-calls take 0 (no limit) or more")
			}
			if f.addr == "" && f.tokenFile == "" {
				return serveMCP(f, nil)
			}
			var err error
			if f.addr, err = mcpAddr(f.addr, f.tokenFile != "" || f.tokens != ""); err != nil {
				return err
			}
			read := func() ([]mcp.Token, error) { return mcp.ReadTokenFile(f.tokenFile, f.user, f.limits) }
			if f.tokens != "" {
				read = func() ([]mcp.Token, error) { return mcp.ReadTokens(f.tokens, f.limits) }
			}
			toks, err := mcp.NewTokens(read, f.ro)
			if err != nil {
				return fail("%v", err)
			}
			return serveMCP(f, toks)
		},
	}
	c.Flags().StringVar(&f.user, "user", "", "serve only this user's memories (and those naming no user), as 'mount --user' does; a running mount must be for every user or for this one")
	c.Flags().BoolVar(&f.ro, "read-only", false, "change nothing: the memory tool only views")
	c.Flags().StringVar(&f.addr, "http", "", "serve streamable HTTP on ADDR (HOST:PORT; ':PORT' is loopback) instead of stdio; needs --tokens or --token-file")
	c.Flags().StringVar(&f.tokens, "tokens", "", "file of bearer tokens, one a line: NAME TOKEN [read-only] [calls-per-second=N] [concurrent-calls=N]; each token's sessions are user NAME's (private: chmod 600; re-read on SIGHUP)")
	c.Flags().StringVar(&f.tokenFile, "token-file", "", "file holding the one bearer token every HTTP request must carry, for --user (or every user) (private: chmod 600; re-read on SIGHUP)")
	c.Flags().Float64Var(&f.limits.PerSecond, "calls-per-second", mcp.DefaultLimits.PerSecond, "tool calls a second each token may make (0: no limit); a tokens file line may say its own")
	c.Flags().IntVar(&f.limits.Concurrent, "concurrent-calls", mcp.DefaultLimits.Concurrent, "tool calls each token may have running at once, the others waiting (0: no limit); a tokens file line may say its own")
	return c
}

// mcpAddr checks --http and returns the address to bind: loopback unless
// a host is named; every HTTP request needs a token (hasTokens), and a
// non-loopback address without one is refused with its own message.
func mcpAddr(addr string, hasTokens bool) (string, error) {
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
	case !hasTokens && !loopback:
		return "", fail("--http %s is not a loopback address: serving the memory beyond this host needs --tokens FILE or --token-file FILE (and TLS in front of it: tokens travel in clear)", addr)
	case !hasTokens:
		return "", fail("--http needs --tokens FILE (a line per agent: NAME TOKEN, each token a user) or --token-file FILE (one token): every request must carry 'Authorization: Bearer <token>' (make one with 'head -c 32 /dev/urandom | base64'; chmod 600 the file)")
	}
	return net.JoinHostPort(host, port), nil
}

// version is the binary's module version, for the MCP handshake.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// serveMCP serves until the client goes (stdio) or a signal comes; with
// toks, over HTTP to the bearers of its tokens, re-read on SIGHUP.
func serveMCP(f mcpFlags, toks *mcp.Tokens) error {
	data, err := dataDir()
	if err != nil {
		return err
	}
	logger := log.New(os.Stderr, "mnemofs: ", 0)
	users := func() []string { return []string{f.user} }
	if toks != nil {
		users = toks.Names
	}
	route := &mcpRoute{data: data, users: users, ro: f.ro, logger: logger}
	if err := route.connect(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	defer route.Close()
	if toks == nil {
		p := mcp.Principal{User: f.user, Via: "stdio", ReadOnly: f.ro}
		servers := mcp.NewServers(route, version(), func(string) (mcp.Principal, bool) { return p, true }, route.report, nil)
		route.served = servers.Served
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		defer stop()
		logger.Printf("MCP server on stdio for %s, %s", forUser(f.user), route.describe())
		tr, restore := stdioTransport()
		defer restore()
		err := servers.For(f.user).Run(ctx, traced(tr))
		if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("MCP over stdio: %w", err)
		}
		return nil
	}
	servers := mcp.NewServers(route, version(), toks.Principal, route.report, nil)
	route.served = servers.Served
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fail("cannot listen on %s: %v", f.addr, err)
	}
	hs := &http.Server{Handler: mcp.HTTPHandler(servers, toks, logger), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	logger.Printf("MCP server on http://%s/ for %s, %s", ln.Addr(), tokenUsers(toks, f), route.describe())
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			hs.Shutdown(sctx)
			return nil
		case err := <-done:
			return fmt.Errorf("serving HTTP on %s: %w", f.addr, err)
		case <-hup:
			reloadTokens(toks, servers, f, logger)
		}
	}
}

// reloadTokens reads the tokens again (SIGHUP): the sessions of a token
// withdrawn end at once; a file that cannot be taken changes nothing.
func reloadTokens(toks *mcp.Tokens, servers *mcp.Servers, f mcpFlags, logger *log.Logger) {
	file := f.tokens
	if file == "" {
		file = f.tokenFile
	}
	added, removed, err := toks.Reload()
	if err != nil {
		logger.Printf("SIGHUP: the tokens were not re-read, those in use stay: %v", err)
		return
	}
	for _, name := range removed {
		servers.Close(name)
	}
	logger.Printf("SIGHUP: re-read %s: %d tokens (added: %s; withdrawn, their sessions ended: %s)", file, len(toks.Names()), nameList(added), nameList(removed))
	if len(toks.Names()) == 0 {
		logger.Printf("warning: %s holds no token now: every request is refused until a SIGHUP reads one", file)
	}
}

func nameList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	for i, n := range names {
		if n == "" {
			names[i] = "(every user)"
		}
	}
	return strings.Join(names, ", ")
}

// tokenUsers says whom the tokens' sessions are for, in the ready line.
func tokenUsers(toks *mcp.Tokens, f mcpFlags) string {
	if f.tokens == "" {
		return forUser(f.user) + " (the token of " + f.tokenFile + ")"
	}
	names := toks.Names()
	if len(names) > 8 {
		return fmt.Sprintf("%d tokens of %s (%s, ...)", len(names), f.tokens, strings.Join(names[:8], ", "))
	}
	return fmt.Sprintf("the tokens of %s (%s)", f.tokens, strings.Join(names, ", "))
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
