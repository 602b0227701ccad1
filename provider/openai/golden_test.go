package openai

import (
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// Capabilities of the reference's transcript tests, mapped onto classes.
var (
	respAdditionalTools = provider.Capabilities{Tools: llm.ToolsAdditions, MidConversationText: true,
		Anchor: provider.AnchorAdditionalTools, DeveloperRole: true}
	respToolSearch = provider.Capabilities{Tools: llm.ToolsAdditions, MidConversationText: true,
		Anchor: provider.AnchorToolSearch, DeveloperRole: true}
	respNoMidConversation = provider.Capabilities{Tools: llm.ToolsAdditions, Anchor: provider.AnchorAdditionalTools,
		DeveloperRole: true}
	respText        = provider.Capabilities{Tools: llm.ToolsText, MidConversationText: true}
	respBreakpoints = provider.Capabilities{Tools: llm.ToolsAdditions, MidConversationText: true,
		Anchor: provider.AnchorToolSearch, DeveloperRole: true, CacheBreakpoints: true}
	respBridge       = provider.Capabilities{Tools: llm.ToolsBridge, MidConversationText: true, DeveloperRole: true}
	respBridgeAsUser = provider.Capabilities{Tools: llm.ToolsBridge, DeveloperRole: true}

	chatSystemTools = provider.Capabilities{Tools: llm.ToolsAdditions, MidConversationText: true,
		Anchor: provider.AnchorSystemTools}
	chatText         = provider.Capabilities{Tools: llm.ToolsText, MidConversationText: true}
	chatNone         = provider.Capabilities{Tools: llm.ToolsNone}
	chatBridge       = provider.Capabilities{Tools: llm.ToolsBridge, MidConversationText: true}
	chatBridgeAsUser = provider.Capabilities{Tools: llm.ToolsBridge}
)

type goldenCase struct {
	name  string
	api   provider.API
	caps  provider.Capabilities
	msgs  []llm.Message
	max   int
	check func(t *testing.T, body map[string]any)
}

// TestRequestBodies renders transcripts and compares the bodies with the
// golden files, then checks what each case is about.
func TestRequestBodies(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			a := newAdapter(t, tc.api, "test-model", tc.caps, "http://127.0.0.1:1")
			body, err := a.RequestBody(&llm.Request{Messages: tc.msgs, MaxTokens: tc.max})
			if err != nil {
				t.Fatalf("RequestBody: %v", err)
			}
			checkGolden(t, tc.name, body)
			tc.check(t, decode(t, body))
		})
	}
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{
			// pi case 5: additions anchored at their developer message.
			name: "responses_5_additional_tools", api: provider.OpenAIResponses, caps: respAdditionalTools, msgs: piTranscript(),
			check: func(t *testing.T, b map[string]any) {
				equal(t, "tools", toolNames(b["tools"]), []string{"base_tool"})
				equal(t, "input", labels(b["input"]), []string{"developer", "user", "additional_tools", "developer"})
				equal(t, "developer texts", contents(b["input"], "developer"), []any{"base prompt", "updated guidance"})
				item := b["input"].([]any)[2].(map[string]any)
				equal(t, "additional_tools role", item["role"], any("developer"))
				equal(t, "additional tools", toolNames(item["tools"]), []string{"late_tool"})
			},
		},
		{
			// pi case 6: additions as a completed client tool search.
			name: "responses_6_tool_search", api: provider.OpenAIResponses, caps: respToolSearch, msgs: piTranscript(),
			check: func(t *testing.T, b map[string]any) {
				equal(t, "tools", toolNames(b["tools"]), []string{"base_tool"})
				equal(t, "input", labels(b["input"]), []string{"developer", "user", "tool_search_call", "tool_search_output", "developer"})
				in := b["input"].([]any)
				call, out := in[2].(map[string]any), in[3].(map[string]any)
				id := "toolshelf_load_" + shortHash("system:2:late_tool")
				equal(t, "call", call, map[string]any{"type": "tool_search_call", "call_id": id, "execution": "client",
					"status": "completed", "arguments": map[string]any{"query": "late_tool", "limit": 1.0}})
				equal(t, "output call_id", out["call_id"], any(id))
				equal(t, "output execution, status", []any{out["execution"], out["status"]}, []any{"client", "completed"})
				tools := out["tools"].([]any)
				equal(t, "loaded tools", toolNames(tools), []string{"late_tool"})
				equal(t, "defer_loading", tools[0].(map[string]any)["defer_loading"], any(true))
			},
		},
		{
			// gpt-5.6 and later: explicit breakpoints at the end of the head
			// and of the request; a load without text gets a short
			// instruction to carry the last one.
			name: "responses_cache_breakpoints", api: provider.OpenAIResponses, caps: respBreakpoints,
			msgs: []llm.Message{head("base prompt", baseTool), user("hello"), systemUpdate("", []llm.Tool{lateTool})},
			check: func(t *testing.T, b map[string]any) {
				equal(t, "input", labels(b["input"]), []string{"developer", "user", "tool_search_call", "tool_search_output", "developer"})
				in := b["input"].([]any)
				marked := func(i int) bool {
					parts, ok := in[i].(map[string]any)["content"].([]any)
					if !ok || len(parts) == 0 {
						return false
					}
					_, ok = parts[len(parts)-1].(map[string]any)["prompt_cache_breakpoint"]
					return ok
				}
				if !marked(0) || marked(1) || !marked(4) {
					t.Errorf("breakpoints: head %v, user %v, last %v; want the head and the last", marked(0), marked(1), marked(4))
				}
				equal(t, "load text", in[4].(map[string]any)["content"].([]any)[0].(map[string]any)["text"], any("Tools loaded: late_tool."))
			},
		},
		{
			// pi case 7: no mid-conversation text: everything collapses.
			name: "responses_7_collapse", api: provider.OpenAIResponses, caps: respNoMidConversation, msgs: piTranscript(),
			check: func(t *testing.T, b map[string]any) {
				equal(t, "input", labels(b["input"]), []string{"developer", "user"})
				equal(t, "developer texts", contents(b["input"], "developer"), []any{"base prompt\n\nupdated guidance"})
				equal(t, "tools", toolNames(b["tools"]), []string{"base_tool", "late_tool"})
			},
		},
		{
			// pi case 8: a removal promotes the current set to the top level.
			name: "responses_8_promote", api: provider.OpenAIResponses, caps: respAdditionalTools,
			msgs: []llm.Message{
				head("base prompt", baseTool, oldTool),
				user("hello"),
				systemUpdate("updated guidance", []llm.Tool{lateTool}, "old_tool"),
			},
			check: func(t *testing.T, b map[string]any) {
				equal(t, "tools", toolNames(b["tools"]), []string{"base_tool", "late_tool"})
				equal(t, "input", labels(b["input"]), []string{"developer", "user", "developer"})
				equal(t, "developer texts", contents(b["input"], "developer"), []any{"base prompt", "updated guidance"})
			},
		},
		{
			// pi case 9: Kimi's tool-bearing system message.
			name: "chat_9_system_tools", api: provider.OpenAIChat, caps: chatSystemTools, msgs: piTranscript(),
			check: func(t *testing.T, b map[string]any) {
				equal(t, "tools", toolNames(b["tools"]), []string{"base_tool"})
				equal(t, "messages", labels(b["messages"]), []string{"system", "user", "system:tools", "system"})
				equal(t, "system contents", contents(b["messages"], "system"), []any{"base prompt", nil, "updated guidance"})
				equal(t, "system tools", toolNames(b["messages"].([]any)[2].(map[string]any)["tools"]), []string{"late_tool"})
			},
		},
		{
			// pi case 10: mid-conversation text only: the full list on top.
			name: "chat_10_text", api: provider.OpenAIChat, caps: chatText, msgs: piTranscript(),
			check: func(t *testing.T, b map[string]any) {
				equal(t, "tools", toolNames(b["tools"]), []string{"base_tool", "late_tool"})
				equal(t, "messages", labels(b["messages"]), []string{"system", "user", "system"})
				equal(t, "system contents", contents(b["messages"], "system"), []any{"base prompt", "updated guidance"})
			},
		},
		{
			// pi case 11: no support: everything folds into the head.
			name: "chat_11_none", api: provider.OpenAIChat, caps: chatNone, msgs: piTranscript(),
			check: func(t *testing.T, b map[string]any) {
				equal(t, "messages", labels(b["messages"]), []string{"system", "user"})
				equal(t, "system contents", contents(b["messages"], "system"), []any{"base prompt\n\nupdated guidance"})
				equal(t, "tools", toolNames(b["tools"]), []string{"base_tool", "late_tool"})
			},
		},
		{
			name: "responses_bridge", api: provider.OpenAIResponses, caps: respBridge, msgs: bridgeTranscript(),
			check: func(t *testing.T, b map[string]any) {
				equal(t, "tools", toolNames(b["tools"]), []string{"base_tool", "call_tool"})
				equal(t, "input", labels(b["input"]), []string{"developer", "user", "developer", "function_call", "function_call_output", "user"})
				checkBridgeText(t, contents(b["input"], "developer")[1])
				fc := b["input"].([]any)[3].(map[string]any)
				equal(t, "wrapped call", []any{fc["call_id"], fc["name"], fc["arguments"]},
					[]any{"call_1", "call_tool", `{"name":"late_tool","arguments":{"path":"/tmp/x"}}`})
			},
		},
		{
			name: "responses_bridge_as_user", api: provider.OpenAIResponses, caps: respBridgeAsUser, msgs: bridgeTranscript(),
			check: func(t *testing.T, b map[string]any) {
				equal(t, "input", labels(b["input"]), []string{"developer", "user", "user", "function_call", "function_call_output", "user"})
				text := b["input"].([]any)[2].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
				if !strings.HasPrefix(text, "<system-update>\n") || !strings.HasSuffix(text, "\n</system-update>") {
					t.Errorf("update as user text = %q, want it wrapped in <system-update>", text)
				}
				checkBridgeText(t, text)
			},
		},
		{
			name: "chat_bridge", api: provider.OpenAIChat, caps: chatBridge, msgs: bridgeTranscript(),
			check: func(t *testing.T, b map[string]any) {
				equal(t, "tools", toolNames(b["tools"]), []string{"base_tool", "call_tool"})
				equal(t, "messages", labels(b["messages"]), []string{"system", "user", "system", "assistant", "tool", "user"})
				checkBridgeText(t, contents(b["messages"], "system")[1])
				tc := b["messages"].([]any)[3].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
				equal(t, "wrapped call", tc, map[string]any{"id": "call_1", "type": "function", "function": map[string]any{
					"name": "call_tool", "arguments": `{"name":"late_tool","arguments":{"path":"/tmp/x"}}`}})
			},
		},
		{
			name: "chat_bridge_as_user", api: provider.OpenAIChat, caps: chatBridgeAsUser, msgs: bridgeTranscript(),
			check: func(t *testing.T, b map[string]any) {
				equal(t, "messages", labels(b["messages"]), []string{"system", "user", "user", "assistant", "tool", "user"})
				text := contents(b["messages"], "user")[1].(string)
				if !strings.HasPrefix(text, "<system-update>\n") {
					t.Errorf("update as user text = %q, want it wrapped in <system-update>", text)
				}
				checkBridgeText(t, text)
			},
		},
		{
			name: "responses_conversation", api: provider.OpenAIResponses, caps: respText, msgs: conversation(), max: 1000,
			check: func(t *testing.T, b map[string]any) {
				equal(t, "max_output_tokens", b["max_output_tokens"], any(1000.0))
				equal(t, "input", labels(b["input"]), []string{"system", "user", "reasoning", "assistant", "function_call",
					"function_call_output", "assistant", "user"})
				equal(t, "replayed reasoning id", b["input"].([]any)[2].(map[string]any)["id"], any("rs_1"))
				out := b["input"].([]any)[5].(map[string]any)["output"].([]any)
				equal(t, "tool output parts", labels(out), []string{"input_text", "input_image"})
			},
		},
		{
			name: "chat_conversation", api: provider.OpenAIChat, caps: chatText, msgs: conversation(), max: 1000,
			check: func(t *testing.T, b map[string]any) {
				equal(t, "max_completion_tokens", b["max_completion_tokens"], any(1000.0))
				equal(t, "stream_options", b["stream_options"], any(map[string]any{"include_usage": true}))
				equal(t, "messages", labels(b["messages"]), []string{"system", "user", "assistant", "tool", "user", "assistant", "user"})
				equal(t, "assistant contents", contents(b["messages"], "assistant"), []any{"Let me search.", "Done."})
			},
		},
	}
}

