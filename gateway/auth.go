package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// ResourceMetadataPath is where the gateway publishes its OAuth protected
// resource metadata (RFC 9728): this path for the gateway as a whole, and
// this path followed by an endpoint's path (/mcp, /mcp/direct, …) for
// that endpoint, as the MCP authorization spec asks.
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// AuthClockSkew is how far a token's exp and nbf may be off the gateway's
// clock.
const AuthClockSkew = 30 * time.Second

// Bounds on what the gateway fetches from the authorization server.
const (
	// AuthFetchTimeout bounds each fetch of the issuer's metadata, its
	// keys (JWKS) and each introspection request.
	AuthFetchTimeout = 10 * time.Second
	// AuthMaxBody bounds each answer of the authorization server.
	AuthMaxBody = 1 << 20
	// JWKSMaxAge is how long fetched keys are used before they are
	// fetched again.
	JWKSMaxAge = time.Hour
	// JWKSMinRefresh is how often, at most, a token signed by a key the
	// gateway does not know (a rotation), or a failed fetch, makes it
	// fetch the keys again.
	JWKSMinRefresh = 30 * time.Second
)

// AuthConfig makes the gateway's HTTP handler an OAuth 2.1 protected
// resource, as the MCP authorization spec describes: it publishes its
// resource metadata, and every request must carry an access token that
// the authorization server issued for the gateway.
type AuthConfig struct {
	// Issuer is the authorization server's issuer URL (https, or http on
	// a loopback address). Its metadata (RFC 8414, or OpenID discovery)
	// names the keys that sign its JWT access tokens.
	Issuer string
	// PublicURL is the gateway's origin as clients reach it
	// (https://gateway.example.com, or http://127.0.0.1:8931): no path.
	// Each endpoint's resource identifier is PublicURL followed by the
	// endpoint's path (https://gateway.example.com/mcp), which clients
	// send as the resource indicator (RFC 8707) and tokens carry in aud.
	PublicURL string
	// Audience, when set, is an audience a token may carry instead of the
	// endpoint's resource identifier: one value for the whole gateway
	// (an authorization server that names resources its own way). Empty:
	// PublicURL.
	Audience string
	// Scopes are the scopes every token must grant; they are published as
	// scopes_supported and named in every challenge.
	Scopes []string
	// Introspection, when set, checks tokens by token introspection (RFC
	// 7662) instead of as JWTs: for opaque tokens.
	Introspection *Introspection
	// HTTPClient fetches the metadata and keys and introspects; nil: a
	// client with [AuthFetchTimeout].
	HTTPClient *http.Client
	// Logger receives each refused token's reason (never the token) and
	// the authorization server's failures; nil discards them.
	Logger *slog.Logger
}

// Introspection is how the gateway introspects tokens (RFC 7662).
type Introspection struct {
	// URL is the authorization server's introspection endpoint.
	URL string
	// ClientID and ClientSecret authenticate the gateway to it
	// (client_secret_basic).
	ClientID, ClientSecret string
}

// Auth checks the bearer tokens of the gateway's HTTP requests. Make one
// with [NewAuth] and set it as [HTTPConfig.Auth]. It is safe for
// concurrent use.
type Auth struct {
	issuer    string
	public    string // the origin, without a trailing slash
	audience  string
	scopes    []string
	intro     *Introspection
	client    *http.Client
	log       *slog.Logger
	now       func() time.Time
	endpoints []string // the endpoints' paths

	mu      sync.Mutex // guards the fields below; held while fetching
	jwksURI string     // from the issuer's metadata, once fetched
	keys    []jose.JSONWebKey
	fetched time.Time // when keys were fetched
	tried   time.Time // when metadata or keys were last fetched or tried
	lastErr error     // the last fetch's failure, while keys is nil
}

