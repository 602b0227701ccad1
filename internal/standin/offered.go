package standin

import (
	"encoding/json"
	"strings"

	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// CallTool is the name of toolshelf's bridge meta-tool, as a model sees
// it.
const CallTool = llm.CallToolName

// Offered returns the tools one request puts in the model's reach, read
// from the request as the emulator decoded it (not from a transcript):
//
//   - direct: the tools the request declares, which the model may call by
//     name (name → JSON Schema of the parameters);
//   - bridged: when the request declares call_tool, the tools its bridge
//     updates describe, which the model calls through call_tool: the JSON
//     lines {"name", "description", "parameters"} in system or user text,
//     in order, minus the names a later "Tools no longer available: a, b."
//     line withdraws. Without call_tool it is empty.
//
// Both maps are non-nil.
func Offered(ex *emulator.Exchange) (direct, bridged map[string]json.RawMessage) {
	direct = map[string]json.RawMessage{}
	for _, t := range ex.Tools {
		direct[t.Name] = t.Parameters
	}
	bridged = map[string]json.RawMessage{}
	if _, ok := direct[CallTool]; !ok {
		return direct, bridged
	}
	for _, t := range ex.Turns {
		if t.Role != "system" && t.Role != "user" {
			continue
		}
		for line := range strings.Lines(t.Text) {
			line = strings.TrimSpace(line)
			if rest, ok := strings.CutPrefix(line, provider.WithdrawnPrefix); ok {
				for _, name := range strings.Split(strings.TrimSuffix(rest, "."), ", ") {
					delete(bridged, name)
				}
				continue
			}
			if name, params, ok := emulator.TextToolDefinition(line); ok {
				bridged[name] = params
			}
		}
	}
	return direct, bridged
}

// UnwrapCall returns the tool a call stands for and its arguments,
// seeing through call_tool as the runtime does (provider.UnwrapCallTool).
func UnwrapCall(c emulator.Call) (string, json.RawMessage) {
	tc := provider.UnwrapCallTool(llm.ToolCall{Name: c.Name, Arguments: c.Arguments})
	return tc.Name, tc.Arguments
}
