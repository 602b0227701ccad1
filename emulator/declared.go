package emulator

import (
	"encoding/json"
	"strings"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// CallTool is the name of toolshelf's bridge meta-tool, as a model sees
// it.
const CallTool = llm.CallToolName

// DeclaredTools returns the tools a request lets the model call directly
// (name → schema) and, when it declares call_tool, those its bridge
// updates describe: JSON lines {"name", "description", "parameters"} in
// system or user text, minus the names a later "Tools no longer
// available: a, b." withdraws.
func DeclaredTools(ex *Exchange) (declared, bridged map[string]json.RawMessage) {
	declared = map[string]json.RawMessage{}
	for _, t := range ex.Tools {
		declared[t.Name] = t.Parameters
	}
	bridged = map[string]json.RawMessage{}
	if _, ok := declared[CallTool]; !ok {
		return declared, bridged
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
			if name, params, ok := bridgeDefinition(line); ok {
				bridged[name] = params
			}
		}
	}
	return declared, bridged
}

// bridgeDefinition reads a line of a bridge update that defines a tool:
// {"name": ..., "parameters": ...} (a description may come too).
func bridgeDefinition(line string) (name string, params json.RawMessage, ok bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "{") || !strings.Contains(line, `"parameters"`) {
		return "", nil, false
	}
	var def struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	}
	if json.Unmarshal([]byte(line), &def) != nil || def.Name == "" || len(def.Parameters) == 0 {
		return "", nil, false
	}
	return def.Name, def.Parameters, true
}
