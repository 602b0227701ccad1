package mcptest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SecretMark is in every token and secret the fake authorization server
// hands out, so a test can look for any of them in what was logged.
const SecretMark = "s3cr3tTOKEN"

// OAuthServer is an MCP server (NewServer's tools) behind a bearer token
// check at /mcp, with its
// own authorization server (RFC 9728 metadata, RFC 8414 metadata, dynamic
// registration, an authorization endpoint that approves at once, PKCE
// checked, a token endpoint with the authorization code, refresh token and
// client credentials grants).
type OAuthServer struct {
	*httptest.Server

	mu         sync.Mutex
	n          int
	access     map[string]string // valid access token → its scopes
	refresh    map[string]string // valid refresh token → its scopes
	challenges map[string]string // code → PKCE challenge
	scopes     map[string]string // code → the scopes asked for
	required   map[string]string // tool → the scope its calls need
	grants     []string          // grant types asked for, in order
}

// NewOAuthServer starts an OAuthServer, closed when the test ends. Its
// client credentials grant takes the client "machine" with the secret
// "machine-" + SecretMark.
func NewOAuthServer(t testing.TB) *OAuthServer {
	p := &OAuthServer{access: map[string]string{}, refresh: map[string]string{}, challenges: map[string]string{},
		scopes: map[string]string{}, required: map[string]string{}}
	srv := NewServer("protected", "")
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		p.mu.Lock()
		scopes, ok := p.access[tok]
		required := p.required
		p.mu.Unlock()
		if need := calledTool(r, required); ok && need != "" && !slices.Contains(strings.Fields(scopes), need) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`,
				strings.Join(append(strings.Fields(scopes), need), " "), p.URL))
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, p.URL))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSONAnswer(w, map[string]any{"resource": p.URL + "/mcp", "authorization_servers": []string{p.URL}, "scopes_supported": []string{"tools"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSONAnswer(w, map[string]any{
			"issuer": p.URL, "authorization_endpoint": p.URL + "/authorize", "token_endpoint": p.URL + "/token",
			"registration_endpoint": p.URL + "/register", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"client_secret_post", "none"},
			"grant_types_supported": []string{"authorization_code", "refresh_token", "client_credentials"},
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		writeJSONAnswer(w, map[string]any{"client_id": "dynamic-client", "client_secret": "client-" + SecretMark, "redirect_uris": []string{"x"}, "token_endpoint_auth_method": "client_secret_post"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") != p.URL+"/mcp" {
			http.Error(w, "PKCE and the resource are required", http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.n++
		code := fmt.Sprintf("code-%d-%s", p.n, SecretMark)
		p.challenges[code] = q.Get("code_challenge")
		p.scopes[code] = q.Get("scope")
		p.mu.Unlock()
		to, _ := url.Parse(q.Get("redirect_uri"))
		to.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		grant := r.PostForm.Get("grant_type")
		p.grants = append(p.grants, grant)
		var scopes string
		switch grant {
		case "authorization_code":
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if want, ok := p.challenges[r.PostForm.Get("code")]; !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != want {
				w.WriteHeader(http.StatusBadRequest)
				writeJSONAnswer(w, map[string]any{"error": "invalid_grant"})
				return
			}
			delete(p.challenges, r.PostForm.Get("code"))
			scopes = p.scopes[r.PostForm.Get("code")]
		case "refresh_token":
			var ok bool
			if scopes, ok = p.refresh[r.PostForm.Get("refresh_token")]; !ok {
				w.WriteHeader(http.StatusBadRequest)
				writeJSONAnswer(w, map[string]any{"error": "invalid_grant", "error_description": "refresh token revoked"})
				return
			}
			delete(p.refresh, r.PostForm.Get("refresh_token"))
		case "client_credentials":
			if r.PostForm.Get("client_id") != "machine" || r.PostForm.Get("client_secret") != "machine-"+SecretMark {
				w.WriteHeader(http.StatusUnauthorized)
				writeJSONAnswer(w, map[string]any{"error": "invalid_client"})
				return
			}
		default:
			w.WriteHeader(http.StatusBadRequest)
			writeJSONAnswer(w, map[string]any{"error": "unsupported_grant_type"})
			return
		}
		p.n++
		access, refresh := fmt.Sprintf("access-%d-%s", p.n, SecretMark), fmt.Sprintf("refresh-%d-%s", p.n, SecretMark)
		p.access[access] = scopes
		answer := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": 3600}
		if grant != "client_credentials" {
			p.refresh[refresh] = scopes
			answer["refresh_token"] = refresh
		}
		writeJSONAnswer(w, answer)
	})
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" {
			w.Header().Set("Content-Type", "application/json")
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// writeJSONAnswer writes v as JSON.
func writeJSONAnswer(w http.ResponseWriter, v any) {
	_ = json.NewEncoder(w).Encode(v)
}

// Issue makes an access token and a refresh token valid for scopes (a
// space-separated list; an empty token is skipped), as a sign-in before
// the test would have.
func (p *OAuthServer) Issue(access, refresh, scopes string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if access != "" {
		p.access[access] = scopes
	}
	if refresh != "" {
		p.refresh[refresh] = scopes
	}
}

// RequireScope makes the calls of the named tool need scope: a token
// without it is answered 403 insufficient_scope, naming the token's scopes
// and this one.
func (p *OAuthServer) RequireScope(tool, scope string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.required = maps.Clone(p.required)
	p.required[tool] = scope
}

// calledTool returns the scope a request's tools/call needs by required,
// "" when it needs none; the body is read and put back.
func calledTool(r *http.Request, required map[string]string) string {
	if len(required) == 0 || r.Method != http.MethodPost {
		return ""
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return ""
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return ""
	}
	return required[msg.Params.Name]
}

// Grants returns the grant types the token endpoint was asked for, in
// order.
func (p *OAuthServer) Grants() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.grants...)
}
