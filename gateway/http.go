package gateway

import (
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPConfig configures the gateway's streamable HTTP handler.
type HTTPConfig struct {
	// Token, when set, is the bearer token every request must carry
	// (Authorization: Bearer <token>); others get 401. It is the client's
	// credential for the gateway and is never sent upstream.
	Token string
	// Auth, when set, makes the handler an OAuth 2.1 protected resource
	// (see [AuthConfig]) instead: every request needs an access token the
	// authorization server issued for the gateway. Token and Auth cannot
	// both be set.
	Auth *Auth
}

// httpSurfaces are the paths of the HTTP handler and the surface each
// serves.
var httpSurfaces = map[string]Surface{"/mcp": Meta, "/mcp/meta": Meta, "/mcp/direct": Direct, "/mcp/codemode": Codemode}

// Handler returns the gateway as a stateless streamable HTTP handler: the
// meta surface at /mcp (and /mcp/meta), the direct surface at /mcp/direct,
// the codemode surface at /mcp/codemode.
// No request depends on an earlier one, so replicas behind a load
// balancer can answer any request; clients of both protocol generations
// are served (those that initialize get no session to keep). A request
// ends with the HTTP request that carries it: a client that disconnects
// stops its script or call. The SDK's protection against
// DNS rebinding applies on loopback addresses. With cfg.Auth it also
// serves the resource metadata under [ResourceMetadataPath]. It panics
// when cfg sets both Token and Auth. A request without a valid token is
// answered 401 (or 403) before its body is read, and a body is read
// within [BodyTimeout] and [MaxRequestBytes] (httpfront.go); cfg.Token
// should pass [CheckToken].
func (g *Gateway) Handler(cfg HTTPConfig) http.Handler {
	opts := &mcp.StreamableHTTPOptions{Stateless: true}
	mux := http.NewServeMux()
	g.Server(Meta) // makes the servers, without the direct surface's tools
	for path, s := range httpSurfaces {
		// Server is asked per request: the direct surface's tools are
		// made on its first request.
		mux.Handle(path, carry(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.Server(s) }, opts)))
	}
	h := readBody(mux)
	if cfg.Auth != nil {
		if cfg.Token != "" {
			panic("gateway: HTTPConfig sets both Token and Auth: set one")
		}
		return cfg.Auth.handler(h)
	}
	if cfg.Token == "" {
		return h
	}
	want := []byte("Bearer " + cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(strings.TrimSpace(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolshelf"`)
			refuse(w, http.StatusUnauthorized, "unauthorized: send Authorization: Bearer <the gateway's token>")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ServeStdio serves one client on r and w (standard input and output for
// a client that starts the gateway as a process), one JSON-RPC message a
// line, until the client leaves or ctx ends. A line that is not a
// JSON-RPC message (not JSON, an array, an object without "jsonrpc":
// "2.0"), or is longer than [MaxStdioLine], is answered on w with a
// JSON-RPC error (-32700 or -32600), logged and skipped: the session goes
// on, as the HTTP handler answers such a body 400 and serves the next.
func (g *Gateway) ServeStdio(ctx context.Context, s Surface, r io.ReadCloser, w io.WriteCloser) error {
	out := &lockedWriter{w: w}
	in := filteredInput{newLineFilter(r, out, g.cfg.Logger), r}
	return g.Server(s).Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
}

// httpRequestKey is the context key under which [carry] puts the context
// of the HTTP request an MCP request arrived on.
type httpRequestKey struct{}

// carry passes each HTTP request on with its own context among its
// values: the SDK hides the end of that context from the MCP request's
// handler (only 2026-07-28 requests, and only when asked, see it end), but
// keeps its values, so [bound] can find it.
func carry(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), httpRequestKey{}, r.Context())))
	})
}

// overHTTP reports whether ctx is a request's that arrived over the HTTP
// handler, which keeps no session.
func overHTTP(ctx context.Context) bool {
	_, ok := ctx.Value(httpRequestKey{}).(context.Context)
	return ok
}

// bound is every surface's receiving middleware: a request that arrived
// over HTTP ends when its HTTP request does. The handler is stateless, so
// the HTTP request is the only way back to the client: once it ends (the
// client disconnected) no answer can reach the client. The SDK cancels
// the requests of a stdio connection when the connection ends, but not
// those of a stateless HTTP request: there it closes the request's
// session only after the handler returns, so a client that went away left
// its script running to the script's time limit.
func bound(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		hc, ok := ctx.Value(httpRequestKey{}).(context.Context)
		if !ok {
			return next(ctx, method, req)
		}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		stop := context.AfterFunc(hc, func() {
			cancel(fmt.Errorf("the client disconnected: %w", context.Cause(hc)))
		})
		defer stop()
		return next(ctx, method, req)
	}
}
