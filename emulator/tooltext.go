package emulator

import (
	"encoding/json"
	"strings"
)

// TextToolDefinition reads a line of prompt text that defines a tool as a
// JSON object with a name and parameters, {"name": ..., "parameters": ...}
// (a description may come too), as a client that declares tools in text
// writes them. ok is false for any other line. Record.ToolTokens counts
// such lines as tool definitions.
func TextToolDefinition(line string) (name string, parameters json.RawMessage, ok bool) {
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
