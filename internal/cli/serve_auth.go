package cli

import (
	"context"
	"log/slog"
	"net"
	"os"

	"github.com/spf13/pflag"

	"github.com/toolshelf/toolshelf/gateway"
)

// The environment variables that hold the gateway's credentials at the
// authorization server's introspection endpoint (--auth-introspect): a
// secret stays out of the process list.
const (
	envIntrospectID     = "TOOLSHELF_INTROSPECT_CLIENT_ID"
	envIntrospectSecret = "TOOLSHELF_INTROSPECT_CLIENT_SECRET"
)

// authFlags are serve's settings for the gateway as an OAuth 2.1
// protected resource.
type authFlags struct {
	issuer, publicURL, audience, introspect string
	scopes                                  []string
}

func (f *authFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.issuer, "auth-issuer", "", "with --http: require OAuth access tokens from this authorization server (its issuer URL), instead of --token")
	fl.StringVar(&f.publicURL, "public-url", "", "with --auth-issuer: the gateway's origin as clients reach it (default http://ADDR of --http on loopback; required beyond it)")
	fl.StringVar(&f.audience, "auth-audience", "", "with --auth-issuer: an audience tokens may carry instead of the endpoint's URL (default: --public-url)")
	fl.StringArrayVar(&f.scopes, "auth-scope", nil, "with --auth-issuer: a scope every token must grant (repeatable)")
	fl.StringVar(&f.introspect, "auth-introspect", "", "with --auth-issuer: check tokens at this introspection endpoint (RFC 7662) instead of as JWTs, as $"+envIntrospectID+" with $"+envIntrospectSecret)
}

// check refuses settings that cannot go together, before serve listens.
func (f *authFlags) check(httpAddr, token string) error {
	if f.issuer == "" {
		if f.publicURL != "" || f.audience != "" || len(f.scopes) > 0 || f.introspect != "" {
			return usagef("--public-url, --auth-audience, --auth-scope and --auth-introspect need --auth-issuer (the authorization server whose tokens the gateway accepts)")
		}
		return nil
	}
	if httpAddr == "" {
		return usagef("--auth-issuer guards the HTTP gateway: add --http ADDR")
	}
	if token != "" {
		return usagef("--token (or $TOOLSHELF_TOKEN) and --auth-issuer are both set: a static token and OAuth access tokens are two ways to guard the gateway; keep one")
	}
	if f.introspect != "" && os.Getenv(envIntrospectID) == "" {
		return usagef("--auth-introspect needs the gateway's client credentials at the authorization server: set $%s and $%s", envIntrospectID, envIntrospectSecret)
	}
	return nil
}

// build returns the gateway's token checker for the listener, nil without
// --auth-issuer, once the issuer's metadata (and keys) could be fetched.
func (f *authFlags) build(ctx context.Context, ln net.Listener, logger *slog.Logger) (*gateway.Auth, error) {
	if f.issuer == "" {
		return nil, nil
	}
	public := f.publicURL
	if public == "" {
		if gateway.BeyondLoopback(ln.Addr()) {
			return nil, usagef("--auth-issuer on %s, beyond loopback, needs --public-url: the gateway's origin as clients reach it (https://gateway.example.com), which tokens name as their audience", ln.Addr())
		}
		public = "http://" + ln.Addr().String()
	}
	cfg := gateway.AuthConfig{Issuer: f.issuer, PublicURL: public, Audience: f.audience, Scopes: f.scopes, Logger: logger}
	if f.introspect != "" {
		cfg.Introspection = &gateway.Introspection{URL: f.introspect, ClientID: os.Getenv(envIntrospectID), ClientSecret: os.Getenv(envIntrospectSecret)}
	}
	a, err := gateway.NewAuth(cfg)
	if err != nil {
		return nil, usagef("--auth-issuer: %v", err)
	}
	if err := a.Discover(ctx); err != nil {
		return nil, usagef("--auth-issuer %s: %v (check the issuer URL, and that the gateway can reach it)", f.issuer, err)
	}
	logger.Info("gateway: an OAuth protected resource", "issuer", f.issuer, "resource_metadata", a.MetadataURL("/mcp"))
	return a, nil
}
