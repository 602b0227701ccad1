package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/internal/oauthtest"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// headerLog records the Authorization headers an upstream HTTP server
// received.
type headerLog struct {
	mu   sync.Mutex
	seen []string
}

func (h *headerLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.seen = append(h.seen, r.Header.Values("Authorization")...)
		h.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (h *headerLog) headers() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen)
}

// protected is a gateway over one upstream HTTP server, served over HTTP
// as a protected resource of an authorization server.
type protected struct {
	url      string // the gateway's origin
	auth     *gateway.Auth
	upstream *headerLog
	logs     *syncBuffer
}

// serveProtected starts a gateway protected by as; edit adjusts its
// authorization settings (PublicURL and Issuer are set).
func serveProtected(t *testing.T, as *oauthtest.Server, edit func(*gateway.AuthConfig)) *protected {
	t.Helper()
	p := &protected{upstream: &headerLog{}, logs: &syncBuffer{}}
	upSrv := mcptest.NewServer("notes", "")
	up := httptest.NewServer(p.upstream.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upSrv }, nil)))
	t.Cleanup(up.Close)
	g := newGateway(t, mcpclient.ServerConfig{Name: "notes", URL: up.URL})
	srv := httptest.NewUnstartedServer(nil)
	p.url = "http://" + srv.Listener.Addr().String()
	cfg := gateway.AuthConfig{
		Issuer:    as.Issuer,
		PublicURL: p.url,
		Scopes:    []string{"mcp:tools"},
		Logger:    slog.New(slog.NewTextHandler(p.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if edit != nil {
		edit(&cfg)
	}
	a, err := gateway.NewAuth(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.auth = a
	srv.Config.Handler = g.Handler(gateway.HTTPConfig{Auth: a})
	srv.Start()
	t.Cleanup(srv.Close)
	return p
}

// bearerTransport sends a token with every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// session connects the SDK's client to an endpoint with a token.
func (p *protected) session(t *testing.T, path, token string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: p.url + path, HTTPClient: &http.Client{Transport: bearerTransport{token}}}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// initialize posts an initialize request to path with the Authorization
// header auth ("" for none) and returns the answer's status and
// challenge.
func (p *protected) initialize(t *testing.T, path, auth string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, p.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// TestProtectedResourceMetadata: the gateway publishes, for itself and
// for each endpoint, the metadata the MCP authorization spec requires,
// and the SDK's client-side discovery accepts each for its resource.
func TestProtectedResourceMetadata(t *testing.T) {
	as := oauthtest.Start(t, nil)
	p := serveProtected(t, as, func(c *gateway.AuthConfig) { c.Scopes = []string{"mcp:tools", "mcp:admin"} })
	for _, path := range []string{"", "/mcp", "/mcp/meta", "/mcp/direct", "/mcp/codemode"} {
		got, err := oauthex.GetProtectedResourceMetadata(t.Context(), p.url+gateway.ResourceMetadataPath+path, p.url+path, nil)
		if err != nil {
			t.Fatalf("%q: %v", path, err)
		}
		want := &oauthex.ProtectedResourceMetadata{
			Resource:               p.url + path,
			AuthorizationServers:   []string{as.Issuer},
			ScopesSupported:        []string{"mcp:tools", "mcp:admin"},
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "toolshelf gateway",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("metadata of %q (-want +got):\n%s", path, diff)
		}
	}
}

// TestAuthRefusesTokens: a request without a token, with one minted for
// another resource, an expired one, one of another authorization server
// or not a JWT gets 401 with a challenge naming the endpoint's metadata
// and the scope (and error="invalid_token" when a token was sent); one
// without the scope gets 403 error="insufficient_scope". No token reaches
// the log or the upstream server.
func TestAuthRefusesTokens(t *testing.T) {
	as := oauthtest.Start(t, nil)
	other := oauthtest.Start(t, nil)
	p := serveProtected(t, as, nil)
	clock := time.Now()
	var clockMu sync.Mutex
	gateway.SetAuthClock(p.auth, func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock })
	resource := p.url + "/mcp"
	mint := func(s *oauthtest.Server, aud string, ttl time.Duration, scopes ...string) string {
		return s.Token(t, oauthtest.TokenRequest{Audience: aud, Scopes: scopes, TTL: ttl}).AccessToken
	}
	good := mint(as, resource, 0, "mcp:tools")
	tokens := map[string]string{
		"wrong audience": mint(as, "http://127.0.0.1:1/mcp", 0, "mcp:tools"),
		"expired":        mint(as, resource, time.Second, "mcp:tools"),
		"other issuer":   mint(other, resource, 0, "mcp:tools"),
		"no scope":       mint(as, resource, 0, "mcp:admin"),
		"not a JWT":      "opaque-looking-token-value-1234567890",
	}
	meta := `resource_metadata="` + p.url + `/.well-known/oauth-protected-resource/mcp"`
	cases := []struct {
		name, auth string
		advance    time.Duration
		status     int
		challenge  string
	}{
		{"no token", "", 0, 401, `Bearer ` + meta + `, scope="mcp:tools"`},
		{"not bearer", "Basic dXNlcjpwYXNz", 0, 401, `Bearer ` + meta + `, scope="mcp:tools"`},
		{"wrong audience", "", 0, 401, `Bearer ` + meta + `, scope="mcp:tools", error="invalid_token", error_description="the token was issued for another resource"`},
		{"expired", "", time.Hour, 401, `Bearer ` + meta + `, scope="mcp:tools", error="invalid_token", error_description="the token has expired"`},
		{"other issuer", "", 0, 401, `Bearer ` + meta + `, scope="mcp:tools", error="invalid_token", error_description="the token's signature does not verify with the authorization server's keys"`},
		{"not a JWT", "", 0, 401, `Bearer ` + meta + `, scope="mcp:tools", error="invalid_token", error_description="the token is not a JWT signed by the authorization server"`},
		{"no scope", "", 0, 403, `Bearer ` + meta + `, scope="mcp:tools", error="insufficient_scope", error_description="the token does not grant the scope this gateway requires"`},
		{"good", "Bearer " + good, 0, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			auth := c.auth
			if tok, ok := tokens[c.name]; ok {
				auth = "Bearer " + tok
			}
			clockMu.Lock()
			clock = time.Now().Add(c.advance)
			clockMu.Unlock()
			status, challenge := p.initialize(t, "/mcp", auth)
			if status != c.status || challenge != c.challenge {
				t.Errorf("got %d %q\nwant %d %q", status, challenge, c.status, c.challenge)
			}
		})
	}
	logs := p.logs.String()
	if !strings.Contains(logs, "refused a bearer token") {
		t.Errorf("the refusals are not logged:\n%s", logs)
	}
	for name, tok := range tokens {
		if strings.Contains(logs, tok) {
			t.Errorf("the %s token is in the log", name)
		}
	}
	if strings.Contains(logs, good) {
		t.Error("the good token is in the log")
	}
	if h := p.upstream.headers(); len(h) > 0 {
		t.Errorf("the upstream server received Authorization headers: %d", len(h))
	}
}

// TestAuthServesAGoodToken: with a token for the endpoint, or for the
// gateway's audience, the SDK's client lists and calls through the
// gateway; the upstream server sees no Authorization header.
func TestAuthServesAGoodToken(t *testing.T) {
	as := oauthtest.Start(t, nil)
	p := serveProtected(t, as, nil)
	for _, c := range []struct{ path, aud string }{
		{"/mcp", p.url + "/mcp"},
		{"/mcp/direct", p.url + "/mcp/direct"},
		{"/mcp/direct", p.url}, // the default audience: the public URL
	} {
		tok := as.Token(t, oauthtest.TokenRequest{Audience: c.aud, Scopes: []string{"mcp:tools"}}).AccessToken
		cs, err := p.session(t, c.path, tok)
		if err != nil {
			t.Fatalf("%s with a token for %s: %v", c.path, c.aud, err)
		}
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		name, args := "call_tool", any(map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": "hi"}})
		if c.path == "/mcp/direct" {
			name, args = "mcp__notes__echo", map[string]any{"text": "hi"}
		}
		if !slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == name }) {
			t.Errorf("%s lists no %s", c.path, name)
		}
		if text, isErr := call(t, cs, name, args); isErr || text != "echo: hi" {
			t.Errorf("%s: %s answered %q", c.path, name, text)
		}
		if strings.Contains(p.logs.String(), tok) {
			t.Error("the token is in the log")
		}
	}
	if h := p.upstream.headers(); len(h) > 0 {
		t.Errorf("the upstream server received Authorization headers: %q", h)
	}
}

// TestAuthIntrospection: with introspection configured, an opaque token
// for the gateway is served, and refused once revoked or when minted for
// another resource.
func TestAuthIntrospection(t *testing.T) {
	as := oauthtest.Start(t, &oauthtest.Options{Opaque: true})
	p := serveProtected(t, as, func(c *gateway.AuthConfig) {
		c.Introspection = &gateway.Introspection{URL: as.IntrospectionEndpoint(), ClientID: oauthtest.ResourceClient, ClientSecret: as.Secrets[oauthtest.ResourceClient]}
	})
	tok := as.Token(t, oauthtest.TokenRequest{Audience: p.url + "/mcp", Scopes: []string{"mcp:tools"}}).AccessToken
	if status, ch := p.initialize(t, "/mcp", "Bearer "+tok); status != 200 {
		t.Fatalf("a good opaque token: %d %q", status, ch)
	}
	cs, err := p.session(t, "/mcp", tok)
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := call(t, cs, "call_tool", map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": "opaque"}}); isErr || text != "echo: opaque" {
		t.Errorf("call: %q", text)
	}
	elsewhere := as.Token(t, oauthtest.TokenRequest{Audience: "http://127.0.0.1:1/mcp", Scopes: []string{"mcp:tools"}}).AccessToken
	if status, ch := p.initialize(t, "/mcp", "Bearer "+elsewhere); status != 401 || !strings.Contains(ch, `error_description="the token was issued for another resource"`) {
		t.Errorf("a token for another resource: %d %q", status, ch)
	}
	as.Revoke(t, tok)
	if status, ch := p.initialize(t, "/mcp", "Bearer "+tok); status != 401 || !strings.Contains(ch, `error_description="the token is not active"`) {
		t.Errorf("a revoked token: %d %q", status, ch)
	}
	for _, s := range []string{tok, elsewhere} {
		if strings.Contains(p.logs.String(), s) {
			t.Error("a token is in the log")
		}
	}
}

// TestAuthUnreachableIssuer: when the issuer's metadata cannot be
// fetched, Discover says so, and a request with a token gets 503, not a
// refusal of the token.
func TestAuthUnreachableIssuer(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	issuer := dead.URL
	dead.Close()
	a, err := gateway.NewAuth(gateway.AuthConfig{Issuer: issuer, PublicURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Discover(context.Background()); err == nil || !strings.Contains(err.Error(), issuer) {
		t.Errorf("Discover: %v, want an error naming the issuer", err)
	}
	g := newGateway(t)
	srv := httptest.NewServer(g.Handler(gateway.HTTPConfig{Auth: a}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503", resp.StatusCode)
	}
}

// TestNewAuthRefusesBadSettings: each setting that cannot work is refused
// with what to give instead.
func TestNewAuthRefusesBadSettings(t *testing.T) {
	for _, c := range []struct {
		cfg  gateway.AuthConfig
		want string
	}{
		{gateway.AuthConfig{Issuer: "http://as.example.com", PublicURL: "http://127.0.0.1:1"}, "must use https"},
		{gateway.AuthConfig{Issuer: "https://as.example.com", PublicURL: "127.0.0.1:1"}, "not an http or https URL"},
		{gateway.AuthConfig{Issuer: "https://as.example.com", PublicURL: "https://gw.example.com/tools"}, "origin alone (https://gw.example.com)"},
		{gateway.AuthConfig{Issuer: "https://as.example.com", PublicURL: "https://gw.example.com", Scopes: []string{"a b"}}, "one scope per value"},
		{gateway.AuthConfig{Issuer: "https://as.example.com", PublicURL: "https://gw.example.com", Introspection: &gateway.Introspection{URL: "https://as.example.com/introspect"}}, "client ID"},
	} {
		if _, err := gateway.NewAuth(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestSDKClientSignsInToTheGateway: the Go SDK's own OAuth client, from
// the gateway's 401 alone, finds the authorization server through the
// resource metadata, registers itself (RFC 7591), signs in with PKCE and
// the endpoint as resource indicator, and then lists and calls.
func TestSDKClientSignsInToTheGateway(t *testing.T) {
	as := oauthtest.Start(t, nil)
	p := serveProtected(t, as, nil)
	codes := make(chan *auth.AuthorizationResult, 1)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		codes <- &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	}))
	defer redirect.Close()
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName:              "sdk-client",
			RedirectURIs:            []string{redirect.URL + "/callback"},
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			TokenEndpointAuthMethod: "none",
		}},
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if err := as.Authorize(ctx, args.URL); err != nil {
				return nil, err
			}
			return <-codes, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "sdk-client", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: p.url + "/mcp", OAuthHandler: h}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if text, isErr := call(t, cs, "call_tool", map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": "signed in"}}); isErr || text != "echo: signed in" {
		t.Errorf("call: %q", text)
	}
	if h := p.upstream.headers(); len(h) > 0 {
		t.Errorf("the upstream server received Authorization headers: %d", len(h))
	}
}

// countingTransport counts the requests for each path.
type countingTransport struct {
	mu    sync.Mutex
	paths map[string]int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.paths[r.URL.Path]++
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (c *countingTransport) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paths[path]
}

// TestAuthKeysRefetchBounded: a token signed by a key the gateway does not
// know makes it fetch the issuer's keys again at most once per
// JWKSMinRefresh, and keys older than JWKSMaxAge are fetched again.
func TestAuthKeysRefetchBounded(t *testing.T) {
	as := oauthtest.Start(t, nil)
	other := oauthtest.Start(t, nil)
	fetches := &countingTransport{paths: map[string]int{}}
	p := serveProtected(t, as, func(c *gateway.AuthConfig) { c.HTTPClient = &http.Client{Transport: fetches} })
	start := time.Now()
	var mu sync.Mutex
	clock := start
	set := func(d time.Duration) { mu.Lock(); clock = start.Add(d); mu.Unlock() }
	gateway.SetAuthClock(p.auth, func() time.Time { mu.Lock(); defer mu.Unlock(); return clock })
	aud := p.url + "/mcp"
	good := "Bearer " + as.Token(t, oauthtest.TokenRequest{Audience: aud, Scopes: []string{"mcp:tools"}, TTL: 2 * time.Hour}).AccessToken
	unknown := "Bearer " + other.Token(t, oauthtest.TokenRequest{Audience: aud, Scopes: []string{"mcp:tools"}, TTL: 2 * time.Hour}).AccessToken
	for i, step := range []struct {
		at      time.Duration
		auth    string
		status  int
		fetched int
	}{
		{0, good, 200, 1},
		{0, unknown, 401, 1}, // just fetched: not again
		{gateway.JWKSMinRefresh - time.Second, unknown, 401, 1}, // still within the bound
		{gateway.JWKSMinRefresh, unknown, 401, 2},               // a rotation, perhaps: fetched once
		{gateway.JWKSMinRefresh, unknown, 401, 2},
		{gateway.JWKSMinRefresh, good, 200, 2},
		{gateway.JWKSMaxAge + gateway.JWKSMinRefresh, good, 200, 3}, // too old: fetched again
	} {
		set(step.at)
		status, _ := p.initialize(t, "/mcp", step.auth)
		if got := fetches.count("/jwks"); status != step.status || got != step.fetched {
			t.Errorf("step %d at +%v: %d with %d key fetches, want %d with %d", i, step.at, status, got, step.status, step.fetched)
		}
	}
}

// TestAuthDiscoveryRefusals: an issuer whose metadata names another
// issuer or no keys, or whose keys are larger than AuthMaxBody, is refused
// with a reason that says so.
func TestAuthDiscoveryRefusals(t *testing.T) {
	for _, c := range []struct {
		name       string
		metaIssuer func(issuer string) string
		jwks       bool
		keys       string
		want       string
	}{
		{"another issuer", func(string) string { return "https://elsewhere.example.com" }, true, `{"keys":[]}`, `names the issuer "https://elsewhere.example.com"`},
		{"no jwks_uri", func(i string) string { return i }, false, "", "names no jwks_uri"},
		{"keys too large", func(i string) string { return i }, true, `{"keys":["` + strings.Repeat("k", gateway.AuthMaxBody) + `"]}`, fmt.Sprintf("more than %d bytes", gateway.AuthMaxBody)},
		{"no signing key", func(i string) string { return i }, true, `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`, "no public signing key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var issuer string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/.well-known/oauth-authorization-server":
					meta := map[string]any{"issuer": c.metaIssuer(issuer)}
					if c.jwks {
						meta["jwks_uri"] = issuer + "/jwks"
					}
					json.NewEncoder(w).Encode(meta)
				case "/jwks":
					w.Write([]byte(c.keys))
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			issuer = srv.URL
			a, err := gateway.NewAuth(gateway.AuthConfig{Issuer: issuer, PublicURL: "http://127.0.0.1:1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Discover(t.Context()); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Discover: %v, want an error with %q", err, c.want)
			}
		})
	}
}
