package emulator

import (
	"encoding/json"
	"strings"
)

// CallTool is the name of toolshelf's bridge meta-tool, as a model sees
// it.
const CallTool = "call_tool"

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
			if rest, ok := strings.CutPrefix(line, "Tools no longer available: "); ok {
				for _, name := range strings.Split(strings.TrimSuffix(rest, "."), ", ") {
					delete(bridged, name)
				}
				continue
			}
			if !strings.HasPrefix(line, "{") {
				continue
			}
			var def struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			}
			if json.Unmarshal([]byte(line), &def) == nil && def.Name != "" && len(def.Parameters) > 0 {
				bridged[def.Name] = def.Parameters
			}
		}
	}
	return declared, bridged
}