// bridgeTranscript loads late_tool mid-conversation and calls it.
func bridgeTranscript() []llm.Message {
	return []llm.Message{
		head("base prompt", baseTool),
		user("load the late tool"),
		systemUpdate("", []llm.Tool{lateTool}),
		assistant("test-model", call("call_1", "late_tool", `{"path": "/tmp/x"}`)),
		result("call_1", "late_tool", llm.Text("done")),
		user("thanks"),
	}
}

// checkBridgeText checks that a bridge update describes late_tool in
// compact JSON with its schema's key order.
func checkBridgeText(t *testing.T, text any) {
	t.Helper()
	s, _ := text.(string)
	def := `{"name":"late_tool","description":"Late tool.","parameters":` + lateSchema + `}`
	if !strings.Contains(s, def) || !strings.Contains(s, "call_tool") {
		t.Errorf("bridge update text = %q, want the compact definition %s and how to call it", s, def)
	}
}

// conversation is a transcript with images, a tool round trip, this
// model's reasoning and another model's.
func conversation() []llm.Message {
	image := llm.Part{Type: llm.PartImage, MIMEType: "image/png", Data: []byte("png-bytes")}
	own := `{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Think."}],"encrypted_content":"enc"}`
	other := `{"type":"reasoning","id":"rs_2","summary":[]}`
	return []llm.Message{
		head("You are helpful.", baseTool),
		{Role: llm.RoleUser, Content: []llm.Part{llm.Text("What is in this image?"), image}},
		assistant("test-model", llm.Part{Type: llm.PartThinking, Text: "Think.", Signature: own},
			llm.Text("Let me search."), call("call_1", "base_tool", `{"query": "cat"}`)),
		result("call_1", "base_tool", llm.Text("found"), image),
		assistant("other-model", llm.Part{Type: llm.PartThinking, Text: "Other.", Signature: other}, llm.Text("Done.")),
		user("thanks"),
	}
}

