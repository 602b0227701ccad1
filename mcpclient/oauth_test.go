package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/tool"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// follow is an Authorize callback that plays the person: it opens the URL
// and follows the authorization server's redirect to the loopback
// listener.
func follow(ctx context.Context, _, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the sign-in ended with %s", resp.Status)
	}
	return nil
}

// syncBuffer is a buffer safe for concurrent writes, for logs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// oauthManager starts a Manager for the protected server (named
// "protected") and an in-memory one ("plain"), and waits for both.
func oauthManager(t *testing.T, p *mcptest.OAuthServer, oc *OAuthConfig, opts Options) (*Manager, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.TokenDir == "" {
		opts.TokenDir = filepath.Join(t.TempDir(), "oauth")
	}
	if oc == nil {
		oc = &OAuthConfig{}
	}
	if oc.CallbackPort == 0 {
		oc.CallbackPort = freePort(t)
	}
	cfg := &Config{Servers: []ServerConfig{
		{Name: "plain", Server: mcptest.NewServer("plain", "")},
		{Name: "protected", URL: p.URL + "/mcp", OAuth: oc, Timeout: 20 * time.Second},
	}}
	m, err := NewManager(cfg, tool.NewRegistry(), nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	m.Start(t.Context())
	t.Cleanup(func() { m.Close() })
	if err := m.WaitAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	return m, logs
}

func statusOf(m *Manager, name string) Status {
	for _, s := range m.Servers() {
		if s.Name == name {
			return s
		}
	}
	return Status{}
}

// echo calls the protected server's echo tool.
func echo(t *testing.T, m *Manager) *tool.Result {
	t.Helper()
	tl, ok := m.reg.Get("mcp__protected__echo")
	if !ok {
		t.Fatalf("the protected server's echo tool is not registered; servers %+v", m.Servers())
	}
	res, err := tl.Handler.Call(t.Context(), json.RawMessage(`{"text":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// readEntry reads the stored entry of the protected server, checking the
// file's mode.
func readEntry(t *testing.T, m *Manager, p *mcptest.OAuthServer) *tokenEntry {
	t.Helper()
	store, err := m.tokenStore()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(store.dir, store.fileName("protected", p.URL+"/mcp"))
	if info, err := os.Stat(path); err != nil {
		t.Fatalf("no token file: %v", err)
	} else if runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", info.Mode().Perm())
	}
	if info, err := os.Stat(store.dir); err == nil && runtime.GOOS != "windows" && info.Mode().Perm() != 0o700 {
		t.Errorf("token folder mode %v, want 0700", info.Mode().Perm())
	}
	e, err := store.load("protected", p.URL+"/mcp")
	if err != nil || e == nil {
		t.Fatalf("load: %v, %v", e, err)
	}
	return e
}

func TestSignInByDiscoveryStoresTheTokenAndNeverLogsIt(t *testing.T) {
	p := mcptest.NewOAuthServer(t)
	m, logs := oauthManager(t, p, nil, Options{Authorize: follow})
	if st := statusOf(m, "protected"); st.State != Connected {
		t.Fatalf("protected is %s: %v", st.State, st.Err)
	}
	if res := echo(t, m); res.IsError || res.Content[0].Text != "echo: hi" {
		t.Fatalf("echo = %+v", res)
	}
	e := readEntry(t, m, p)
	if e.Token == nil || !strings.Contains(e.Token.AccessToken, mcptest.SecretMark) || e.Token.RefreshToken == "" || e.ClientID != "dynamic-client" {
		t.Errorf("stored entry %+v, want the token, its refresh token and the registered client", e)
	}
	if strings.Contains(logs.String(), mcptest.SecretMark) {
		t.Errorf("a secret is in the log:\n%s", logs)
	}
	if got := m.Redact("the token is " + e.Token.AccessToken); strings.Contains(got, mcptest.SecretMark) {
		t.Errorf("Redact left the token: %s", got)
	}

	// A second Manager on the same folder uses the stored token: no
	// sign-in, no Authorize.
	m2, _ := oauthManager(t, p, &OAuthConfig{}, Options{TokenDir: m.opts.TokenDir})
	if st := statusOf(m2, "protected"); st.State != Connected {
		t.Fatalf("with the stored token, protected is %s: %v", st.State, st.Err)
	}
}

func TestWithoutACallbackTheServerNeedsLoginAndTheOthersWork(t *testing.T) {
	p := mcptest.NewOAuthServer(t)
	m, logs := oauthManager(t, p, nil, Options{})
	st := statusOf(m, "protected")
	if st.State != NeedsLogin || !errors.Is(st.Err, ErrNeedsLogin) || !strings.Contains(st.Err.Error(), "toolshelf mcp login protected") {
		t.Fatalf("protected is %s: %v; want needs login naming the command", st.State, st.Err)
	}
	if plain := statusOf(m, "plain"); plain.State != Connected {
		t.Errorf("plain is %s: %v", plain.State, plain.Err)
	}
	if !strings.Contains(logs.String(), "needs sign-in") {
		t.Errorf("no needs-sign-in line in the log:\n%s", logs)
	}
	notes := strings.Join(m.SearchNotes(t.Context()), "\n")
	if !strings.Contains(notes, "toolshelf mcp login protected") {
		t.Errorf("search notes %q do not name the command", notes)
	}

	// mcp login signs in; the started Manager connects the server again.
	signedIn, err := m.Login(t.Context(), "protected", func(ctx context.Context, u string) error { return follow(ctx, "protected", u) })
	if err != nil || !signedIn {
		t.Fatalf("Login = %v, %v", signedIn, err)
	}
	if err := m.WaitAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(m, "protected"); st.State != Connected {
		t.Fatalf("after Login, protected is %s: %v", st.State, st.Err)
	}
	readEntry(t, m, p)
	removed, err := m.Logout("protected")
	if err != nil || !removed {
		t.Fatalf("Logout = %v, %v", removed, err)
	}
	store, _ := m.tokenStore()
	if e, err := store.load("protected", p.URL+"/mcp"); e != nil || err != nil {
		t.Errorf("after Logout the entry is %+v, %v", e, err)
	}
	if removed, err := m.Logout("protected"); removed || err != nil {
		t.Errorf("a second Logout = %v, %v; want nothing removed", removed, err)
	}
}

// storeEntry writes an entry for the protected server as an earlier
// sign-in would have.
func storeEntry(t *testing.T, dir string, p *mcptest.OAuthServer, access, refresh string, expiry time.Time) {
	t.Helper()
	store := tokenStore{dir: dir}
	if err := store.save(&tokenEntry{Server: "protected", Resource: p.URL + "/mcp", ClientID: "dynamic-client",
		TokenURL: p.URL + "/token", Token: &storedToken{AccessToken: access, TokenType: "Bearer", RefreshToken: refresh, Expiry: expiry}}); err != nil {
		t.Fatal(err)
	}
}

func TestAnExpiredTokenIsRefreshedAndTheNewOneSaved(t *testing.T) {
	p := mcptest.NewOAuthServer(t)
	dir := filepath.Join(t.TempDir(), "oauth")
	old, refresh := "access-old-"+mcptest.SecretMark, "refresh-old-"+mcptest.SecretMark
	p.Issue(old, refresh, "tools")
	storeEntry(t, dir, p, old, refresh, time.Now().Add(-time.Hour))
	m, logs := oauthManager(t, p, nil, Options{TokenDir: dir})
	if st := statusOf(m, "protected"); st.State != Connected {
		t.Fatalf("protected is %s: %v", st.State, st.Err)
	}
	if got := p.Grants(); len(got) != 1 || got[0] != "refresh_token" {
		t.Errorf("grants asked %v, want one refresh", got)
	}
	e := readEntry(t, m, p)
	if e.Token == nil || e.Token.AccessToken == old || e.Token.RefreshToken == refresh || !e.Token.Expiry.After(time.Now()) {
		t.Errorf("stored token %+v, want the refreshed one", e.Token)
	}
	if res := echo(t, m); res.IsError {
		t.Errorf("echo = %+v", res)
	}
	if strings.Contains(logs.String(), mcptest.SecretMark) {
		t.Errorf("a secret is in the log:\n%s", logs)
	}
}

func TestARevokedRefreshTokenNeedsLoginAndDropsTheToken(t *testing.T) {
	p := mcptest.NewOAuthServer(t)
	dir := filepath.Join(t.TempDir(), "oauth")
	storeEntry(t, dir, p, "access-gone-"+mcptest.SecretMark, "refresh-revoked-"+mcptest.SecretMark, time.Now().Add(-time.Hour))
	m, logs := oauthManager(t, p, nil, Options{TokenDir: dir})
	st := statusOf(m, "protected")
	if st.State != NeedsLogin || !strings.Contains(st.Err.Error(), "toolshelf mcp login protected") {
		t.Fatalf("protected is %s: %v; want needs login naming the command", st.State, st.Err)
	}
	if e := readEntry(t, m, p); e.Token != nil {
		t.Errorf("the revoked token is still stored: %+v", e.Token)
	}
	// A call (of a tool a catalog registered, say) says what to do.
	res, err := m.call(t.Context(), m.byName["protected"], "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "toolshelf mcp login protected") {
		t.Errorf("a call of a tool of a server that needs login = %+v", res)
	}
	if out := logs.String() + st.Err.Error() + res.Content[0].Text; strings.Contains(out, mcptest.SecretMark) {
		t.Errorf("a secret is in the log or the errors:\n%s", out)
	}
}

func TestClientCredentialsNeedNoPerson(t *testing.T) {
	p := mcptest.NewOAuthServer(t)
	m, logs := oauthManager(t, p, &OAuthConfig{Grant: GrantClientCredentials, ClientID: "machine", ClientSecret: "machine-" + mcptest.SecretMark}, Options{})
	if st := statusOf(m, "protected"); st.State != Connected {
		t.Fatalf("protected is %s: %v", st.State, st.Err)
	}
	if got := p.Grants(); len(got) != 1 || got[0] != "client_credentials" {
		t.Errorf("grants asked %v, want one client_credentials", got)
	}
	if res := echo(t, m); res.IsError {
		t.Errorf("echo = %+v", res)
	}
	if strings.Contains(logs.String(), mcptest.SecretMark) {
		t.Errorf("a secret is in the log:\n%s", logs)
	}
}

func TestOAuthFalseNeverSignsIn(t *testing.T) {
	p := mcptest.NewOAuthServer(t)
	m, _ := oauthManager(t, p, &OAuthConfig{Disabled: true}, Options{Authorize: follow})
	if st := statusOf(m, "protected"); st.State != Failed {
		t.Fatalf("protected is %s: %v; want failed", st.State, st.Err)
	}
	if got := p.Grants(); len(got) != 0 {
		t.Errorf("grants asked %v, want none", got)
	}
}

func TestTokenFilesThatAreNotTheUsersAloneAreRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix modes and links")
	}
	dir := filepath.Join(t.TempDir(), "oauth")
	store := tokenStore{dir: dir}
	e := &tokenEntry{Server: "s", Resource: "https://example.com/mcp", Token: &storedToken{AccessToken: "a-" + mcptest.SecretMark}}
	if err := store.save(e); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, store.fileName("s", e.Resource))
	if got, err := store.load("s", e.Resource); err != nil || got.Token.AccessToken != e.Token.AccessToken {
		t.Fatalf("load = %+v, %v", got, err)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := store.load("s", e.Resource); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a file open to others: %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}

	// A link in place of the file is refused, even to a private file.
	other := filepath.Join(dir, "other.json")
	if err := os.Rename(path, other); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, path); err != nil {
		t.Fatal(err)
	}
	if _, err := store.load("s", e.Resource); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a link: %v", err)
	}

	// A folder open to others is refused, and so is a folder that is a
	// link.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := store.load("s", e.Resource); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Errorf("a folder open to others: %v", err)
	}
	if err := store.save(e); err == nil {
		t.Errorf("saved into a folder open to others")
	}
	linked := filepath.Join(t.TempDir(), "oauth-link")
	if err := os.Symlink(dir, linked); err != nil {
		t.Fatal(err)
	}
	if _, err := (tokenStore{dir: linked}).load("s", e.Resource); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a folder that is a link: %v", err)
	}
}

func TestOAuthConfigParsing(t *testing.T) {
	t.Setenv("TS_OAUTH_SECRET", "secret-"+mcptest.SecretMark)
	cfg, err := ParseConfig("mcp.json", []byte(`{"mcpServers": {
		"a": {"url": "https://a.example/mcp", "oauth": {"clientId": "id", "clientSecret": "${TS_OAUTH_SECRET}", "scopes": ["read", "write"], "callbackPort": 4000}},
		"b": {"url": "https://b.example/mcp", "oauth": false},
		"c": {"url": "https://c.example/mcp", "oauth": {"grant": "client_credentials", "clientId": "m", "clientSecret": "x"}},
		"d": {"url": "https://d.example/mcp", "oauth": {"clientMetadataUrl": "https://toolshelf.example/client.json"}}
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := cfg.Server("a")
	if a.OAuth == nil || a.OAuth.ClientID != "id" || a.OAuth.ClientSecret != "secret-"+mcptest.SecretMark || len(a.OAuth.Scopes) != 2 || a.OAuth.CallbackPort != 4000 ||
		a.Expanded["TS_OAUTH_SECRET"] != "secret-"+mcptest.SecretMark || a.OAuth.redirectURL() != "http://127.0.0.1:4000/callback" {
		t.Errorf("a: %+v %v", a.OAuth, a.Expanded)
	}
	if b, _ := cfg.Server("b"); b.OAuth == nil || !b.OAuth.Disabled || b.mayAuthorize() {
		t.Errorf("b: %+v", b.OAuth)
	}
	if c, _ := cfg.Server("c"); c.OAuth.grant() != GrantClientCredentials {
		t.Errorf("c: %+v", c.OAuth)
	}
	if d, _ := cfg.Server("d"); d.OAuth.ClientMetadataURL == "" || d.OAuth.redirectURL() != fmt.Sprintf("http://127.0.0.1:%d/callback", DefaultCallbackPort) {
		t.Errorf("d: %+v", d.OAuth)
	}

	for _, tc := range []struct{ entry, want string }{
		{`{"command": "x", "oauth": {}}`, `"oauth" is for HTTP servers`},
		{`{"url": "https://x/mcp", "oauth": "yes"}`, `"oauth" must be an object or false, not a string`},
		{`{"url": "https://x/mcp", "oauth": {"clientID": "x"}}`, `unknown oauth key "clientID"; write "clientId"`},
		{`{"url": "https://x/mcp", "oauth": {"color": "x"}}`, `unknown oauth key "color"; remove it; known keys are clientId`},
		{`{"url": "https://x/mcp", "oauth": {"clientId": 7}}`, `oauth "clientId" must be a string, not a number`},
		{`{"url": "https://x/mcp", "oauth": {"scopes": "read write"}}`, `oauth "scopes" must be an array of strings`},
		{`{"url": "https://x/mcp", "oauth": {"scopes": ["read write"]}}`, `is not one scope`},
		{`{"url": "https://x/mcp", "oauth": {"callbackPort": "80"}}`, `"callbackPort" must be a whole number, not a string`},
		{`{"url": "https://x/mcp", "oauth": {"callbackPort": 70000}}`, `"callbackPort" 70000 is not a port`},
		{`{"url": "https://x/mcp", "oauth": {"grant": "client_credentials", "clientId": "m"}}`, `client_credentials grant needs clientId and clientSecret`},
		{`{"url": "https://x/mcp", "oauth": {"grant": "password"}}`, `unknown grant "password"`},
		{`{"url": "https://x/mcp", "oauth": {"clientSecret": "s"}}`, `clientSecret is set without clientId`},
		{`{"url": "https://x/mcp", "oauth": {"clientMetadataUrl": "http://x/c.json"}}`, `must be an https URL with a path`},
		{`{"url": "https://x/mcp", "oauth": {"clientId": "${TS_OAUTH_UNSET}"}}`, `environment variable TS_OAUTH_UNSET is not set`},
	} {
		_, err := ParseConfig("mcp.json", []byte(`{"mcpServers": {"s": `+tc.entry+`}}`))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.entry, err, tc.want)
		}
	}

	// A program's configuration is checked too.
	_, err = NewManager(&Config{Servers: []ServerConfig{{Name: "s", Command: "x", OAuth: &OAuthConfig{}}}}, tool.NewRegistry(), nil, Options{})
	if err == nil || !strings.Contains(err.Error(), "OAuth is for HTTP servers") {
		t.Errorf("stdio with OAuth: %v", err)
	}
	_, err = NewManager(&Config{Servers: []ServerConfig{{Name: "s", URL: "https://x/mcp", OAuth: &OAuthConfig{Grant: GrantClientCredentials}}}}, tool.NewRegistry(), nil, Options{})
	if err == nil || !strings.Contains(err.Error(), "needs clientId and clientSecret") {
		t.Errorf("client credentials without a client: %v", err)
	}
}

// callTool calls the protected server's tool named name (as the server
// lists it).
func callTool(t *testing.T, m *Manager, name string) *tool.Result {
	t.Helper()
	res, err := m.call(t.Context(), m.byName["protected"], name, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestAStepUpThatNeedsAPersonNeedsLoginAndLoginAsksForTheScope(t *testing.T) {
	p := mcptest.NewOAuthServer(t)
	p.RequireScope("pid", "admin")
	dir := filepath.Join(t.TempDir(), "oauth")
	access, refresh := "access-basic-"+mcptest.SecretMark, "refresh-basic-"+mcptest.SecretMark
	p.Issue(access, refresh, "tools")
	storeEntry(t, dir, p, access, refresh, time.Now().Add(time.Hour))
	m, logs := oauthManager(t, p, nil, Options{TokenDir: dir})
	if st := statusOf(m, "protected"); st.State != Connected {
		t.Fatalf("protected is %s: %v", st.State, st.Err)
	}
	if res := callTool(t, m, "echo"); res.IsError {
		t.Fatalf("echo = %+v", res)
	}
	res := callTool(t, m, "pid")
	if !res.IsError || !strings.Contains(res.Content[0].Text, "toolshelf mcp login protected") {
		t.Fatalf("a call that needs more scopes = %+v; want an error naming the command", res)
	}
	if st := statusOf(m, "protected"); st.State != NeedsLogin {
		t.Errorf("after the step-up, protected is %s: %v", st.State, st.Err)
	}
	if e := readEntry(t, m, p); !slices.Contains(e.StepUp, "admin") {
		t.Errorf("stored step-up scopes %v, want admin among them", e.StepUp)
	}

	// mcp login asks for the scope, and the call goes through.
	if _, err := m.Login(t.Context(), "protected", func(ctx context.Context, u string) error {
		if q, _ := url.Parse(u); !slices.Contains(strings.Fields(q.Query().Get("scope")), "admin") {
			t.Errorf("the sign-in asks for %q, want admin among them", q.Query().Get("scope"))
		}
		return follow(ctx, "protected", u)
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.WaitAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if res := callTool(t, m, "pid"); res.IsError {
		t.Errorf("after login, pid = %+v", res)
	}
	if strings.Contains(logs.String()+res.Content[0].Text, mcptest.SecretMark) {
		t.Errorf("a secret is in the log or the result:\n%s", logs)
	}
}

func TestACallConnectsAgainOnceASignInIsStored(t *testing.T) {
	p := mcptest.NewOAuthServer(t)
	dir := filepath.Join(t.TempDir(), "oauth")
	m, _ := oauthManager(t, p, nil, Options{TokenDir: dir})
	if st := statusOf(m, "protected"); st.State != NeedsLogin {
		t.Fatalf("protected is %s: %v", st.State, st.Err)
	}
	// toolshelf mcp login, in another terminal.
	access := "access-elsewhere-" + mcptest.SecretMark
	p.Issue(access, "", "tools")
	storeEntry(t, dir, p, access, "", time.Now().Add(time.Hour))
	if res := callTool(t, m, "echo"); res.IsError {
		t.Fatalf("echo after a sign-in elsewhere = %+v", res)
	}
	if st := statusOf(m, "protected"); st.State != Connected {
		t.Errorf("protected is %s: %v", st.State, st.Err)
	}
}
