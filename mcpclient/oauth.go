package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// ErrNeedsLogin is wrapped by the error of a server that asks for
// sign-in when no person can be asked: the Manager has no
// [Options.Authorize], or the stored token was refused and cannot be
// refreshed. The server's state is then [NeedsLogin].
var ErrNeedsLogin = errors.New("needs sign-in")

// LoginTimeout bounds the wait for the authorization server's redirect
// to the loopback listener once the sign-in URL is shown, when the
// caller's context has no deadline; it is mcp login's default --timeout.
const LoginTimeout = 5 * time.Minute

// secretLabel replaces an OAuth secret (a token, a client secret, an
// authorization code) wherever the server's messages would quote it.
const secretLabel = "[redacted OAuth secret]"

// loginError is the error of a server that needs sign-in: it says why and
// names the command that signs in.
type loginError struct{ msg string }

// Error returns the message.
func (e *loginError) Error() string { return e.msg }

// Unwrap returns ErrNeedsLogin.
func (e *loginError) Unwrap() error { return ErrNeedsLogin }

// needsLoginError says that a server needs sign-in and how to give it.
func needsLoginError(s *server, why string) error {
	return &loginError{fmt.Sprintf("%s %v (%s): run toolshelf mcp login %s", s.describe(), ErrNeedsLogin, why, s.cfg.Name)}
}

// mayAuthorize reports whether the server may sign in with OAuth: an HTTP
// server whose configuration does not turn it off, and which carries no
// Authorization header of its own (unless it has an "oauth" object).
func (c ServerConfig) mayAuthorize() bool {
	if c.Type != TypeHTTP || (c.OAuth != nil && c.OAuth.Disabled) {
		return false
	}
	if c.OAuth == nil {
		for k := range c.Headers {
			if strings.EqualFold(k, "Authorization") {
				return false
			}
		}
	}
	return true
}

// oauthHandler returns the OAuth handler of one connection attempt to an
// HTTP server, nil when the server does not sign in. show shows the
// sign-in URL to a person; nil means there is none, and a sign-in that
// needs one fails with [ErrNeedsLogin]. The stored token, if any, is the
// handler's first; every token it gets is stored and redacted.
func (m *Manager) oauthHandler(s *server, show func(ctx context.Context, url string) error) (auth.OAuthHandler, error) {
	if !s.cfg.mayAuthorize() {
		return nil, nil
	}
	oc := s.cfg.OAuth
	if oc == nil {
		oc = &OAuthConfig{}
	}
	client := &http.Client{Timeout: s.cfg.Timeout}
	if oc.grant() == GrantClientCredentials {
		h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: oc.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: oc.ClientSecret}},
			HTTPClient:  client,
		})
		if err != nil {
			return nil, fmt.Errorf("oauth: %w", err)
		}
		return &redactingHandler{OAuthHandler: h, s: s}, nil
	}
	store, err := m.tokenStore()
	if err != nil {
		return nil, err
	}
	entry, err := store.load(s.cfg.Name, s.cfg.URL)
	if err != nil {
		return nil, err
	}
	redirect := oc.redirectURL()
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: m.codeFetcher(s, oc, show),
		RequestRefreshToken:      true,
		Client:                   client,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:  []string{redirect},
			ClientName:    m.opts.ClientName,
			GrantTypes:    []string{"authorization_code", "refresh_token"},
			ResponseTypes: []string{"code"},
		}},
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			e := &tokenEntry{Server: s.cfg.Name, Resource: s.cfg.URL, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
				TokenURL: c.Endpoint.TokenURL, AuthStyle: c.Endpoint.AuthStyle, Scopes: c.Scopes, StepUp: s.addStepUp()}
			return m.storedSource(ctx, s, store, e, c, tok), nil
		},
	}
	if oc.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: oc.ClientMetadataURL}
	}
	if oc.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: oc.ClientID}
		if oc.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: oc.ClientSecret}
		}
	}
	configured := slices.Clone(oc.Scopes)
	cfg.ScopeFilter = func(discovered []string) []string {
		base := discovered
		if len(configured) > 0 {
			base = configured
		}
		return union(base, s.addStepUp())
	}
	if entry != nil {
		s.addStepUp(entry.StepUp...)
	}
	if entry != nil && entry.Token != nil {
		c := &oauth2.Config{ClientID: entry.ClientID, ClientSecret: entry.ClientSecret,
			Endpoint: oauth2.Endpoint{TokenURL: entry.TokenURL, AuthStyle: entry.AuthStyle}, Scopes: entry.Scopes}
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, client)
		cfg.InitialTokenSource = m.storedSource(ctx, s, store, entry, c, entry.Token.oauth2())
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	return &stepUpHandler{OAuthHandler: h, s: s, store: store}, nil
}

