package cli

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/internal/userdir"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// signInURL is the sign-in address mcp login prints.
var signInURL = regexp.MustCompile(`(?m)^  (http://\S+/authorize\?\S+)$`)

// TestMCPLoginListLogout: a server that asks for sign-in is "needs login"
// in mcp list, with the command; mcp login prints the address, waits for
// the redirect and stores the tokens in a private file; then the server
// connects; mcp logout deletes the tokens, and run reports the server
// once, with the command, while the other server works. No token is
// printed.
func TestMCPLoginListLogout(t *testing.T) {
	p := mcptest.NewOAuthServer(t)
	port := freeTestPort(t)
	command, args, env := mcptest.Command(nil)
	mcpFile := writeMCPConfig(t, map[string]any{
		"signin": map[string]any{"url": p.URL + "/mcp", "oauth": map[string]any{"callbackPort": port}},
		"t":      map[string]any{"command": command, "args": args, "env": env},
	})
	check := func(what, out string) {
		t.Helper()
		if strings.Contains(out, mcptest.SecretMark) {
			t.Errorf("%s printed a secret:\n%s", what, out)
		}
	}

	code, out, errOut := run(t, "mcp", "list", "--mcp", mcpFile)
	check("mcp list", out+errOut)
	if code != 1 || !regexp.MustCompile(`signin\s+needs login`).MatchString(out) || !strings.Contains(out, "run toolshelf mcp login signin") ||
		!strings.Contains(errOut, "signin (needs login: run toolshelf mcp login signin)") || !regexp.MustCompile(`t\s+connected`).MatchString(out) {
		t.Fatalf("mcp list before login: exit %d\n%s%s", code, out, errOut)
	}

	// mcp login: the test follows the printed address as a browser would.
	followed := make(chan error, 1)
	stderr := &watcher{marker: "/authorize?"}
	stderr.fn = func() {
		m := signInURL.FindStringSubmatch(stderr.String())
		if m == nil {
			followed <- nil
			return
		}
		resp, err := http.Get(m[1])
		if err == nil {
			resp.Body.Close()
		}
		followed <- err
	}
	stdout := &watcher{}
	code = Main(context.Background(), []string{"mcp", "login", "signin", "--mcp", mcpFile, "--no-browser", "--timeout", "30s"},
		strings.NewReader(""), stdout, stderr)
	check("mcp login", stdout.String()+stderr.String())
	if code != 0 || !strings.Contains(stdout.String(), "signed in to signin") || signInURL.FindString(stderr.String()) == "" {
		t.Fatalf("mcp login: exit %d\n%s%s", code, stdout, stderr)
	}
	if err := <-followed; err != nil {
		t.Fatal(err)
	}
	state, err := userdir.State()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(state, "oauth", "signin-*.json"))
	if len(files) != 1 {
		t.Fatalf("token files %v, want one", files)
	}
	if info, err := os.Stat(files[0]); err != nil || (runtime.GOOS != "windows" && info.Mode().Perm() != 0o600) {
		t.Errorf("token file: %v, %v; want mode 0600", info.Mode(), err)
	}
	if info, err := os.Stat(filepath.Dir(files[0])); err != nil || (runtime.GOOS != "windows" && info.Mode().Perm() != 0o700) {
		t.Errorf("token folder: %v, %v; want mode 0700", info.Mode(), err)
	}

	code, out, errOut = run(t, "mcp", "list", "--mcp", mcpFile)
	check("mcp list", out+errOut)
	if code != 0 || !regexp.MustCompile(`signin\s+connected`).MatchString(out) {
		t.Fatalf("mcp list after login: exit %d\n%s%s", code, out, errOut)
	}

	// A run that calls the signed-in server's tool, verbose, with a
	// session and metrics: no token in any of them.
	sessions, metrics := t.TempDir(), filepath.Join(t.TempDir(), "metrics.jsonl")
	code, out, errOut = runAgent(t, agentRunOpts{}, "-v", "--mcp", mcpFile, "--session-dir", sessions, "--metrics", metrics,
		"--tools", "+mcp__signin__echo", "--json", "Echo the text")
	check("run -v", out+errOut)
	if code != 0 || !strings.Contains(out, `"name":"mcp__signin__echo"`) {
		t.Fatalf("run with the signed-in server: exit %d\n%s\n%s", code, errOut, out)
	}
	written, _ := filepath.Glob(filepath.Join(sessions, "*"))
	for _, f := range append(written, metrics) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check(f, string(data))
	}
	if len(written) == 0 {
		t.Error("the run wrote no session file")
	}

	code, out, errOut = run(t, "mcp", "logout", "signin", "--mcp", mcpFile)
	check("mcp logout", out+errOut)
	if code != 0 || !strings.Contains(out, "signed out of signin") {
		t.Fatalf("mcp logout: exit %d\n%s%s", code, out, errOut)
	}
	if files, _ := filepath.Glob(filepath.Join(state, "oauth", "signin-*.json")); len(files) != 0 {
		t.Errorf("after logout the token files are %v", files)
	}
	if code, out, _ := run(t, "mcp", "logout", "signin", "--mcp", mcpFile); code != 0 || !strings.Contains(out, "no sign-in of signin is stored") {
		t.Errorf("a second logout: exit %d\n%s", code, out)
	}

	// run: the server that needs sign-in is reported once, with the
	// command; the other one's tool is called.
	code, out, errOut = runAgent(t, agentRunOpts{}, "--mcp", mcpFile, "--no-session", "--json", "Echo the text")
	check("run", out+errOut)
	if code != 0 || strings.Count(errOut, "toolshelf mcp login signin") != 1 || !strings.Contains(out, "echo: ") {
		t.Errorf("run: exit %d; want the sign-in reported once and echo called\n%s\n%s", code, errOut, out)
	}
}

// TestMCPLoginTimesOut: nobody signs in, so mcp login ends after
// --timeout, saying so and what to run.
func TestMCPLoginTimesOut(t *testing.T) {
	p := mcptest.NewOAuthServer(t)
	mcpFile := writeMCPConfig(t, map[string]any{
		"late": map[string]any{"url": p.URL + "/mcp", "oauth": map[string]any{"callbackPort": freeTestPort(t)}},
	})
	code, out, errOut := run(t, "mcp", "login", "late", "--mcp", mcpFile, "--no-browser", "--timeout", "200ms")
	if code == 0 || !strings.Contains(errOut, "no sign-in to late within --timeout 200ms; run toolshelf mcp login late again") ||
		signInURL.FindString(errOut) == "" {
		t.Errorf("mcp login nobody follows: exit %d\n%s%s", code, out, errOut)
	}
}

// freeTestPort returns a loopback port that was free a moment ago.
func freeTestPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
