//go:build unix

package cli

import (
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// TestRunSearchNamesAFailedServer: a server that failed to connect is
// named, with the reason, after tool_search's result, which otherwise
// would only say what it found.
func TestRunSearchNamesAFailedServer(t *testing.T) {
	t.Parallel()
	command, args, env := mcptest.Command(nil)
	cfg := writeMCPConfig(t, map[string]any{
		"t":    map[string]any{"command": command, "args": args, "env": env},
		"gone": map[string]any{"command": "toolshelf-no-such-command", "args": []string{"--key", "s3cr3t"}},
	})
	dir := t.TempDir()
	code, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", cfg, "--session-dir", dir, "--json", "Echo the text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	text, _, found := resultOf(checkConsistent(t, dir), "tool_search")
	note := `MCP server "gone" failed to connect (its command was not found); its tools cannot be searched or called.`
	if !found || !strings.HasSuffix(text, "\n"+note) || !strings.Contains(text, "mcp__t__echo") {
		t.Errorf("tool_search's result = %q, want the echo tool and then %q", text, note)
	}
	if strings.Contains(text, "s3cr3t") {
		t.Errorf("the note shows the server's arguments: %q", text)
	}
}