// stepUpHandler is the authorization code handler with the scopes of
// insufficient_scope challenges remembered, in the server and in the
// store, so that a sign-in that could not happen then (no person) asks for
// them later, in toolshelf mcp login.
type stepUpHandler struct {
	auth.OAuthHandler
	s     *server
	store tokenStore
}

// Authorize notes the scopes of a step-up challenge, then signs in.
func (h *stepUpHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if resp.StatusCode == http.StatusForbidden {
		challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		for _, c := range challenges {
			if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" && c.Params["scope"] != "" {
				scopes := h.s.addStepUp(strings.Fields(c.Params["scope"])...)
				if e, err := h.store.load(h.s.cfg.Name, h.s.cfg.URL); err == nil && e != nil {
					e.StepUp = scopes
					if err := h.store.save(e); err != nil {
						h.s.log.Warn("saving the scopes the server asks for", "error", err)
					}
				}
			}
		}
	}
	return h.OAuthHandler.Authorize(ctx, req, resp)
}

// addStepUp adds scopes to those the server asked for in step-up
// challenges and returns them all.
func (s *server) addStepUp(scopes ...string) []string {
	s.stepMu.Lock()
	defer s.stepMu.Unlock()
	s.stepUp = union(s.stepUp, scopes)
	return slices.Clone(s.stepUp)
}

// union returns a's scopes, then those of b that a lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// redactingHandler is an OAuth handler whose tokens are redacted from the
// server's messages: the client credentials grant's, which are not stored
// (a new one needs no person).
type redactingHandler struct {
	auth.OAuthHandler
	s *server
}

// TokenSource returns the handler's token source, its tokens redacted.
func (h *redactingHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	ts, err := h.OAuthHandler.TokenSource(ctx)
	if ts == nil || err != nil {
		return ts, err
	}
	return tokenFunc(func() (*oauth2.Token, error) {
		tok, err := ts.Token()
		if tok != nil {
			h.s.redact.addSecret(tok.AccessToken, tok.RefreshToken)
		}
		return tok, err
	}), nil
}

// tokenFunc is a function as an oauth2.TokenSource.
type tokenFunc func() (*oauth2.Token, error)

func (f tokenFunc) Token() (*oauth2.Token, error) { return f() }

// storedSource returns the token source of a token that is kept in the
// store: it refreshes the token when it expires and saves each new one.
// A refresh the authorization server refuses (the refresh token is revoked
// or expired), or an expired token without a refresh token, drops the
// stored token and makes the source answer no token: the next request goes
// without one, and its 401 asks for a new sign-in.
func (m *Manager) storedSource(ctx context.Context, s *server, store tokenStore, e *tokenEntry, c *oauth2.Config, tok *oauth2.Token) oauth2.TokenSource {
	s.redact.addSecret(tok.AccessToken, tok.RefreshToken, c.ClientSecret)
	src := &storedTokenSource{m: m, s: s, store: store, entry: e, base: c.TokenSource(ctx, tok)}
	if e.Token == nil || e.Token.AccessToken != tok.AccessToken {
		src.keep(tok)
	}
	return src
}

// storedTokenSource is the token source of [Manager.storedSource].
type storedTokenSource struct {
	m     *Manager
	s     *server
	store tokenStore

	mu    sync.Mutex
	entry *tokenEntry
	base  oauth2.TokenSource // nil once the token was dropped
}