// NewAuth checks the configuration and returns the checker. It fetches
// nothing: the issuer's metadata and keys are fetched at the first token,
// or by [Auth.Discover].
func NewAuth(cfg AuthConfig) (*Auth, error) {
	if err := checkHTTPSOrLoopback(cfg.Issuer); err != nil {
		return nil, fmt.Errorf("the issuer %w", err)
	}
	pub, err := url.Parse(cfg.PublicURL)
	if err != nil || pub.Host == "" || (pub.Scheme != "https" && pub.Scheme != "http") {
		return nil, fmt.Errorf("the public URL %q is not an http or https URL (give the gateway's origin, as in https://gateway.example.com)", cfg.PublicURL)
	}
	if (pub.Path != "" && pub.Path != "/") || pub.RawQuery != "" || pub.Fragment != "" || pub.User != nil {
		return nil, fmt.Errorf("the public URL %q has a path, query or user: give the gateway's origin alone (%s://%s); a gateway under a path prefix is not supported", cfg.PublicURL, pub.Scheme, pub.Host)
	}
	for _, s := range cfg.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			return nil, fmt.Errorf("scope %q is empty or holds a space, quote or backslash (one scope per value)", s)
		}
	}
	if cfg.Introspection != nil {
		if err := checkHTTPSOrLoopback(cfg.Introspection.URL); err != nil {
			return nil, fmt.Errorf("the introspection endpoint %w", err)
		}
		if cfg.Introspection.ClientID == "" {
			return nil, errors.New("introspection needs the gateway's client ID (and secret) at the authorization server")
		}
	}
	a := &Auth{
		issuer:   cfg.Issuer,
		public:   pub.Scheme + "://" + pub.Host,
		audience: cfg.Audience,
		scopes:   slices.Clone(cfg.Scopes),
		intro:    cfg.Introspection,
		client:   cfg.HTTPClient,
		log:      cfg.Logger,
		now:      time.Now,
	}
	if a.audience == "" {
		a.audience = a.public
	}
	if a.client == nil {
		a.client = &http.Client{Timeout: AuthFetchTimeout}
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	for p := range httpSurfaces {
		a.endpoints = append(a.endpoints, p)
	}
	slices.Sort(a.endpoints)
	return a, nil
}

// checkHTTPSOrLoopback says why raw is not an https URL, or an http URL
// on a loopback address.
func checkHTTPSOrLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
	}
	return fmt.Errorf("%q must use https (http only on a loopback address)", raw)
}

// Resource returns the resource identifier of the endpoint at path (/mcp,
// /mcp/direct, …): the public URL followed by the path. For "" it is the
// gateway's as a whole, the public URL.
func (a *Auth) Resource(path string) string { return a.public + path }

// Metadata returns the protected resource metadata (RFC 9728) of the
// endpoint at path ("" for the gateway as a whole).
func (a *Auth) Metadata(path string) *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               a.Resource(path),
		AuthorizationServers:   []string{a.issuer},
		ScopesSupported:        slices.Clone(a.scopes),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "toolshelf gateway",
	}
}

// MetadataURL returns where the metadata of the endpoint at path is
// published.
func (a *Auth) MetadataURL(path string) string { return a.public + ResourceMetadataPath + path }

// Discover fetches the issuer's metadata and, for JWTs, its keys, and
// says what failed: a gateway checks its configuration at start with it.
func (a *Auth) Discover(ctx context.Context) error {
	if a.intro != nil {
		return nil // nothing to fetch before a token arrives
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refresh(ctx)
}

// handler serves the resource metadata and guards mux.
func (a *Auth) handler(mux http.Handler) http.Handler {
	outer := http.NewServeMux()
	outer.Handle(ResourceMetadataPath, auth.ProtectedResourceMetadataHandler(a.Metadata("")))
	for _, p := range a.endpoints {
		outer.Handle(ResourceMetadataPath+p, auth.ProtectedResourceMetadataHandler(a.Metadata(p)))
	}
	outer.Handle("/", a.guard(mux))
	return outer
}

// guard lets through requests whose bearer token is valid for the
// endpoint and grants the scopes, without their Authorization header (a
// client's token goes no further than this check), and answers the others
// with 401 or 403 and a challenge naming the resource metadata.
func (a *Auth) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if !slices.Contains(a.endpoints, path) {
			path = ""
		}
		token, ok := bearer(r.Header.Values("Authorization"))
		if !ok {
			a.log.Debug("gateway: a request without a bearer token", "path", r.URL.Path, "remote", r.RemoteAddr)
			a.challenge(w, path, http.StatusUnauthorized, "", "",
				fmt.Sprintf("unauthorized: this gateway needs an OAuth access token from %s; its resource metadata is at %s", a.issuer, a.MetadataURL(path)))
			return
		}
		info, err := a.verify(r.Context(), token, path)
		refused, isRefusal := errors.AsType[*tokenError](err)
		switch {
		case isRefusal:
			a.log.Info("gateway: refused a bearer token", "path", r.URL.Path, "remote", r.RemoteAddr, "reason", refused.reason)
			a.challenge(w, path, http.StatusUnauthorized, "invalid_token", refused.public, "unauthorized: "+refused.public)
			return
		case err != nil:
			a.log.Warn("gateway: could not check a bearer token", "path", r.URL.Path, "err", err)
			refuse(w, http.StatusServiceUnavailable, "the gateway could not check the token with its authorization server; try again later")
			return
		}
		if missing := a.missingScopes(info.Scopes); len(missing) > 0 {
			a.log.Info("gateway: refused a bearer token", "path", r.URL.Path, "remote", r.RemoteAddr, "reason", "insufficient scope", "missing", missing)
			a.challenge(w, path, http.StatusForbidden, "insufficient_scope", "the token does not grant the scope this gateway requires",
				fmt.Sprintf("forbidden: the token does not grant %s", strings.Join(missing, " ")))
			return
		}
		r = r.Clone(r.Context())
		r.Header.Del("Authorization")
		next.ServeHTTP(w, r)
	})
}

