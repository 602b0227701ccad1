//go:build unix

package cli

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// TestExpandedSecretsAreRedacted: a value expanded from the environment
// into a server's args or URL query is shown as ${NAME} in the warnings of
// a failed connection (with and without -v), in the servers' standard
// error logged with -v, and in mcp list and mcp list --json.
func TestExpandedSecretsAreRedacted(t *testing.T) {
	const name, secret = "TOOLSHELF_TEST_SECRET", "s3cr3t-Value_42"
	t.Setenv(name, secret)
	// A stdio server that writes its arguments to standard error and
	// exits, and an HTTP server that refuses every request.
	command, args, env := mcptest.Command(map[string]string{mcptest.ServerEnv: mcptest.ServeExit})
	args = append(args, "--token=${"+name+"}")
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusBadRequest)
	}))
	defer hs.Close()
	mcp := writeMCPConfig(t, map[string]any{
		"s": map[string]any{"command": command, "args": args, "env": env},
		"w": map[string]any{"url": hs.URL + "/mcp?key=${" + name + "}"},
	})
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"run", []string{"run", "--provider", "emulator", "--mcp", mcp, "--no-session", "--metrics", "off", "Echo the text"}},
		{"run verbose", []string{"run", "-v", "--provider", "emulator", "--mcp", mcp, "--no-session", "--metrics", "off", "Echo the text"}},
		{"run verbose human", []string{"run", "-v", "--log-format", "human", "--provider", "emulator", "--mcp", mcp, "--no-session", "--metrics", "off", "Echo the text"}},
		{"run json log", []string{"run", "--log-format", "json", "--provider", "emulator", "--mcp", mcp, "--no-session", "--metrics", "off", "Echo the text"}},
		{"run json", []string{"run", "--json", "--provider", "emulator", "--mcp", mcp, "--no-session", "--metrics", "off", "Echo the text"}},
		{"mcp list", []string{"mcp", "list", "--mcp", mcp}},
		{"mcp list json", []string{"mcp", "list", "--json", "--mcp", mcp}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut := &watcher{}, &watcher{}
			Main(t.Context(), tc.args, strings.NewReader(""), out, errOut)
			all := out.String() + errOut.String()
			if strings.Contains(all, secret) {
				t.Errorf("the output shows the secret:\nstdout %s\nstderr %s", out.String(), errOut.String())
			}
			// Both failures are reported, with the reference in place of
			// the value.
			if n := strings.Count(all, "${"+name+"}"); n < 2 {
				t.Errorf("the output shows ${%s} %d times, want both servers' errors:\nstdout %s\nstderr %s", name, n, out.String(), errOut.String())
			}
		})
	}
}
