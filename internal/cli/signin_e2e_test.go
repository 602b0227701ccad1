//go:build unix

package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/internal/oauthtest"
)

// TestSignInEndToEnd signs in to a protected MCP server for real: the
// gateway (serve --http --auth-issuer) in front of the real filesystem
// server, guarded by a real authorization server (internal/oauthtest),
// and toolshelf's own client, configured with nothing but the URL. mcp
// login registers the client dynamically and gets a token by the
// authorization code flow with PKCE (the test plays the browser); a run
// calls a tool of the protected server; once the access token has
// expired, the next run refreshes it and stores the new one; once the
// refresh token is revoked, a run reports "needs login" with the command
// and mcp list says the same. The token file is the user's, mode 0600,
// and no token or secret appears in any output, session or metrics file.
func TestSignInEndToEnd(t *testing.T) {
	as := oauthtest.Start(t, nil)
	files := t.TempDir()
	const content = "the protected note"
	note := filepath.Join(files, "note.txt")
	if err := os.WriteFile(note, []byte(content+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gw := serveHTTP(t, "--mcp", filesystemServer(t, files), "--metrics", "off", "--auth-issuer", as.Issuer, "--auth-scope", "mcp:tools")
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	mcpFile := writeMCPConfig(t, map[string]any{
		"gw": map[string]any{"url": gw, "exposure": "direct", "oauth": map[string]any{"callbackPort": freeTestPort(t)}},
	})
	sessions, metrics := t.TempDir(), filepath.Join(t.TempDir(), "metrics.jsonl")
	var printed strings.Builder // every output of every command

	// mcp list before login: needs login, with the command.
	code, out, errOut := run(t, "mcp", "list", "--mcp", mcpFile)
	printed.WriteString(out + errOut)
	if code != 1 || !strings.Contains(out, "needs login") || !strings.Contains(out+errOut, "toolshelf mcp login gw") {
		t.Fatalf("mcp list before login: exit %d\n%s%s", code, out, errOut)
	}

	// mcp login: the test follows the printed address as a browser would.
	login := func() {
		t.Helper()
		followed := make(chan error, 1)
		stderr := &watcher{marker: "  http://"}
		stderr.fn = func() {
			m := signInAddress.FindStringSubmatch(stderr.String())
			if m == nil {
				followed <- nil
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			followed <- as.Authorize(ctx, m[1])
		}
		stdout := &watcher{}
		code := Main(context.Background(), []string{"mcp", "login", "gw", "--mcp", mcpFile, "--no-browser", "--timeout", "60s"},
			strings.NewReader(""), stdout, stderr)
		printed.WriteString(stdout.String() + stderr.String())
		if code != 0 || !strings.Contains(stdout.String(), "signed in to gw") {
			t.Fatalf("mcp login: exit %d\n%s%s", code, stdout, stderr)
		}
		select {
		case err := <-followed:
			if err != nil {
				t.Fatalf("following the sign-in address: %v", err)
			}
		default:
			t.Fatalf("mcp login printed no sign-in address:\n%s", stderr)
		}
	}
	login()
	tokenFile, entry := readTokenFile(t, state)
	first := entry.Token

	// A run calls a tool of the protected server through the stored token.
	runOnce := func(wantCode int, wantContent bool) (string, string) {
		t.Helper()
		script := writeScript(t,
			map[string]any{"tool_calls": []any{map[string]any{"name": "mcp__gw__call_tool",
				"arguments": map[string]any{"name": "mcp__filesystem__read_text_file", "arguments": map[string]any{"path": note}}}}},
			map[string]any{"text": "done"})
		code, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcpFile, "--session-dir", sessions, "--metrics", metrics,
			"--script", script, "--json", "-v", "read the note")
		printed.WriteString(out + errOut)
		if code != wantCode {
			t.Fatalf("run: exit %d, want %d\n%s%s", code, wantCode, out, errOut)
		}
		if got := strings.Contains(out, content); got != wantContent {
			t.Fatalf("run: the note's content in the output is %v, want %v\n%s%s", got, wantContent, out, errOut)
		}
		return out, errOut
	}
	runOnce(0, true)

	// The access token expires: the next run refreshes it and stores the
	// new one.
	expire(t, tokenFile)
	runOnce(0, true)
	_, entry = readTokenFile(t, state)
	if entry.Token.AccessToken == first.AccessToken || !entry.Token.Expiry.After(time.Now()) {
		t.Errorf("after a run with an expired token the stored token is the same or expired (expiry %v): no refresh", entry.Token.Expiry)
	}
	refreshed := entry.Token

	// The refresh token is revoked: a run reports the server once, with
	// the command, and mcp list says "needs login".
	as.Revoke(t, refreshed.RefreshToken)
	expire(t, tokenFile)
	out, errOut = runOnce(exitNoServers, false)
	if want := "the MCP server gw needs sign-in, so the answer had none of its tools; run toolshelf mcp login gw"; !strings.Contains(errOut, want) ||
		strings.Count(errOut, `msg="needs sign-in"`) != 1 { // the warning, once, and the run's last word
		t.Errorf("run with a revoked sign-in: want the warning once and %q:\n%s%s", want, out, errOut)
	}
	code, out, errOut = run(t, "mcp", "list", "--mcp", mcpFile)
	printed.WriteString(out + errOut)
	if code != 1 || !strings.Contains(out, "needs login") {
		t.Errorf("mcp list after the revocation: exit %d\n%s%s", code, out, errOut)
	}

	// Signing in again works, and the new file is private too.
	login()
	readTokenFile(t, state)

	// No token or secret anywhere it could leak to.
	secrets := []string{first.AccessToken, first.RefreshToken, refreshed.AccessToken, refreshed.RefreshToken, entry.ClientSecret}
	leaked := func(where, text string) {
		t.Helper()
		for _, s := range secrets {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("%s holds a token or secret (%d bytes)", where, len(s))
			}
		}
	}
	leaked("the commands' output", printed.String())
	for _, dir := range []string{sessions, filepath.Dir(metrics)} {
		_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				b, _ := os.ReadFile(path)
				leaked(filepath.Base(path), string(b))
			}
			return nil
		})
	}
}

