package mcp

import (
	"context"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
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

// HTTPHandler serves servers over the streamable HTTP transport to
// requests that carry "Authorization: Bearer <token>" with one of tokens:
// a session is its token's name's (servers.For), and a request with
// another token than the one that began the session is refused (403).
// Any other request gets 401 and one log line naming the peer and the
// reason, never a token: no session begins without a token.
func HTTPHandler(servers *Servers, tokens *Tokens, logger *log.Logger) http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		name, ok := r.Context().Value(tokenName{}).(string)
		if !ok {
			return nil // not reached: every request is checked first
		}
		return servers.For(name)
	}, &sdk.StreamableHTTPOptions{MaxRequestBodyBytes: maxBody, SessionTimeout: sessionIdle})
	// The SDK's bearer middleware puts the name in the request's
	// TokenInfo, which binds a session to the token that began it.
	inner := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		name, ok := ctx.Value(tokenName{}).(string)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "token:" + name}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !allowedOrigin(o, r.Host) {
			// A page of another site in a browser on this machine
			// (DNS rebinding): the MCP transport's rule is to refuse it.
			logger.Printf("mcp: refused an HTTP request from %s: Origin %q", r.RemoteAddr, o)
			http.Error(w, "forbidden: requests from web pages of other origins are refused", http.StatusForbidden)
			return
		}
		reason, name := "", ""
		scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		switch {
		case r.Header.Get("Authorization") == "":
			reason = "no Authorization header"
		case !ok || !strings.EqualFold(scheme, "Bearer"):
			reason = "the Authorization header is not a bearer token"
		default:
			if name, ok = tokens.Lookup(strings.TrimSpace(got)); !ok {
				reason = "wrong bearer token"
			}
		}
		if reason != "" {
			logger.Printf("mcp: refused an HTTP request from %s: %s", r.RemoteAddr, reason)
			w.Header().Set("WWW-Authenticate", `Bearer realm="mnemofs"`)
			http.Error(w, "unauthorized: this server needs Authorization: Bearer <token> (a token of the server's --tokens or --token-file)", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tokenName{}, name)))
	})
}

// tokenName is the context key of the name of a request's token.
type tokenName struct{}

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
