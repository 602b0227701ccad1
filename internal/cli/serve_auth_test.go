//go:build unix

package cli

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/toolshelf/toolshelf/internal/oauthtest"
)

// TestServeAuthFlagsRefused: settings of --auth-* that cannot work are
// refused with exit 2 and what to do instead, before serve listens.
func TestServeAuthFlagsRefused(t *testing.T) {
	mcp := writeMCPConfig(t, map[string]any{})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--auth-scope", "mcp:tools"}, "need --auth-issuer"},
		{[]string{"--auth-issuer", "https://as.example.com"}, "add --http ADDR"},
		{[]string{"--http", "127.0.0.1:0", "--token", "a-long-enough-token", "--auth-issuer", "https://as.example.com"}, "keep one"},
		{[]string{"--http", "127.0.0.1:0", "--auth-issuer", "http://as.example.com"}, "must use https"},
		{[]string{"--http", "127.0.0.1:0", "--auth-issuer", "https://as.example.com", "--auth-introspect", "https://as.example.com/introspect"}, "TOOLSHELF_INTROSPECT_CLIENT_ID"},
		{[]string{"--http", "127.0.0.1:0", "--auth-issuer", "http://127.0.0.1:1"}, "check the issuer URL"}, // nothing listens there
	} {
		var stderr bytes.Buffer
		code := Main(context.Background(), append([]string{"serve", "--mcp", mcp, "--metrics", "off"}, c.args...), strings.NewReader(""), &bytes.Buffer{}, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}

// bearerRoundTripper sends a token with every request.
type bearerRoundTripper string

func (b bearerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeWithAuthIssuer: serve --http --auth-issuer publishes the
// metadata for its own loopback URL, refuses a request without a token
// and serves the SDK's client with a token of the authorization server
// for its URL and scope.
func TestServeWithAuthIssuer(t *testing.T) {
	as := oauthtest.Start(t, nil)
	url := serveHTTP(t, "--mcp", writeMCPConfig(t, map[string]any{}), "--metrics", "off", "--auth-issuer", as.Issuer, "--auth-scope", "mcp:tools")
	origin := strings.TrimSuffix(url, "/mcp")
	meta, err := oauthex.GetProtectedResourceMetadata(t.Context(), origin+"/.well-known/oauth-protected-resource/mcp", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != as.Issuer {
		t.Errorf("authorization_servers %q, want [%s]", meta.AuthorizationServers, as.Issuer)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	if _, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil); err == nil {
		t.Error("connected without a token")
	}
	tok := as.Token(t, oauthtest.TokenRequest{Audience: url, Scopes: []string{"mcp:tools"}}).AccessToken
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRoundTripper(tok)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
}

// TestClaudeCodeSeesTheGatewayNeedsAuth: claude mcp list, offline,
// against a gateway that is an OAuth protected resource reports that it
// needs authentication ("! Needs authentication"), not a failure ("✘",
// which a gateway with a static --token and no header gets).
func TestClaudeCodeSeesTheGatewayNeedsAuth(t *testing.T) {
	c := newClaudeCode(t)
	as := oauthtest.Start(t, nil)
	url := serveHTTP(t, "--mcp", filesystemServer(t, t.TempDir()), "--metrics", "off", "--auth-issuer", as.Issuer, "--auth-scope", "mcp:tools")
	c.mcpAdd(t, "--transport", "http", "toolshelf-oauth", url)
	out, err := c.command(t, "mcp", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("claude mcp list: %v\n%s", err, out)
	}
	want := `toolshelf-oauth: ` + regexp.QuoteMeta(url) + ` \(HTTP\) - ! Needs authentication`
	if !regexp.MustCompile(`(?m)^` + want + `$`).Match(out) {
		t.Errorf("claude mcp list has no line %q:\n%s", want, out)
	}
}
