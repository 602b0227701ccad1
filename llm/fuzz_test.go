package llm_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolshelf/toolshelf/llm"
)

// FuzzMessageJSON decodes arbitrary bytes as a message, the way sessions
// and tool results are read back. Decoding must not panic; a message it
// accepts must encode, and its encoding must read back as a message that
// encodes to the same bytes (one round trip reaches the fixed point),
// with the same role, timestamp and content (the text parts of a system
// message joined, as its encoding writes them) and, when the decoded
// message was valid, still valid.
func FuzzMessageJSON(f *testing.F) {
	params := json.RawMessage(`{"type":"object","properties":{"z":{},"a":{}}}`)
	for _, m := range []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("base"), llm.Text("more")}, Sections: llm.Sections{llm.Set("b", "2"),
			llm.Delete("a"), llm.Set("c", "")}, ToolsAdded: []llm.Tool{{Name: "t", Description: "d <&>", Parameters: params,
			ConstrainedSampling: json.RawMessage(`{"grammar":"x"}`)}}, ToolsRemoved: []llm.ToolRef{{Name: "old"}}, Timestamp: 5},
		{Role: llm.RoleSystem, Replace: true},
		llm.UserText("hi \u2028 <b>", 6),
		{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage, MIMEType: "image/png", Data: []byte{0, 1, 2, 255}}}},
		{Role: llm.RoleAssistant, Content: []llm.Part{
			{Type: llm.PartThinking, Text: "hmm", Signature: "sig"},
			{Type: llm.PartThinking, Redacted: true, Signature: "opaque"},
			llm.Text("ok"),
			{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "c1", Name: "t", Arguments: json.RawMessage(`{"b":1, "a":2}`)}},
			{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "c2", Name: "t", Arguments: json.RawMessage(`{"x": tru`)}},
			{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "c3", Name: "t"}},
		}, StopReason: llm.StopToolUse, Usage: &llm.Usage{Input: 10, Output: 2, CacheRead: 100, CacheWrite: 5}, Model: "m",
			ErrorMessage: "e", Timestamp: 7},
		{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "t", IsError: true, Content: []llm.Part{llm.Text("boom")},
			Details: json.RawMessage(`{"loaded": ["x"]}`), Timestamp: 8},
	} {
		b, err := json.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"role":"user","content":"plain","timestamp":1}`,
		`{"role":"user","content":5}`, `{"role":"user","content":null}`, `{"role":"user","content":""}`,
		`{"role":"system","content":"a","sections":{"a":"1","a":null,"b":"2"}}`, `{"role":"system","sections":[1]}`,
		`{"role":"system","sections":null}`, `{"role":"system","sections":{}}`, `{"role":"system","sections":{"a":1}}`,
		`{"role":"user","content":[{"type":"video"}]}`, `{"role":"user","content":[{"type":"image","data":"!"}]}`,
		`{"role":"system","toolsAdded":[{"name":"t","parameters":[]}]}`, `{"role":"system","toolsAdded":[{"name":"","parameters":null}]}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"n","rawArguments":"{\"x\": tru"}]}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"1","name":"n","arguments":"\"q\""}]}`,
		`{"role":"assistant","content":[{"type":"toolCall"},{"type":"text"},{"type":"thinking"}]}`,
		`{"role":"toolResult","content":[{"type":"text","text":"x"}],"details":{ "k" : 1 }}`,
		`{"role":"bogus","timestamp":-1}`, `{"role":"user","timestamp":1e3}`, `{"role":"user","content":[],"usage":{"input":-1}}`,
		"{\"role\":\"user\",\"content\":\"\xff\xfe\",\"model\":\"\\ud800\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m llm.Message
		if json.Unmarshal(data, &m) != nil {
			return
		}
		valid := m.Validate() == nil
		b1, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("a decoded message does not encode: %v\n%+v", err, m)
		}
		var m2 llm.Message
		if err := json.Unmarshal(b1, &m2); err != nil {
			t.Fatalf("an encoded message does not decode: %v\n%s", err, b1)
		}
		b2, err := json.Marshal(m2)
		if err != nil {
			t.Fatalf("the message read back does not encode: %v\n%+v", err, m2)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("encoding is not stable:\n%s\n%s", b1, b2)
		}
		if valid && m2.Validate() != nil {
			t.Fatalf("a valid message reads back invalid: %v\n%s", m2.Validate(), b1)
		}
		if m2.Role != m.Role || m2.Timestamp != m.Timestamp {
			t.Fatalf("role or timestamp changed: %q %d → %q %d", m.Role, m.Timestamp, m2.Role, m2.Timestamp)
		}
		if m.Role == llm.RoleSystem {
			if got, want := llm.ContentText(m2.Content, "\n"), llm.ContentText(m.Content, "\n"); got != want {
				t.Fatalf("system text %q reads back as %q", want, got)
			}
			if diff := cmp.Diff(m.Sections, m2.Sections, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("sections changed (-before +after):\n%s", diff)
			}
			return
		}
		// Arguments are written as given (compacted when they are JSON;
		// {} when empty), so compare them as JSON values.
		args := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Arguments" }, cmp.Transformer("args", func(r json.RawMessage) any {
			if len(bytes.TrimSpace(r)) == 0 {
				return map[string]any{}
			}
			var v any
			if json.Unmarshal(r, &v) != nil {
				return string(r)
			}
			return v
		}))
		if diff := cmp.Diff(m.Content, m2.Content, cmpopts.EquateEmpty(), args); diff != "" {
			t.Fatalf("content changed (-before +after):\n%s\n%s", diff, b1)
		}
	})
}
