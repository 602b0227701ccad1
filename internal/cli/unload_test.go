package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tokens"
)

// TestToolBudgetUnloads checks run --tool-budget: with room for
// tool_search and one tool, loading a second tool puts the first back on
// the shelf, which the transcript declares as a removal and the run notes.
func TestToolBudgetUnloads(t *testing.T) {
	t.Parallel()
	call := func(name, args string) map[string]any {
		return map[string]any{"tool_calls": []map[string]any{{"name": name, "arguments": json.RawMessage(args)}}}
	}
	script := writeScript(t,
		call("tool_search", `{"query":"select:mcp__t__echo"}`), call("mcp__t__echo", `{"text":"one"}`),
		call("tool_search", `{"query":"select:mcp__t__pid"}`), call("mcp__t__pid", `{}`),
		map[string]any{"text": "Both ran."})
	// A run without a budget measures the definitions.
	exit, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", testMCP(t, nil), "--no-session", "--metrics", "off",
		"--script", script, "--json", "echo then pid")
	if exit != 0 {
		t.Fatalf("exit %d: %s", exit, errOut)
	}
	counter, err := tokens.Default()
	if err != nil {
		t.Fatal(err)
	}
	size := map[string]int{}
	for _, e := range parseEvents(t, out) {
		if e.Type == "message" && e.Message.Role == llm.RoleSystem {
			for _, d := range e.Message.ToolsAdded {
				size[d.Name] = counter.Tool(d)
			}
		}
	}
	budget := size["tool_search"] + max(size["mcp__t__echo"], size["mcp__t__pid"])
	if size["tool_search"] == 0 || size["mcp__t__echo"] == 0 || size["mcp__t__pid"] == 0 {
		t.Fatalf("definitions %v", size)
	}
	exit, out, errOut = runAgent(t, agentRunOpts{}, "--mcp", testMCP(t, nil), "--no-session", "--metrics", "off",
		"--script", script, "--tool-budget", strconv.Itoa(budget), "--json", "echo then pid")
	if exit != 0 {
		t.Fatalf("exit %d: %s", exit, errOut)
	}
	var removed []string
	for _, e := range parseEvents(t, out) {
		if e.Type == "message" && e.Message.Role == llm.RoleSystem {
			for _, r := range e.Message.ToolsRemoved {
				removed = append(removed, r.Name)
			}
		}
	}
	if noted := strings.Contains(out, `"type":"note"`) && strings.Contains(out, "unloaded 1 tools"); strings.Join(removed, " ") != "mcp__t__echo" || !noted {
		t.Errorf("removed %v, noted %v:\n%s", removed, noted, out)
	}
}
