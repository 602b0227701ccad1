package mcpclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// OAuthConfig is how toolshelf signs in to an HTTP server that asks for
// MCP authorization (OAuth 2.1): an "oauth" object in a servers file, or
// [ServerConfig.OAuth] in a program. The zero value is the default that a
// server without one gets too: discovery from the server's 401, the
// authorization code flow with PKCE through a loopback redirect on
// [DefaultCallbackPort], and dynamic client registration.
type OAuthConfig struct {
	// Disabled never tries to sign in ("oauth": false): a 401 is a
	// failure.
	Disabled bool
	// ClientID and ClientSecret are a client registered with the
	// authorization server beforehand. ClientSecret is optional for the
	// authorization code grant (a public client).
	ClientID, ClientSecret string
	// Scopes replace the scopes the authorization code grant's discovery
	// chooses (the challenge's scope, else the server's
	// scopes_supported); scopes a later insufficient_scope challenge asks
	// for are added. Empty keeps discovery's. The client credentials
	// grant always asks for discovery's.
	Scopes []string
	// Grant is [GrantAuthorizationCode] (the default, with a person) or
	// [GrantClientCredentials] (machine to machine: needs ClientID and
	// ClientSecret, never a person).
	Grant string
	// ClientMetadataURL is an https URL where toolshelf's client ID
	// metadata document is published, used as the client id by an
	// authorization server that supports such documents.
	ClientMetadataURL string
	// CallbackPort is the port of the loopback redirect URI,
	// http://127.0.0.1:PORT/callback (0 means [DefaultCallbackPort]). A
	// pre-registered client's redirect URI must be exactly that.
	CallbackPort int
}

// The grants of [OAuthConfig.Grant].
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

// DefaultCallbackPort is the port of the loopback redirect URI when the
// configuration sets none. It is fixed, not picked at random, so that a
// client registered once (beforehand, or dynamically by toolshelf) keeps a
// redirect URI that matches.
const DefaultCallbackPort = 33418

// redirectURL is the loopback redirect URI of the configuration.
func (o *OAuthConfig) redirectURL() string {
	port := DefaultCallbackPort
	if o != nil && o.CallbackPort != 0 {
		port = o.CallbackPort
	}
	return fmt.Sprintf("http://127.0.0.1:%d/callback", port)
}

// grant returns the configured grant, the default filled in.
func (o *OAuthConfig) grant() string {
	if o == nil || o.Grant == "" {
		return GrantAuthorizationCode
	}
	return o.Grant
}

// check reports what is wrong with the configuration.
func (o *OAuthConfig) check() error {
	switch o.Grant {
	case "", GrantAuthorizationCode:
	case GrantClientCredentials:
		if o.ClientID == "" || o.ClientSecret == "" {
			return errors.New(`the client_credentials grant needs clientId and clientSecret`)
		}
	default:
		return fmt.Errorf(`unknown grant %q; use "authorization_code" or "client_credentials"`, o.Grant)
	}
	if o.ClientSecret != "" && o.ClientID == "" {
		return errors.New("clientSecret is set without clientId; set both, or neither for dynamic registration")
	}
	if o.CallbackPort < 0 || o.CallbackPort > 65535 {
		return fmt.Errorf("callbackPort %d is not a port (1 to 65535)", o.CallbackPort)
	}
	if o.ClientMetadataURL != "" {
		u, err := url.Parse(o.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return fmt.Errorf("clientMetadataUrl %q must be an https URL with a path (where the client metadata document is published)", o.ClientMetadataURL)
		}
	}
	for _, sc := range o.Scopes {
		if sc == "" || strings.ContainsAny(sc, " \t\r\n\"\\") {
			return fmt.Errorf("scope %q is not one scope; list each scope as its own string", sc)
		}
	}
	return nil
}

// oauthKeys are the keys of a server's "oauth" object.
var oauthKeys = []string{"clientId", "clientSecret", "scopes", "grant", "clientMetadataUrl", "callbackPort"}

// oauth decodes a server's "oauth" value: false, true or an object.
func (p *parser) oauth(name string, raw json.RawMessage, expand func(key, v string) string) *OAuthConfig {
	fail := func(problem, fix string) { p.fail(name, problem, fix) }
	const shape = `write "oauth": {"clientId": "...", "scopes": ["..."]}, or "oauth": false to never sign in`
	var flag bool
	if json.Unmarshal(raw, &flag) == nil {
		if !flag {
			return &OAuthConfig{Disabled: true}
		}
		return &OAuthConfig{}
	}
	keys, values, err := objectEntries(raw)
	if err != nil {
		fail(fmt.Sprintf(`"oauth" must be an object or false, not %s`, jsonKind(raw)), shape)
		return nil
	}
	o := &OAuthConfig{}
	str := func(key, v string) string {
		var out string
		if json.Unmarshal([]byte(v), &out) != nil {
			fail(fmt.Sprintf("oauth %q must be a string, not %s", key, jsonKind(json.RawMessage(v))), shape)
		}
		return out
	}
	for i, k := range keys {
		v := values[i]
		if isNull(v) {
			continue
		}
		switch k {
		case "clientId":
			o.ClientID = expand("oauth clientId", str(k, string(v)))
		case "clientSecret":
			o.ClientSecret = expand("oauth clientSecret", str(k, string(v)))
		case "grant":
			o.Grant = str(k, string(v))
		case "clientMetadataUrl":
			o.ClientMetadataURL = str(k, string(v))
		case "scopes":
			if json.Unmarshal(v, &o.Scopes) != nil {
				fail(fmt.Sprintf(`oauth "scopes" must be an array of strings, not %s`, jsonKind(v)), `write "scopes": ["read", "write"]`)
			}
		case "callbackPort":
			var port float64
			if json.Unmarshal(v, &port) != nil || port != float64(int(port)) {
				fail(fmt.Sprintf(`oauth "callbackPort" must be a whole number, not %s`, jsonKind(v)), `write e.g. "callbackPort": 33418`)
				continue
			}
			o.CallbackPort = int(port)
			if o.CallbackPort < 1 || o.CallbackPort > 65535 {
				fail(fmt.Sprintf(`oauth "callbackPort" %d is not a port`, o.CallbackPort), "use a port from 1 to 65535, or leave it out for the default")
				o.CallbackPort = 0
			}
		default:
			fix := "remove it; known keys are " + strings.Join(oauthKeys, ", ")
			if i := slices.IndexFunc(oauthKeys, func(known string) bool { return strings.EqualFold(known, k) }); i >= 0 {
				fix = fmt.Sprintf("write %q", oauthKeys[i])
			}
			fail(fmt.Sprintf("unknown oauth key %q", k), fix)
		}
	}
	if err := o.check(); err != nil {
		fail("oauth: "+err.Error(), "fix the oauth object")
	}
	return o
}
