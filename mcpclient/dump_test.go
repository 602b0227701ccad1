package mcpclient

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// TestCatalogFile: a connected server's tools/list answer becomes a
// catalog file that package catalog reads back with every tool and the
// server's fields; a server that is not connected is an error that says
// why.
func TestCatalogFile(t *testing.T) {
	t.Parallel()
	mem := memServer("mem")
	mem.Description = "Test tools in memory."
	f := newFixture(t, mem, ServerConfig{Name: "ghost", Type: "stdio", Command: "toolshelf-no-such-command"})
	useMemServers(f.m, map[string]*mcp.Server{"mem": mcptest.NewServer("mem", "Use echo to test.")})
	f.m.Start(f.ctx())
	f.waitAll()
	data, err := f.m.CatalogFile(f.ctx(), "mem")
	if err != nil {
		t.Fatal(err)
	}
	s, err := catalog.Parse("mem.json", data)
	if err != nil {
		t.Fatalf("the dump does not parse: %v\n%s", err, data)
	}
	var names []string
	for _, lt := range s.Tools {
		names = append(names, lt.Name)
	}
	want := []string{"echo", "pid", "cwd", "getenv", "crash", "hang", "big", "mixed", "structured", "fail"}
	slices.Sort(want)
	slices.Sort(names)
	if s.Name != "mem" || s.Version != "1.0.0" || s.Description != "Test tools in memory." || s.Instructions != "Use echo to test." || !slices.Equal(names, want) {
		t.Errorf("read back: server %q version %q description %q instructions %q tools %v", s.Name, s.Version, s.Description, s.Instructions, names)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"serverInfo", "protocolVersion", "capabilities", "obtained_with"} {
		if _, ok := top[key]; !ok {
			t.Errorf("the dump has no %q: %s", key, data)
		}
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(top["tools"], &tools); err != nil || len(tools) == 0 {
		t.Fatalf("tools: %v", err)
	}
	for _, raw := range tools {
		if keys, _, err := objectEntries(raw); err != nil || keys[0] != "name" || keys[1] != "description" || keys[2] != "inputSchema" {
			t.Errorf("a tool's keys are %v, want name, description, inputSchema first", keys)
		}
	}
	if strings.Contains(string(top["obtained_with"]), "unused") {
		t.Errorf("obtained_with names the command: %s", top["obtained_with"])
	}
	if _, err := f.m.CatalogFile(f.ctx(), "ghost"); err == nil || !strings.Contains(err.Error(), `MCP server "ghost" (mcp.json) is not connected (failed): `) {
		t.Errorf("a failed server: %v", err)
	}
	if _, err := f.m.CatalogFile(f.ctx(), "nobody"); err == nil || !strings.Contains(err.Error(), `no MCP server "nobody"`) {
		t.Errorf("an unknown server: %v", err)
	}
}
