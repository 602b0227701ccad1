package standin

import (
	"encoding/json"
	"testing"

	"github.com/toolshelf/toolshelf/emulator"
)

// Offered reads the tools a bridge update loads from its JSON lines
// and drops those a later update withdraws.
func TestOfferedReadsBridgeUpdates(t *testing.T) {
	ex := &emulator.Exchange{
		Tools: []emulator.ToolDef{{Name: "tool_search"}, {Name: "call_tool", Parameters: json.RawMessage(`{}`)}},
		Turns: []emulator.Turn{
			{Role: "user", Text: "<system-update>\nTools loaded. ...\n{\"name\":\"a\",\"description\":\"A\",\"parameters\":{\"type\":\"object\"}}\n{\"name\":\"b\",\"parameters\":{}}\n</system-update>"},
			{Role: "system", Text: "Tools no longer available: a."},
		},
	}
	direct, bridged := Offered(ex)
	if _, ok := direct["call_tool"]; !ok {
		t.Error("call_tool not declared")
	}
	if _, ok := bridged["a"]; ok {
		t.Error("a was withdrawn")
	}
	if _, ok := bridged["b"]; !ok {
		t.Errorf("b not read from the update: %v", bridged)
	}
}
