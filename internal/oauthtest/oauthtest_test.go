package oauthtest_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/toolshelf/toolshelf/internal/oauthtest"
)

const resource = "http://127.0.0.1:1/mcp"

// claims decodes a JWT's payload without checking it: the gateway's
// tests check signatures; this one checks what the server put in.
func claims(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// introspect asks the server about a token as the resource server.
func introspect(t *testing.T, s *oauthtest.Server, token string) map[string]any {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.IntrospectionEndpoint(), strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(oauthtest.ResourceClient, s.Secrets[oauthtest.ResourceClient])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestTokenForAnAudience: a client credentials token is a JWT for the
// audience asked, with the scopes granted, the lifetime asked, and the
// server's issuer.
func TestTokenForAnAudience(t *testing.T) {
	s := oauthtest.Start(t, nil)
	tok := s.Token(t, oauthtest.TokenRequest{Audience: resource, Scopes: []string{"mcp:tools", "unknown"}, TTL: 7 * time.Second})
	if !slices.Equal(tok.Scopes, []string{"mcp:tools"}) || tok.ExpiresIn != 7*time.Second {
		t.Errorf("granted %q for %v, want [mcp:tools] for 7s", tok.Scopes, tok.ExpiresIn)
	}
	c := claims(t, tok.AccessToken)
	if c["aud"] != resource || c["iss"] != s.Issuer || c["scope"] != "mcp:tools" || c["client_id"] != oauthtest.MachineClient {
		t.Errorf("claims %v", c)
	}
	if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat != 7 {
		t.Errorf("exp-iat = %v, want 7", exp-iat)
	}
}

// TestOpaqueTokenIntrospectedThenRevoked: an opaque token is active at
// the introspection endpoint, with its audience and scope, until it is
// revoked.
func TestOpaqueTokenIntrospectedThenRevoked(t *testing.T) {
	s := oauthtest.Start(t, nil)
	tok := s.Token(t, oauthtest.TokenRequest{Audience: resource, Scopes: []string{"mcp:admin"}, Opaque: true})
	if strings.Count(tok.AccessToken, ".") == 2 {
		t.Fatalf("asked for an opaque token, got a JWT")
	}
	got := introspect(t, s, tok.AccessToken)
	if got["active"] != true || got["aud"] != resource || got["scope"] != "mcp:admin" || got["iss"] != s.Issuer {
		t.Errorf("introspection: %v", got)
	}
	s.Revoke(t, tok.AccessToken)
	if got := introspect(t, s, tok.AccessToken); got["active"] != false {
		t.Errorf("after revocation: %v", got)
	}
}

// TestAuthorizationCodeFlow: a public native client with PKCE and a
// resource indicator gets a code through Authorize, exchanges it for a JWT
// for the resource and a refresh token, and refreshes; once Revoke revoked
// the refresh token, refreshing fails.
func TestAuthorizationCodeFlow(t *testing.T) {
	s := oauthtest.Start(t, &oauthtest.Options{Clients: []oauthtest.Client{{ID: "cli", RedirectURIs: []string{"http://127.0.0.1/callback"}}}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	codes := make(chan url.Values, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		codes <- r.URL.Query()
		fmt.Fprintln(w, "signed in")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	cfg := &oauth2.Config{
		ClientID:    "cli",
		Endpoint:    oauth2.Endpoint{AuthURL: s.Issuer + "/auth", TokenURL: s.TokenEndpoint(), AuthStyle: oauth2.AuthStyleInParams},
		RedirectURL: fmt.Sprintf("http://%s/callback", ln.Addr()),
		Scopes:      []string{"mcp:tools"},
	}
	verifier := oauth2.GenerateVerifier()
	res := oauth2.SetAuthURLParam("resource", resource)
	if err := s.Authorize(t.Context(), cfg.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier), res)); err != nil {
		t.Fatal(err)
	}
	q := <-codes
	if q.Get("state") != "state-1" || q.Get("code") == "" {
		t.Fatalf("redirect query %v", q)
	}
	tok, err := cfg.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier), res)
	if err != nil {
		t.Fatal(err)
	}
	if c := claims(t, tok.AccessToken); c["aud"] != resource || c["sub"] != oauthtest.Account || c["scope"] != "mcp:tools" {
		t.Errorf("claims %v", c)
	}
	if tok.RefreshToken == "" {
		t.Fatal("no refresh token")
	}
	tok.Expiry = time.Now().Add(-time.Hour) // make the source refresh
	fresh, err := cfg.TokenSource(t.Context(), tok).Token()
	if err != nil {
		t.Fatal(err)
	}
	if fresh.AccessToken == tok.AccessToken {
		t.Error("the refresh returned the same access token")
	}
	if c := claims(t, fresh.AccessToken); c["aud"] != resource {
		t.Errorf("refreshed claims %v", c)
	}
	s.Revoke(t, fresh.RefreshToken)
	fresh.Expiry = time.Now().Add(-time.Hour)
	if _, err := cfg.TokenSource(t.Context(), fresh).Token(); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("a refresh with a revoked refresh token: %v, want invalid_grant", err)
	}
}