// Token returns the current token, refreshed when expired.
func (t *storedTokenSource) Token() (*oauth2.Token, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.base == nil {
		return nil, nil
	}
	tok, err := t.base.Token()
	if err != nil {
		if refused(err) || t.entry.Token == nil || t.entry.Token.RefreshToken == "" {
			t.s.log.Info("the stored OAuth token cannot be refreshed; dropping it", "error", err)
			t.base = nil
			t.entry.Token = nil
			t.entry.StepUp = t.s.addStepUp()
			if err := t.store.save(t.entry); err != nil {
				t.s.log.Warn("dropping the stored OAuth token", "error", err)
			}
			return nil, nil
		}
		return nil, err
	}
	if t.entry.Token == nil || tok.AccessToken != t.entry.Token.AccessToken {
		t.s.log.Info("OAuth token refreshed")
		t.keep(tok)
	}
	return tok, nil
}

// refused reports whether a refresh failed because the authorization
// server refused the refresh token (invalid_grant, or a 400 or 401
// answer), not for a reason that may pass.
func refused(err error) bool {
	re, ok := errors.AsType[*oauth2.RetrieveError](err)
	if !ok {
		return false
	}
	return re.ErrorCode == "invalid_grant" || (re.Response != nil && (re.Response.StatusCode == http.StatusBadRequest || re.Response.StatusCode == http.StatusUnauthorized))
}

// keep redacts and stores a new token.
func (t *storedTokenSource) keep(tok *oauth2.Token) {
	t.s.redact.addSecret(tok.AccessToken, tok.RefreshToken)
	if tok.RefreshToken == "" && t.entry.Token != nil {
		// A refresh may leave the refresh token out: the old one stays
		// good (RFC 6749 section 6).
		tok.RefreshToken = t.entry.Token.RefreshToken
	}
	t.entry.Token = fromOAuth2(tok)
	t.entry.StepUp = t.s.addStepUp()
	if err := t.store.save(t.entry); err != nil {
		t.s.log.Warn("the OAuth token could not be saved; the next run signs in again", "error", err)
	}
}

// codeFetcher returns the authorization code fetcher of the server: it
// shows the URL through show (or, without it, fails with ErrNeedsLogin),
// and waits for the authorization server's redirect to a listener on the
// loopback address, until ctx's deadline, else at most LoginTimeout.
func (m *Manager) codeFetcher(s *server, oc *OAuthConfig, show func(ctx context.Context, url string) error) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		if show == nil {
			return nil, needsLoginError(s, "no valid sign-in is stored")
		}
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, fmt.Errorf("the authorization URL: %w", err)
		}
		state := u.Query().Get("state")
		redirect, _ := url.Parse(oc.redirectURL())
		ln, err := net.Listen("tcp", redirect.Host)
		if err != nil {
			return nil, fmt.Errorf("cannot listen for the sign-in redirect on %s: %w; free the port, or set another in the server's \"oauth\": {\"callbackPort\": PORT} (a pre-registered client's redirect URI must match)", redirect.Host, err)
		}
		results := make(chan callbackResult, 1)
		srv := &http.Server{Handler: callbackHandler(redirect.Path, state, results), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		defer func() {
			// The browser gets its page before the listener goes.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			if srv.Shutdown(ctx) != nil {
				srv.Close()
			}
		}()
		s.log.Info("waiting for sign-in", "redirect", redirect.String())
		if err := show(ctx, args.URL); err != nil {
			return nil, fmt.Errorf("showing the sign-in URL: %w", err)
		}
		// A caller's deadline (mcp login --timeout) replaces LoginTimeout.
		var expired <-chan time.Time
		if _, ok := ctx.Deadline(); !ok {
			timer := time.NewTimer(LoginTimeout)
			defer timer.Stop()
			expired = timer.C
		}
		select {
		case r := <-results:
			if r.err != nil {
				return nil, r.err
			}
			s.redact.addSecret(r.res.Code)
			return r.res, nil
		case <-expired:
			return nil, needsLoginError(s, fmt.Sprintf("no sign-in within %s", LoginTimeout))
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// callbackResult is what the loopback listener received.
type callbackResult struct {
	res *auth.AuthorizationResult
	err error
}

// callbackHandler answers the authorization server's redirect: a request
// to path whose state is the flow's gives its result (a code, or the
// error the authorization server sent); other requests are refused and
// the wait goes on.
func callbackHandler(path, state string, results chan<- callbackResult) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.URL.Path != path || q.Get("state") != state || state == "" {
			http.Error(w, "This is not the sign-in toolshelf is waiting for.", http.StatusBadRequest)
			return
		}
		var res callbackResult
		msg := "Signed in. You can close this page and go back to toolshelf."
		switch {
		case q.Get("error") != "":
			res.err = fmt.Errorf("the authorization server refused the sign-in: %s %s", q.Get("error"), q.Get("error_description"))
			msg = "Sign-in failed: " + q.Get("error") + ". Go back to toolshelf."
		case q.Get("code") == "":
			res.err = errors.New("the authorization server's redirect carries no code")
			msg = "Sign-in failed: no code. Go back to toolshelf."
		default:
			res.res = &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
		}
		once.Do(func() { results <- res })
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>toolshelf</title><p>%s</p>\n", html.EscapeString(msg))
	})
}