// signInAddress is the sign-in address mcp login prints, at the
// authorization server of internal/oauthtest.
var signInAddress = regexp.MustCompile(`(?m)^  (http://\S+)$`)

// storedSignIn is the part of a token file the test reads.
type storedSignIn struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	Token        *struct {
		AccessToken  string    `json:"access_token"`
		RefreshToken string    `json:"refresh_token"`
		Expiry       time.Time `json:"expiry"`
	} `json:"token"`
}

// readTokenFile returns the one token file under the state folder, after
// checking that it is the user's and private, and what it holds.
func readTokenFile(t *testing.T, state string) (string, storedSignIn) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(state, "toolshelf", "oauth", "gw-*.json"))
	if len(files) != 1 {
		t.Fatalf("token files %v, want one", files)
	}
	info, err := os.Lstat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 || !info.Mode().IsRegular() {
		t.Errorf("the token file's mode is %v, want a regular file of mode 0600", info.Mode())
	}
	if st, ok := info.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		t.Errorf("the token file is not the user's (uid %d)", os.Getuid())
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var e storedSignIn
	if err := json.Unmarshal(data, &e); err != nil || e.Token == nil || e.Token.AccessToken == "" || e.Token.RefreshToken == "" {
		t.Fatalf("the token file holds no access and refresh token (%v)", err)
	}
	return files[0], e
}

// expire moves the stored access token's expiry an hour into the past,
// as if the hour had passed.
func expire(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	tok, _ := m["token"].(map[string]any)
	if tok == nil {
		t.Fatal("the token file holds no token")
	}
	tok["expiry"] = time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
