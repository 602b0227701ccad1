//go:build unix

package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// TestToolResultSecretsAreRedactedInEveryView: a real stdio server whose
// configuration takes a secret from the environment (into its env and its
// working folder) and whose tools echo it (getenv, cwd) never shows it:
// not in run's text or --json output, --select's output (the model's
// answer repeats what the tool returned), sessions show, sessions show
// --json, render, or any file the runs write (the session, the saved full
// output of a long result, the metrics log, the selection cache).
func TestToolResultSecretsAreRedactedInEveryView(t *testing.T) {
	const secret = "s3cr3t-Value_42-in-a-result"
	t.Setenv("TOOLSHELF_TEST_SECRET", secret)
	work := filepath.Join(t.TempDir(), secret)
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TOOLSHELF_TEST_SECRET_DIR", work)
	state, cache := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CACHE_HOME", cache)
	command, args, env := mcptest.Command(map[string]string{
		"TOKEN": "${TOOLSHELF_TEST_SECRET}",
		// Longer than a result may be: the full text is saved to a file.
		"BIG": strings.Repeat("x", mcpclient.MaxOutputBytes+100) + "${TOOLSHELF_TEST_SECRET}",
	})
	server := func(exposure string) map[string]any {
		return map[string]any{"command": command, "args": args, "env": env, "cwd": "${TOOLSHELF_TEST_SECRET_DIR}", "exposure": exposure}
	}
	// The scripted runs call the tools directly; --select selects from
	// deferred ones.
	mcp := writeMCPConfig(t, map[string]any{"t": server("direct")})
	deferred := writeMCPConfig(t, map[string]any{"t": server("deferred")})
	script := func() string {
		return writeScript(t,
			map[string]any{"tool_calls": []map[string]any{
				{"name": "mcp__t__getenv", "arguments": map[string]string{"name": "TOKEN"}},
				{"name": "mcp__t__getenv", "arguments": map[string]string{"name": "BIG"}},
				{"name": "mcp__t__cwd"},
			}},
			map[string]any{"text": "done"})
	}
	dir, metrics := t.TempDir(), filepath.Join(t.TempDir(), "metrics.jsonl")
	var outputs []string
	views := []struct {
		name string
		args []string
		want string // in stdout or stderr: the reference in place of the value
	}{
		{"run", []string{"run", "--provider", "emulator", "--mcp", mcp, "--session-dir", dir, "--metrics", metrics, "--script", script(), "Read the token"},
			"← mcp__t__getenv: ${TOOLSHELF_TEST_SECRET}"},
		{"run json", []string{"run", "--json", "--provider", "emulator", "--mcp", mcp, "--session-dir", dir, "--metrics", metrics, "--script", script(), "Read the token"},
			`"text":"${TOOLSHELF_TEST_SECRET}"`},
		// The stand-in model selects cwd and answers with what it returned.
		{"run select", []string{"run", "--select", "--provider", "emulator", "--mcp", deferred, "--session-dir", dir, "--metrics", metrics, "Return the working folder"},
			"mcp__t__cwd returned:\n${TOOLSHELF_TEST_SECRET_DIR}"},
		{"sessions show", []string{"sessions", "show", "--dir", dir, "last"}, "${TOOLSHELF_TEST_SECRET_DIR}"},
		{"sessions show json", []string{"sessions", "show", "--json", "--dir", dir, "last"}, "${TOOLSHELF_TEST_SECRET_DIR}"},
		{"render", []string{"render", "--model", "claude-opus-5-5", "--dir", dir, "last"}, "${TOOLSHELF_TEST_SECRET_DIR}"},
	}
	for _, v := range views {
		out, errOut := &watcher{}, &watcher{}
		code := Main(t.Context(), v.args, strings.NewReader(""), out, errOut)
		all := out.String() + errOut.String()
		outputs = append(outputs, all)
		if code != 0 {
			t.Fatalf("%s: exit %d:\n%s", v.name, code, all)
		}
		if strings.Contains(all, secret) {
			t.Errorf("%s shows the secret:\nstdout %s\nstderr %s", v.name, out.String(), errOut.String())
		}
		if !strings.Contains(all, v.want) {
			t.Errorf("%s: the output lacks %q:\nstdout %s\nstderr %s", v.name, v.want, out.String(), errOut.String())
		}
	}
	// The earlier sessions too, whole.
	out, errOut := &watcher{}, &watcher{}
	if code := Main(t.Context(), []string{"sessions", "list", "--dir", dir}, strings.NewReader(""), out, errOut); code != 0 || strings.Contains(out.String()+errOut.String(), secret) {
		t.Errorf("sessions list: exit %d:\n%s%s", code, out, errOut)
	}
	files := 0
	for _, root := range []string{dir, filepath.Dir(metrics), state, cache} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			if strings.Contains(string(data), secret) {
				t.Errorf("%s holds the secret", path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Three sessions, the metrics log, the saved output, the selection
	// cache: the runs wrote what the test reads.
	if files < 6 || !strings.Contains(strings.Join(outputs, ""), "the full output is in") {
		t.Errorf("%d files written; outputs:\n%s", files, strings.Join(outputs, "\n---\n"))
	}
}
