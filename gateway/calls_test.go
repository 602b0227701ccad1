package gateway_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/tool"
)

// programGateway returns a gateway over a shelf of program tools, kept on
// the shelf as a gateway wants them.
func programGateway(t *testing.T, tools ...tool.Tool) *gateway.Gateway {
	t.Helper()
	for i := range tools {
		tools[i].Exposure = tool.Deferred
	}
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shelf.Close() })
	g, err := gateway.New(shelf, gateway.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

// refSiblingSchema is a draft-07 schema whose property a takes a string by
// reference and limits its length beside the reference. Draft-07 ignores
// a keyword beside $ref; providers, which read every schema as 2020-12,
// apply it, so a client's model has been told the limit holds.
const refSiblingSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s","maxLength":1}}}`

// TestGatewayRefusesWhatTheDeclaredSchemaForbids: through call_tool and
// through the direct surface, a call that breaks the limit beside the
// $ref gets an invalid-arguments error and does not run.
func TestGatewayRefusesWhatTheDeclaredSchemaForbids(t *testing.T) {
	var ran atomic.Int32
	g := programGateway(t, tool.Tool{Name: "short", Description: "Take a short string.", Parameters: json.RawMessage(refSiblingSchema),
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			ran.Add(1)
			return tool.TextResult("ran"), nil
		})})
	meta, direct := connect(t, g, gateway.Meta), connect(t, g, gateway.Direct)
	if text, isErr := call(t, meta, "call_tool", map[string]any{"name": "short", "arguments": map[string]any{"a": "long"}}); !isErr ||
		!strings.HasPrefix(text, "Invalid arguments for short: at /a: ") {
		t.Errorf("call_tool: %q (error %v), want an invalid-arguments error at /a", text, isErr)
	}
	if text, isErr := call(t, direct, "short", map[string]any{"a": "long"}); !isErr || !strings.HasPrefix(text, "Invalid arguments for short: at /a: ") {
		t.Errorf("direct: %q (error %v), want an invalid-arguments error at /a", text, isErr)
	}
	if n := ran.Load(); n != 0 {
		t.Fatalf("the tool ran %d times", n)
	}
	if text, isErr := call(t, meta, "call_tool", map[string]any{"name": "short", "arguments": map[string]any{"a": "x"}}); isErr || text != "ran" {
		t.Errorf("a call within the limit: %q (error %v)", text, isErr)
	}
}

// TestGatewaySurvivesAPanickingTool: a handler's panic is an error result
// on both surfaces that call tools, and the gateway goes on serving.
func TestGatewaySurvivesAPanickingTool(t *testing.T) {
	g := programGateway(t,
		tool.Tool{Name: "boom", Description: "Fail loudly.", Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			panic("kaboom")
		})},
		tool.Tool{Name: "calm", Description: "Answer quietly.", Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("fine"), nil
		})})
	meta, direct := connect(t, g, gateway.Meta), connect(t, g, gateway.Direct)
	for i := range 2 {
		if text, isErr := call(t, meta, "call_tool", map[string]any{"name": "boom"}); !isErr || text != "Tool boom failed: it panicked: kaboom" {
			t.Errorf("call_tool %d: %q (error %v)", i, text, isErr)
		}
		if text, isErr := call(t, direct, "boom", map[string]any{}); !isErr || text != "Tool boom failed: it panicked: kaboom" {
			t.Errorf("direct %d: %q (error %v)", i, text, isErr)
		}
	}
	if text, isErr := call(t, meta, "call_tool", map[string]any{"name": "calm"}); isErr || text != "fine" {
		t.Errorf("after the panics, call_tool: %q (error %v)", text, isErr)
	}
	if text, isErr := call(t, direct, "calm", map[string]any{}); isErr || text != "fine" {
		t.Errorf("after the panics, direct: %q (error %v)", text, isErr)
	}
}
