package mcpclient

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// TestRefusedToolsAreSkipped checks that tools a provider would reject —
// a pattern that is not a regular expression, a dangling, remote or
// self-referencing $ref, a megabyte description — are not registered,
// each with a warning naming the server, the tool and the reason, while
// the server's other tools register and work.
func TestRefusedToolsAreSkipped(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewServer("shaky", "")
	schema := func(props map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": props}
	}
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	bad := map[string]*mcp.Tool{
		"regex":    {Description: "Bad pattern.", InputSchema: schema(map[string]any{"q": map[string]any{"type": "string", "pattern": "(((("}})},
		"dangling": {Description: "Dangling ref.", InputSchema: schema(map[string]any{"a": map[string]any{"$ref": "#/$defs/missing"}})},
		"remote":   {Description: "Remote ref.", InputSchema: schema(map[string]any{"a": map[string]any{"$ref": "https://example.com/a.json"}})},
		"loop":     {Description: "Self ref.", InputSchema: map[string]any{"type": "object", "$ref": "#"}},
		"wordy":    {Description: strings.Repeat("w", 1<<20), InputSchema: schema(nil)},
	}
	for name, tl := range bad {
		tl.Name = name
		srv.AddTool(tl, noop)
	}
	f := newFixture(t, memServer("shaky"))
	useMemServers(f.m, map[string]*mcp.Server{"shaky": srv})
	f.m.Start(f.ctx())
	f.waitAll()
	if st := f.status("shaky"); st.State != Connected || st.Tools != mcptest.Tools {
		t.Fatalf("status = %+v, want connected with the %d good tools", st, mcptest.Tools)
	}
	for name := range bad {
		if _, ok := f.reg.Get("mcp__shaky__" + name); ok {
			t.Errorf("%s was registered", name)
		}
	}
	if got := text(f.call("mcp__shaky__echo", `{"text":"still here"}`)); got != "echo: still here" {
		t.Errorf("echo = %q", got)
	}
	reasons := map[string]string{
		"regex":    "at /properties/q/pattern: '((((' is not valid regex",
		"dangling": `$ref \"#/$defs/missing\" points to nothing in the schema`,
		"remote":   "points to another document",
		"loop":     "references loop",
		"wordy":    "the description is 1048576 bytes; at most 16384",
	}
	lines := strings.Split(f.log.String(), "\n")
	for name, reason := range reasons {
		found := false
		for _, l := range lines {
			if strings.Contains(l, "level=WARN") && strings.Contains(l, `msg="tool skipped"`) && strings.Contains(l, "server=shaky") &&
				strings.Contains(l, "tool="+name) && strings.Contains(l, reason) {
				found = true
				if len(l) > 1500 {
					t.Errorf("the warning for %s is %d bytes long", name, len(l))
				}
			}
		}
		if !found {
			t.Errorf("no warning naming server shaky, tool %s and %q in:\n%.3000s", name, reason, f.log.String())
		}
	}
	// The registry never saw them either: no second warning per tool.
	if n := strings.Count(f.log.String(), "tool=regex"); n != 1 {
		t.Errorf("regex is mentioned %d times", n)
	}
	if f.reg.Len() != mcptest.Tools {
		t.Errorf("%d tools registered, want %d", f.reg.Len(), mcptest.Tools)
	}
}
