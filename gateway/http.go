package gateway

import (
	"context"
	"crypto/subtle"
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
}

// Handler returns the gateway as a stateless streamable HTTP handler: the
// meta surface at /mcp (and /mcp/meta), the direct surface at /mcp/direct,
// the codemode surface at /mcp/codemode.
// No request depends on an earlier one, so replicas behind a load
// balancer can answer any request; clients of both protocol generations
// are served (those that initialize get no session to keep). The SDK's
// protection against DNS rebinding applies on loopback addresses.
func (g *Gateway) Handler(cfg HTTPConfig) http.Handler {
	opts := &mcp.StreamableHTTPOptions{Stateless: true}
	mux := http.NewServeMux()
	for path, s := range map[string]Surface{"/mcp": Meta, "/mcp/meta": Meta, "/mcp/direct": Direct, "/mcp/codemode": Codemode} {
		srv := g.Server(s)
		mux.Handle(path, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts))
	}
	if cfg.Token == "" {
		return mux
	}
	want := []byte("Bearer " + cfg.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(strings.TrimSpace(r.Header.Get("Authorization")))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolshelf"`)
			http.Error(w, "unauthorized: send Authorization: Bearer <the gateway's token>", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// ServeStdio serves one client on r and w (standard input and output for
// a client that starts the gateway as a process) until the client leaves
// or ctx ends.
func (g *Gateway) ServeStdio(ctx context.Context, s Surface, r io.ReadCloser, w io.WriteCloser) error {
	return g.Server(s).Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
}
