package mcpclient

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRegisteredSchemaBytes pins the parameter bytes registered for a
// listed tool: its input schema as the SDK decodes it and encoding/json
// writes it again (keys sorted, <, > and & escaped, numbers as float64
// writes them), with "type": "object" put first when missing.
func TestRegisteredSchemaBytes(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "a", Description: "A.", InputSchema: json.RawMessage(
		`{"type":"object","required":["z"],"properties":{"z":{"type":"string","description":"<b> & \u00e9","pattern":"^a+$"},` +
			`"a":{"type":"number","minimum":1.50,"maximum":1e3,"default":10}},"additionalProperties":false}`)}, noop)
	srv.AddTool(&mcp.Tool{Name: "b", Description: "B.", InputSchema: json.RawMessage(`{"properties":{"x":{}},"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"r":{"type":"integer"}}}`)}, noop)
	f := newFixture(t, memServer("s"))
	useMemServers(f.m, map[string]*mcp.Server{"s": srv})
	f.m.Start(f.ctx())
	f.waitAll()
	for name, want := range map[string]string{
		"mcp__s__a": `{"additionalProperties":false,"properties":{"a":{"default":10,"maximum":1000,"minimum":1.5,"type":"number"},` +
			`"z":{"description":"\u003cb\u003e \u0026 é","pattern":"^a+$","type":"string"}},"required":["z"],"type":"object"}`,
		"mcp__s__b": `{"properties":{"x":{}},"type":"object"}`,
	} {
		got, ok := f.reg.Get(name)
		if !ok {
			t.Fatalf("%s not registered: %v", name, f.reg.Tools())
		}
		if string(got.Parameters) != want {
			t.Errorf("%s parameters\n%s\nwant\n%s", name, got.Parameters, want)
		}
	}
}

// TestRawToolSchemas: the middleware writes a listed tool's decoded
// schemas as the JSON json.Marshal gives for them, leaves a missing
// output schema missing, and leaves other answers alone.
func TestRawToolSchemas(t *testing.T) {
	in := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string", "description": "a<b"}}}
	want, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	listed := &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "a", InputSchema: in}, nil, {Name: "b", InputSchema: in, OutputSchema: in}}}
	other := &mcp.ListPromptsResult{}
	h := rawToolSchemas(func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			return listed, nil
		}
		return other, nil
	})
	res, err := h(t.Context(), "tools/list", nil)
	if err != nil || res != listed {
		t.Fatalf("tools/list answered %v, %v", res, err)
	}
	for _, tl := range []*mcp.Tool{listed.Tools[0], listed.Tools[2]} {
		if raw, ok := tl.InputSchema.(json.RawMessage); !ok || string(raw) != string(want) {
			t.Errorf("%s input schema %#v, want %s", tl.Name, tl.InputSchema, want)
		}
	}
	if listed.Tools[0].OutputSchema != nil {
		t.Errorf("a missing output schema became %#v", listed.Tools[0].OutputSchema)
	}
	if raw, ok := listed.Tools[2].OutputSchema.(json.RawMessage); !ok || string(raw) != string(want) {
		t.Errorf("output schema %#v, want %s", listed.Tools[2].OutputSchema, want)
	}
	if res, err := h(t.Context(), "prompts/list", nil); err != nil || res != other {
		t.Errorf("prompts/list answered %v, %v", res, err)
	}
}
