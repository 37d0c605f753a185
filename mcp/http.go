package mcp

import (
	"crypto/sha256"
	"crypto/subtle"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxBody bounds an HTTP request: a file_text of MaxText bytes, JSON
// escaped at worst six bytes a byte, and the envelope.
const maxBody = 6*MaxText + 64<<10

// sessionIdle closes an HTTP session no request has used for so long: a
// client that dies (or never sends DELETE) would otherwise keep its
// session, about 15 KB, for the server's life. A client that comes back
// later is told the session is gone and initializes again.
const sessionIdle = 30 * time.Minute

// HTTPHandler serves srv over the streamable HTTP transport to requests
// that carry "Authorization: Bearer <token>"; any other request gets 401
// and one log line naming the peer and the reason, never a token.
func HTTPHandler(srv *sdk.Server, token string, logger *log.Logger) http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{MaxRequestBodyBytes: maxBody, SessionTimeout: sessionIdle})
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !allowedOrigin(o, r.Host) {
			// A page of another site in a browser on this machine
			// (DNS rebinding): the MCP transport's rule is to refuse it.
			logger.Printf("mcp: refused an HTTP request from %s: Origin %q", r.RemoteAddr, o)
			http.Error(w, "forbidden: requests from web pages of other origins are refused", http.StatusForbidden)
			return
		}
		reason := ""
		scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		switch {
		case r.Header.Get("Authorization") == "":
			reason = "no Authorization header"
		case !ok || !strings.EqualFold(scheme, "Bearer"):
			reason = "the Authorization header is not a bearer token"
		default:
			// Compared as hashes, in constant time: neither the token
			// nor its length leaks through timing.
			g := sha256.Sum256([]byte(strings.TrimSpace(got)))
			if subtle.ConstantTimeCompare(g[:], want[:]) != 1 {
				reason = "wrong bearer token"
			}
		}
		if reason != "" {
			logger.Printf("mcp: refused an HTTP request from %s: %s", r.RemoteAddr, reason)
			w.Header().Set("WWW-Authenticate", `Bearer realm="mnemofs"`)
			http.Error(w, "unauthorized: this server needs Authorization: Bearer <token> (the token in the server's --token-file)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// allowedOrigin reports an Origin header of the server's own host, or of
// this machine (localhost, 127.0.0.1, ::1).
func allowedOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	switch h := strings.ToLower(u.Hostname()); {
	case h == "localhost", h == "::1":
		return true
	default:
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
}
