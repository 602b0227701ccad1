package cli

import (
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// declared returns the names of declarations.
func declared(ts []llm.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// TestRunPrefetch: with --prefetch a prompt that names a tool on the shelf
// gets it declared from the first request, in an update after the head,
// and says so; --prefetch with --select is refused.
func TestRunPrefetch(t *testing.T) {
	t.Parallel()
	dir, mcp := t.TempDir(), testMCP(t, nil)
	code, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "--prefetch", "Call mcp__t__echo with the text hi")
	if code != 0 || !strings.HasPrefix(out, "mcp__t__echo returned:") {
		t.Fatalf("exit %d, stdout %q: %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "· prefetched for the prompt: mcp__t__echo") || strings.Contains(errOut, "tool_search(") {
		t.Errorf("stderr:\n%s", errOut)
	}
	msgs := checkConsistent(t, dir)
	if got := declared(msgs[0].ToolsAdded); strings.Join(got, " ") != toolsearch.Name {
		t.Errorf("the head declares %v, want tool_search alone", got)
	}
	if got := declared(msgs[1].ToolsAdded); strings.Join(got, " ") != "mcp__t__echo" {
		t.Errorf("the update after the head adds %v, want mcp__t__echo", got)
	}
	code, _, errOut = runAgent(t, agentRunOpts{}, "--mcp", mcp, "--no-session", "--prefetch", "--select", "hi")
	if code != 2 || !strings.Contains(errOut, "--prefetch and --select") {
		t.Errorf("--prefetch --select: exit %d:\n%s", code, errOut)
	}
}