// Login signs in to the named server: it connects with a sign-in that
// shows the authorization URL through show (which should print it, and may
// open a browser), waits for the redirect, and stores the tokens. A stored
// token is dropped first, so Login always asks. ctx bounds the whole
// sign-in. signedIn is false when the server accepted the connection
// without asking for sign-in (nothing was stored). A started Manager whose
// server was [NeedsLogin] connects it again.
func (m *Manager) Login(ctx context.Context, name string, show func(ctx context.Context, url string) error) (signedIn bool, err error) {
	s := m.byName[name]
	if s == nil {
		return false, fmt.Errorf("no MCP server %q is configured", name)
	}
	if !s.cfg.mayAuthorize() {
		return false, fmt.Errorf("%s does not sign in: only HTTP servers do, without \"oauth\": false or an Authorization header", s.describe())
	}
	if show == nil {
		return false, errors.New("mcpclient.Login: show is nil; pass a function that shows the URL")
	}
	if s.cfg.OAuth.grant() == GrantClientCredentials {
		return false, fmt.Errorf("%s signs in by itself, with its client credentials: there is nothing to sign in to", s.describe())
	}
	store, err := m.tokenStore()
	if err != nil {
		return false, err
	}
	if e, err := store.load(s.cfg.Name, s.cfg.URL); err != nil {
		return false, s.redact.Err(err)
	} else if e != nil && e.Token != nil {
		e.Token = nil
		if err := store.save(e); err != nil {
			return false, s.redact.Err(err)
		}
	}
	var asked atomic.Bool
	h, err := m.oauthHandler(s, func(ctx context.Context, url string) error {
		asked.Store(true)
		return show(ctx, url)
	})
	if err != nil {
		return false, s.redact.Err(err)
	}
	t := m.httpTransport(s, h)
	c, err := m.open(ctx, s, t, 0)
	if err != nil {
		return false, s.redact.Err(fmt.Errorf("signing in to %s: %w", s.describe(), err))
	}
	_ = c.close()
	m.mu.Lock()
	again := m.started && !m.closed && s.state == NeedsLogin
	if again {
		s.state, s.err, s.ready = Connecting, nil, make(chan struct{})
	}
	m.mu.Unlock()
	if again && m.spawn(func() { m.connect(s) }) {
		m.changed()
	}
	return asked.Load(), nil
}

// Logout deletes the tokens (and the dynamically registered client) stored
// for the named server; removed reports whether there were any.
func (m *Manager) Logout(name string) (removed bool, err error) {
	s := m.byName[name]
	if s == nil {
		return false, fmt.Errorf("no MCP server %q is configured", name)
	}
	store, err := m.tokenStore()
	if err != nil {
		return false, err
	}
	return store.remove(name)
}

// hasToken reports whether a token is stored for the server.
func (m *Manager) hasToken(s *server) bool {
	store, err := m.tokenStore()
	if err != nil {
		return false
	}
	e, err := store.load(s.cfg.Name, s.cfg.URL)
	return err == nil && e != nil && e.Token != nil
}
