package provider

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/transcript"
)

// callToolDescription and callToolParameters declare the bridge's
// meta-tool. The description is static (no tool names or counts), so the
// head never changes.
const (
	callToolDescription = "Call a tool that was loaded during this conversation. Loaded tools are announced in " +
		"system updates with their name, description and JSON Schema; pass the tool's exact name and " +
		"an arguments object that matches its schema. Tools that are not loaded cannot be called: " +
		"load them with tool_search first."
	callToolParameters = `{"type":"object","properties":{"name":{"type":"string","description":"The loaded tool's exact name."},"arguments":{"type":"object","description":"The tool's arguments, matching its JSON Schema."}},"required":["name","arguments"],"additionalProperties":false}`
)

// CallTool returns the declaration of the bridge's meta-tool,
// [llm.CallToolName], as every bridge plan's head ends with it: a fresh
// value on each call, so a caller may change it freely.
func CallTool() llm.Tool {
	return llm.Tool{Name: llm.CallToolName, Description: callToolDescription, Parameters: json.RawMessage(callToolParameters)}
}

// buildBridge renders the bridge class: the head declares the initial
// tools and call_tool and never changes; each update lists the loaded
// tools' definitions as compact JSON in its text; assistant calls of
// tools outside the head are rewritten as call_tool calls.
func (p *Plan) buildBridge(msgs []llm.Message, rest int, initial []llm.Tool) {
	head := map[string]bool{}
	for _, t := range initial {
		if t.Name == llm.CallToolName {
			continue // the head's call_tool is the bridge's own
		}
		p.Tools = append(p.Tools, t)
		head[t.Name] = true
	}
	p.Tools = append(p.Tools, CallTool())
	p.addMessages(msgs[rest:], func(_ int, m *llm.Message) *Update {
		return &Update{Text: bridgeText(m)}
	})
	for i := range p.Items {
		m := p.Items[i].Message
		if m == nil || m.Role != llm.RoleAssistant {
			continue
		}
		if w, ok := wrapCalls(m, head); ok {
			p.Items[i].Message = w
		}
	}
}

// WithdrawnPrefix begins the line of a bridge update that names the tools
// it withdraws ("Tools no longer available: a, b.").
const WithdrawnPrefix = "Tools no longer available: "

// bridgeText is what a bridge update says: the update's own text, the
// definitions of the tools it loads and the names it withdraws.
func bridgeText(m *llm.Message) string {
	var parts []string
	if t := transcript.RenderUpdate(m); t != "" {
		parts = append(parts, t)
	}
	if len(m.ToolsAdded) > 0 {
		var b strings.Builder
		b.WriteString("Tools loaded. Call them with call_tool {\"name\": ..., \"arguments\": {...}}; each line is a tool's name, description and JSON Schema:")
		for _, t := range m.ToolsAdded {
			b.WriteByte('\n')
			b.Write(compactDefinition(t))
		}
		parts = append(parts, b.String())
	}
	if removed := withdrawn(m); len(removed) > 0 {
		parts = append(parts, WithdrawnPrefix+strings.Join(removed, ", ")+".")
	}
	return strings.Join(parts, "\n\n")
}

// compactDefinition writes {"name","description","parameters"} as compact
// JSON, the schema's key order kept.
func compactDefinition(t llm.Tool) []byte {
	return adapt.JSON(struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}{t.Name, t.Description, adapt.CompactSchema(t)})
}

// wrapCalls returns a copy of an assistant message whose calls of tools
// outside the bridge head are call_tool calls, and whether it changed.
func wrapCalls(m *llm.Message, head map[string]bool) (*llm.Message, bool) {
	var out *llm.Message
	for j, part := range m.Content {
		if part.Type != llm.PartToolCall || part.ToolCall == nil || head[part.ToolCall.Name] ||
			part.ToolCall.Name == llm.CallToolName { // one the runtime could not unwrap stays as written
			continue
		}
		if out == nil {
			c := m.Clone()
			out = &c
		}
		tc := *part.ToolCall
		var b bytes.Buffer
		b.WriteString(`{"name":`)
		b.Write(adapt.JSON(tc.Name))
		b.WriteString(`,"arguments":`)
		b.Write(adapt.ArgumentsObject(tc.Arguments))
		b.WriteByte('}')
		tc.Name, tc.Arguments = llm.CallToolName, b.Bytes()
		out.Content[j].ToolCall = &tc
	}
	return out, out != nil
}

// Unwrap turns a model's call_tool call into the call it stands for (same
// id, the named tool, the inner arguments), so the transcript records
// calls of real tools whatever the class. Other calls, and call_tool calls
// without a tool name, come back unchanged; the runtime answers the latter
// with an error that shows the expected shape. Plans of other classes
// unwrap nothing.
func (p *Plan) Unwrap(tc llm.ToolCall) llm.ToolCall {
	if p.Class != llm.ToolsBridge {
		return tc
	}
	return UnwrapCallTool(tc)
}

// UnwrapCallTool unwraps a call_tool call whatever the class; see
// Plan.Unwrap. Arguments given as a JSON string holding an object are
// accepted, as some models write them that way.
func UnwrapCallTool(tc llm.ToolCall) llm.ToolCall {
	if tc.Name != llm.CallToolName {
		return tc
	}
	var call struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(tc.Arguments, &call) != nil || strings.TrimSpace(call.Name) == "" {
		return tc
	}
	args := bytes.TrimSpace(call.Arguments)
	if len(args) > 0 && args[0] == '"' {
		var s string
		if json.Unmarshal(args, &s) == nil {
			args = []byte(strings.TrimSpace(s))
		}
	}
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte(`{}`)
	}
	return llm.ToolCall{ID: tc.ID, Name: call.Name, Arguments: json.RawMessage(bytes.Clone(args))}
}
