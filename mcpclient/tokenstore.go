package mcpclient

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/toolshelf/toolshelf/internal/userdir"
)

// maxTokenFile bounds a token file as it is read.
const maxTokenFile = 1 << 20

// tokenStore keeps the OAuth tokens of servers in a private folder, a file
// per server name and resource (the server's URL), read and written
// through userdir.ReadFile and userdir.WriteFile, so a folder or file that
// is a link, another user's or open to others is refused.
type tokenStore struct {
	dir string
}

// tokenEntry is one token file: what refreshing a token and signing in
// again need. It holds secrets: it is never printed or logged.
type tokenEntry struct {
	Server   string `json:"server"`
	Resource string `json:"resource"`
	// ClientID and ClientSecret are the client the token was issued to:
	// configured, or registered dynamically.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// TokenURL and AuthStyle are how a refresh reaches the token
	// endpoint.
	TokenURL  string           `json:"token_url"`
	AuthStyle oauth2.AuthStyle `json:"auth_style,omitempty"`
	// Scopes are the scopes that were requested.
	Scopes []string `json:"scopes,omitempty"`
	// StepUp are scopes the server asked for later (insufficient_scope):
	// the next sign-in asks for them too.
	StepUp []string `json:"step_up_scopes,omitempty"`
	// Token is the access token with its refresh token and expiry.
	Token *storedToken `json:"token,omitempty"`
}

// storedToken is an oauth2.Token as it is stored.
type storedToken struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
}

func (t *storedToken) oauth2() *oauth2.Token {
	return &oauth2.Token{AccessToken: t.AccessToken, TokenType: t.TokenType, RefreshToken: t.RefreshToken, Expiry: t.Expiry}
}

func fromOAuth2(t *oauth2.Token) *storedToken {
	return &storedToken{AccessToken: t.AccessToken, TokenType: t.TokenType, RefreshToken: t.RefreshToken, Expiry: t.Expiry}
}

// tokenStore returns the Manager's store: Options.TokenDir, else the
// state folder's oauth folder.
func (m *Manager) tokenStore() (tokenStore, error) {
	if m.opts.TokenDir != "" {
		return tokenStore{dir: m.opts.TokenDir}, nil
	}
	state, err := userdir.State()
	if err != nil {
		return tokenStore{}, err
	}
	return tokenStore{dir: filepath.Join(state, "oauth")}, nil
}

// fileName is the file of a server's entry for a resource: the server's
// name made safe, and a hash of the name and the resource.
func (tokenStore) fileName(server, resource string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + resource))
	return fileSafe(server) + "-" + hex.EncodeToString(sum[:8]) + ".json"
}

// load returns the server's entry for resource; nil, nil when there is
// none. A missing folder is not made: a server that never signs in leaves
// nothing behind.
func (ts tokenStore) load(server, resource string) (*tokenEntry, error) {
	path := filepath.Join(ts.dir, ts.fileName(server, resource))
	data, found, err := userdir.ReadFile(ts.dir, ts.fileName(server, resource), maxTokenFile)
	if !found && err == nil {
		return nil, nil
	}
	var e tokenEntry
	if errors.Is(err, userdir.ErrTooLarge) || err == nil && (json.Unmarshal(data, &e) != nil || e.Server != server || e.Resource != resource) {
		// The message never quotes the file: it holds secrets.
		return nil, fmt.Errorf("the OAuth token file %s is damaged: run toolshelf mcp logout %s, then toolshelf mcp login %s", path, server, server)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the OAuth tokens: %w", err)
	}
	return &e, nil
}

// save writes the entry, replacing the old one atomically.
func (ts tokenStore) save(e *tokenEntry) error {
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	if err := userdir.WriteFile(ts.dir, ts.fileName(e.Server, e.Resource), data); err != nil {
		return fmt.Errorf("saving the OAuth tokens: %w", err)
	}
	return nil
}

// remove deletes every entry of the server, whatever its resource; it
// reports whether there was one.
func (ts tokenStore) remove(server string) (bool, error) {
	if _, err := os.Lstat(ts.dir); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	root, err := userdir.OpenPrivate(ts.dir)
	if err != nil {
		return false, fmt.Errorf("removing the OAuth tokens: %w", err)
	}
	defer root.Close()
	d, err := root.Open(".")
	if err != nil {
		return false, fmt.Errorf("removing the OAuth tokens: %w", err)
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return false, fmt.Errorf("removing the OAuth tokens: %w", err)
	}
	prefix := fileSafe(server) + "-"
	removed := false
	for _, de := range entries {
		if !strings.HasPrefix(de.Name(), prefix) || !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		data, err := root.ReadFile(de.Name())
		var e tokenEntry
		if err != nil || json.Unmarshal(data, &e) != nil || e.Server != server {
			continue
		}
		if err := root.Remove(de.Name()); err != nil {
			return removed, fmt.Errorf("removing the OAuth tokens: %w", err)
		}
		removed = true
	}
	return removed, nil
}