// bearer returns the token of the request's one Authorization: Bearer
// header.
func bearer(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(values[0]), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", false
	}
	return token, true
}

// challenge answers with status and a WWW-Authenticate: Bearer challenge
// that names the endpoint's resource metadata and the scopes, and the
// error when a token was sent. desc is one of this file's constant texts.
func (a *Auth) challenge(w http.ResponseWriter, path string, status int, code, desc, body string) {
	params := []string{`resource_metadata="` + a.MetadataURL(path) + `"`}
	if len(a.scopes) > 0 {
		params = append(params, `scope="`+strings.Join(a.scopes, " ")+`"`)
	}
	if code != "" {
		params = append(params, `error="`+code+`"`, `error_description="`+desc+`"`)
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	refuse(w, status, body)
}

// missingScopes returns the required scopes that granted lacks.
func (a *Auth) missingScopes(granted []string) []string {
	var missing []string
	for _, s := range a.scopes {
		if !slices.Contains(granted, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// tokenError is a token the gateway refuses: public is what the client is
// told, reason what the log says. Neither holds the token.
type tokenError struct{ public, reason string }

func (e *tokenError) Error() string { return e.reason }

func (e *tokenError) Unwrap() error { return auth.ErrInvalidToken }

func tokenRefused(public, format string, args ...any) error {
	return &tokenError{public: public, reason: fmt.Sprintf(format, args...)}
}

// The texts a refused token's client is told.
const (
	notAJWT      = "the token is not a JWT signed by the authorization server"
	badSignature = "the token's signature does not verify with the authorization server's keys"
	wrongIssuer  = "the token was issued by another authorization server"
	wrongAud     = "the token was issued for another resource"
	expired      = "the token has expired"
	notYet       = "the token is not valid yet"
	noExpiry     = "the token has no expiry"
	inactive     = "the token is not active"
)

// verify checks a token for the endpoint at path: a *tokenError when it
// is refused, another error when the authorization server could not be
// asked.
func (a *Auth) verify(ctx context.Context, token, path string) (*auth.TokenInfo, error) {
	audiences := []string{a.Resource(path), a.audience}
	if a.intro != nil {
		return a.introspect(ctx, token, audiences)
	}
	tok, err := jwt.ParseSigned(token, signatureAlgorithms)
	if err != nil {
		return nil, tokenRefused(notAJWT, "not a JWT with a supported signature algorithm: %v", err)
	}
	var c struct {
		jwt.Claims
		Scope    string          `json:"scope"`
		Scp      json.RawMessage `json:"scp"`
		ClientID string          `json:"client_id"`
	}
	keys, err := a.keysFor(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return nil, err
	}
	verified := false
	for _, k := range keys {
		if tok.Claims(k.Key, &c) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, tokenRefused(badSignature, "the signature verifies with none of the issuer's %d keys for key id %q", len(keys), tok.Headers[0].KeyID)
	}
	if c.Expiry == nil {
		return nil, tokenRefused(noExpiry, "no exp claim")
	}
	switch err := c.ValidateWithLeeway(jwt.Expected{Issuer: a.issuer, AnyAudience: audiences, Time: a.now()}, AuthClockSkew); {
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return nil, tokenRefused(wrongIssuer, "iss %q, want %q", c.Issuer, a.issuer)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return nil, tokenRefused(wrongAud, "aud %q holds none of %q", []string(c.Audience), audiences)
	case errors.Is(err, jwt.ErrExpired):
		return nil, tokenRefused(expired, "expired at %s", c.Expiry.Time().UTC().Format(time.RFC3339))
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, tokenRefused(notYet, "nbf or iat ahead of the gateway's clock by more than %v", AuthClockSkew)
	case err != nil:
		return nil, tokenRefused(notAJWT, "claims: %v", err)
	}
	return &auth.TokenInfo{Scopes: scopes(c.Scope, c.Scp), Expiration: c.Expiry.Time(), UserID: cmp.Or(c.Subject, c.ClientID)}, nil
}

// signatureAlgorithms are the JWS algorithms the gateway accepts: the
// asymmetric ones (a resource server holds no shared secret).
var signatureAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// scopes reads the scope claim (RFC 9068: space-separated) and the scp
// claim some servers send instead (a string or an array).
func scopes(scope string, scp json.RawMessage) []string {
	out := strings.Fields(scope)
	var list []string
	var one string
	if json.Unmarshal(scp, &list) == nil {
		out = append(out, list...)
	} else if json.Unmarshal(scp, &one) == nil {
		out = append(out, strings.Fields(one)...)
	}
	return out
}

// keysFor returns the issuer's signing keys with the key id (every
// signing key when kid is empty), fetching them when they are old or
// when none has the id, at most once per [JWKSMinRefresh].
func (a *Auth) keysFor(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	stale := a.keys == nil || now.Sub(a.fetched) >= JWKSMaxAge
	if !stale && len(matching(a.keys, kid)) == 0 {
		stale = true // a rotation, perhaps
	}
	if stale && (a.tried.IsZero() || now.Sub(a.tried) >= JWKSMinRefresh) {
		if err := a.refresh(ctx); err != nil && a.keys == nil {
			return nil, err
		}
	}
	if a.keys == nil {
		return nil, fmt.Errorf("the authorization server's keys are not known yet (the next fetch within %v): %w", JWKSMinRefresh, a.lastErr)
	}
	keys := matching(a.keys, kid)
	if len(keys) == 0 {
		return nil, tokenRefused(badSignature, "no key of the issuer has key id %q", kid)
	}
	return keys, nil
}

func matching(keys []jose.JSONWebKey, kid string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range keys {
		if kid == "" || k.KeyID == kid {
			out = append(out, k)
		}
	}
	return out
}

// refresh fetches the issuer's metadata (once) and keys. a.mu is held.
func (a *Auth) refresh(ctx context.Context) error {
	a.tried = a.now()
	err := a.fetchKeys(ctx)
	if err != nil {
		a.lastErr = err
		a.log.Warn("gateway: fetching the authorization server's keys failed", "issuer", a.issuer, "err", err)
	}
	return err
}

func (a *Auth) fetchKeys(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, AuthFetchTimeout)
	defer cancel()
	if a.jwksURI == "" {
		uri, err := a.discover(ctx)
		if err != nil {
			return err
		}
		a.jwksURI = uri
	}
	body, err := a.get(ctx, a.jwksURI)
	if err != nil {
		return fmt.Errorf("the keys of %s: %w", a.issuer, err)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return fmt.Errorf("the keys of %s (%s): %w", a.issuer, a.jwksURI, err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if k.UnmarshalJSON(raw) != nil || k.Use == "enc" || !k.IsPublic() {
			continue // a key of a kind the gateway cannot use: not for signatures
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return fmt.Errorf("the keys of %s (%s) hold no public signing key", a.issuer, a.jwksURI)
	}
	a.keys, a.fetched, a.lastErr = keys, a.now(), nil
	return nil
}

// discover finds the issuer's metadata, RFC 8414 first, then OpenID
// discovery, each at the places their specs name for an issuer with a
// path, and returns its jwks_uri. The issuer is the operator's choice,
// not a server's answer, so unlike a client's discovery
// (oauthex.GetAuthServerMeta) it may be on a private network.
func (a *Auth) discover(ctx context.Context) (string, error) {
	u, err := url.Parse(a.issuer)
	if err != nil {
		return "", err
	}
	path := strings.TrimSuffix(u.Path, "/")
	origin := u.Scheme + "://" + u.Host
	urls := []string{origin + "/.well-known/oauth-authorization-server" + path}
	if path == "" {
		urls = append(urls, origin+"/.well-known/openid-configuration")
	} else {
		urls = append(urls, origin+path+"/.well-known/openid-configuration", origin+"/.well-known/openid-configuration"+path)
	}
	var errs []error
	for _, m := range urls {
		body, err := a.get(ctx, m)
		if st, ok := errors.AsType[*statusError](err); ok && st.code/100 == 4 {
			errs = append(errs, err)
			continue // not there: the next place
		}
		if err != nil {
			return "", fmt.Errorf("the metadata of %s: %w", a.issuer, err)
		}
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := json.Unmarshal(body, &meta); err != nil {
			return "", fmt.Errorf("the metadata of %s (%s) is not JSON: %w", a.issuer, m, err)
		}
		if meta.Issuer != a.issuer {
			return "", fmt.Errorf("the metadata at %s names the issuer %q, not %q: give the issuer exactly as the server names it", m, meta.Issuer, a.issuer)
		}
		if meta.JWKSURI == "" {
			return "", fmt.Errorf("the metadata of %s names no jwks_uri: its tokens cannot be checked as JWTs (introspect them instead)", a.issuer)
		}
		if err := checkHTTPSOrLoopback(meta.JWKSURI); err != nil {
			return "", fmt.Errorf("the jwks_uri of %s: %w", a.issuer, err)
		}
		return meta.JWKSURI, nil
	}
	return "", fmt.Errorf("no authorization server metadata for issuer %s at %s: %w", a.issuer, strings.Join(urls, " or "), errors.Join(errs...))
}

// statusError is an answer other than 200 OK.
type statusError struct {
	url  string
	code int
	text string
}

func (e *statusError) Error() string { return fmt.Sprintf("%s answered %s", e.url, e.text) }

// get fetches url, at most [AuthMaxBody] bytes.
func (a *Auth) get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	return a.do(req)
}

func (a *Auth) do(req *http.Request) ([]byte, error) {
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, AuthMaxBody+1))
	if err != nil {
		return nil, err
	}
	if len(body) > AuthMaxBody {
		return nil, fmt.Errorf("%s answered more than %d bytes", req.URL.Redacted(), AuthMaxBody)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &statusError{url: req.URL.Redacted(), code: resp.StatusCode, text: resp.Status}
	}
	return body, nil
}

// introspect asks the introspection endpoint about the token (RFC 7662).
func (a *Auth) introspect(ctx context.Context, token string, audiences []string) (*auth.TokenInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, AuthFetchTimeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.intro.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(a.intro.ClientID), url.QueryEscape(a.intro.ClientSecret))
	body, err := a.do(req)
	if err != nil {
		return nil, fmt.Errorf("introspection: %w", err)
	}
	var r struct {
		Active   bool         `json:"active"`
		Scope    string       `json:"scope"`
		Exp      int64        `json:"exp"`
		Nbf      int64        `json:"nbf"`
		Aud      jwt.Audience `json:"aud"`
		Iss      string       `json:"iss"`
		Sub      string       `json:"sub"`
		ClientID string       `json:"client_id"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("introspection: the answer is not JSON: %w", err)
	}
	now := a.now()
	switch {
	case !r.Active:
		return nil, tokenRefused(inactive, "introspection: not active")
	case r.Iss != "" && r.Iss != a.issuer:
		return nil, tokenRefused(wrongIssuer, "introspection: iss %q, want %q", r.Iss, a.issuer)
	case !slices.ContainsFunc(audiences, r.Aud.Contains):
		return nil, tokenRefused(wrongAud, "introspection: aud %q holds none of %q", []string(r.Aud), audiences)
	case r.Exp != 0 && now.Add(-AuthClockSkew).After(time.Unix(r.Exp, 0)):
		return nil, tokenRefused(expired, "introspection: expired at %s", time.Unix(r.Exp, 0).UTC().Format(time.RFC3339))
	case r.Nbf != 0 && now.Add(AuthClockSkew).Before(time.Unix(r.Nbf, 0)):
		return nil, tokenRefused(notYet, "introspection: nbf ahead of the gateway's clock by more than %v", AuthClockSkew)
	}
	info := &auth.TokenInfo{Scopes: strings.Fields(r.Scope), UserID: cmp.Or(r.Sub, r.ClientID)}
	if r.Exp != 0 {
		info.Expiration = time.Unix(r.Exp, 0)
	}
	return info, nil
}