// TestSchemaBytes checks that each tool's schema is sent as the
// transcript's bytes, key order and characters kept (no HTML escaping).
func TestSchemaBytes(t *testing.T) {
	tests := []struct {
		api  provider.API
		caps provider.Capabilities
		want []string
	}{
		{provider.OpenAIResponses, respAdditionalTools, []string{
			`{"type":"function","name":"base_tool","description":"Base tool.","parameters":` + baseSchema + `,"strict":false}`,
			`{"type":"function","name":"late_tool","description":"Late tool.","parameters":` + lateSchema + `,"strict":false}`,
		}},
		{provider.OpenAIResponses, respToolSearch, []string{
			`{"type":"function","name":"late_tool","description":"Late tool.","parameters":` + lateSchema + `,"strict":false,"defer_loading":true}`,
		}},
		{provider.OpenAIChat, chatSystemTools, []string{
			`{"type":"function","function":{"name":"base_tool","description":"Base tool.","parameters":` + baseSchema + `}}`,
			`{"role":"system","tools":[{"type":"function","function":{"name":"late_tool","description":"Late tool.","parameters":` + lateSchema + `}}]}`,
		}},
	}
	for _, tt := range tests {
		a := newAdapter(t, tt.api, "test-model", tt.caps, "http://127.0.0.1:1")
		body, err := a.RequestBody(&llm.Request{Messages: piTranscript()})
		if err != nil {
			t.Fatalf("%s: %v", tt.api, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("%s %s body lacks %s:\n%s", tt.api, tt.caps.Anchor, w, body)
			}
		}
	}
}
