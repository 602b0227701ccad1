package provider

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
)

// FuzzUnwrap unwraps arbitrary call_tool calls and wraps arbitrary calls,
// as the bridge does with what the model writes. It must not panic. A call
// of another tool, and any call outside the bridge class, comes back
// unchanged; an unwrapped call keeps its id and names a tool; when the
// arguments are {"name": ..., "arguments": {...}} the call is that tool's
// with those arguments. A call the bridge wraps as call_tool (a tool
// outside the head) unwraps to the call with its arguments as the bridge
// sent them (adapt.ArgumentsObject).
func FuzzUnwrap(f *testing.F) {
	for _, c := range [][2]string{
		{"late_tool", `{"name":"late_tool","arguments":{"path":"a.txt"}}`},
		{"late_tool", `{"name":"late_tool","arguments":"{\"path\": \"a.txt\"}"}`},
		{"x", `{"name":"x","arguments":" \"{}\" "}`},
		{"x", `{"name":"x","arguments":null}`},
		{"x", `{"name":"x"}`},
		{" x ", `{"name":" ","arguments":{}}`},
		{"call_tool", `{"name":"call_tool","arguments":{"name":"y","arguments":{}}}`},
		{"<&>", `{"name":5}`},
		{"a\u2028b", `[]`},
		{"é\xff", `{"name":"x","arguments":{"a":1},"name":"y"}`},
		{"n", `{"name":"n","arguments":"not json"}`},
		{"n", `{"x": tru`},
		{"n", ``},
	} {
		f.Add(c[0], []byte(c[1]))
	}
	bridge := &Plan{Class: llm.ToolsBridge}
	other := &Plan{Class: llm.ToolsChanges}
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		plain := llm.ToolCall{ID: "id", Name: name, Arguments: json.RawMessage(args)}
		if got := other.Unwrap(plain); !reflect.DeepEqual(got, plain) {
			t.Fatalf("outside the bridge class %+v became %+v", plain, got)
		}
		if name != llm.CallToolName {
			if got := bridge.Unwrap(plain); !reflect.DeepEqual(got, plain) {
				t.Fatalf("a call of %q became %+v", name, got)
			}
		}

		// The model's call_tool call.
		wrapped := llm.ToolCall{ID: "id", Name: llm.CallToolName, Arguments: json.RawMessage(args)}
		got := bridge.Unwrap(wrapped)
		if got.ID != "id" {
			t.Fatalf("the unwrapped call has id %q", got.ID)
		}
		if !reflect.DeepEqual(got, wrapped) && (strings.TrimSpace(got.Name) == "" || len(got.Arguments) == 0) {
			t.Fatalf("%s unwrapped to a call without a name or arguments: %+v", args, got)
		}
		var call struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(args, &call) == nil && strings.TrimSpace(call.Name) != "" {
			inner := bytes.TrimSpace(call.Arguments)
			if len(inner) > 0 && inner[0] == '{' && (got.Name != call.Name || !bytes.Equal(got.Arguments, inner)) {
				t.Fatalf("%s unwrapped to %+v", args, got)
			}
		}

		// The bridge wraps a call of a tool outside the head; unwrapping
		// gives the call back.
		if name == llm.CallToolName || !utf8.ValidString(name) || strings.TrimSpace(name) == "" {
			return // left as written, or not a name JSON keeps
		}
		m := &llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, ToolCall: &plain}}}
		w, ok := wrapCalls(m, map[string]bool{"head_tool": name == "head_tool"})
		if name == "head_tool" {
			if ok {
				t.Fatal("a call of a head tool was wrapped")
			}
			return
		}
		if !ok {
			t.Fatalf("a call of %q was not wrapped", name)
		}
		sent := *w.Content[0].ToolCall
		if sent.Name != llm.CallToolName || !json.Valid(sent.Arguments) {
			t.Fatalf("wrapped as %+v", sent)
		}
		back := bridge.Unwrap(sent)
		want := llm.ToolCall{ID: "id", Name: name, Arguments: adapt.ArgumentsObject(args)}
		if !reflect.DeepEqual(back, want) {
			t.Fatalf("wrapped as %s and unwrapped to %+v, want %+v", sent.Arguments, back, want)
		}
		if !reflect.DeepEqual(*m.Content[0].ToolCall, plain) {
			t.Fatal("wrapping changed the transcript's message")
		}
	})
}
