package anthropic

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// The declarations of the cases. late_tool's schema lists its keys in an
// unusual order and holds characters JSON encoders like to escape, to show
// the schema is passed through.
var (
	baseTool = decl("base_tool", "Look something up.",
		`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	lateTool = decl("late_tool", "Read a file.",
		`{"required":["path"], "properties":{"path":{"type":"string","description":"A <relative> path & name."},"mode":{"enum":["r","w"]}},"type":"object"}`)
	bareTool = llm.Tool{Name: "bare_tool", Description: "No parameters."}
)

var (
	changesCaps = provider.Capabilities{Tools: llm.ToolsChanges, MidConversationText: true, CacheControlOnTools: true, LongCacheRetention: true}
	bridgeCaps  = provider.Capabilities{Tools: llm.ToolsBridge, MidConversationText: true, CacheControlOnTools: true}
)

// The transcripts of the cases.
var (
	docsHead = head("base prompt", llm.Sections{llm.Set("docs", "Docs: read the manual first.")}, baseTool)
	// nativeUpdate is pi's case 1: an update with text, a new section, a
	// deleted section, a removal and an addition.
	nativeUpdate = []llm.Message{
		docsHead,
		user("hi"),
		update("updated guidance", llm.Sections{llm.Set("style", "Answer briefly."), llm.Delete("docs")},
			[]llm.Tool{lateTool}, "base_tool"),
	}
	bridgeLoaded = []llm.Message{
		head("base prompt", nil, baseTool),
		user("find the file"),
		assistant(callPart("toolu_01", "base_tool", `{"q":"file"}`)),
		result("toolu_01", "base_tool", llm.Text("found it")),
		update("", nil, []llm.Tool{lateTool}),
	}
)

type renderCase struct {
	name  string
	cfg   Config
	msgs  []llm.Message
	class llm.ToolSupport
	beta  bool
	check func(t *testing.T, w wire)
}

func renderCases() []renderCase {
	return []renderCase{
		{
			name: "changes_native_update", cfg: Config{Capabilities: changesCaps}, msgs: nativeUpdate,
			class: llm.ToolsChanges, beta: true,
			check: func(t *testing.T, w wire) {
				wantSystem(t, w, "base prompt\n\nDocs: read the manual first.")
				wantTools(t, w, "base_tool", PlaceholderToolName)
				if w.Tools[0].CacheControl == nil || w.Tools[0].DeferLoading {
					t.Errorf("base_tool: want cache_control and no defer_loading, got %+v", w.Tools[0])
				}
				if p := w.Tools[1]; !p.DeferLoading || p.CacheControl != nil || p.Description != placeholderDescription ||
					string(p.InputSchema) != placeholderSchema {
					t.Errorf("placeholder = %+v", p)
				}
				wantRoles(t, w, "user", "system")
				last := w.last()
				wantBlocks(t, last, "text", "tool_removal", "tool_addition")
				text := last.Content[0].Text
				for _, s := range []string{"updated guidance", `Updated system prompt section "style"`, "Answer briefly.", `Removed system prompt section "docs"`} {
					if !strings.Contains(text, s) {
						t.Errorf("update text %q lacks %q", text, s)
					}
				}
				if tl := last.Content[1].Tool; tl == nil || tl.Type != "tool_reference" || tl.Name != "base_tool" {
					t.Errorf("tool_removal = %+v", last.Content[1].Tool)
				}
				add := last.Content[2]
				if add.Tool == nil || add.Tool.Type != "tool_definition" || add.Tool.Definition == nil {
					t.Fatalf("tool_addition = %+v", add.Tool)
				}
				def := add.Tool.Definition
				if def.Name != "late_tool" || def.Description != "Read a file." || def.CacheControl != nil || def.DeferLoading {
					t.Errorf("inline definition = %+v", def)
				}
				if add.CacheControl == nil {
					t.Errorf("the trailing tool_addition should carry the conversation breakpoint")
				}
			},
		},
		{
			name: "changes_head_only", cfg: Config{Capabilities: changesCaps}, msgs: nativeUpdate[:2],
			class: llm.ToolsChanges, beta: true,
			check: func(t *testing.T, w wire) {
				wantTools(t, w, "base_tool", PlaceholderToolName)
				wantRoles(t, w, "user")
				if w.last().Content[0].CacheControl == nil {
					t.Errorf("the last user block should carry a breakpoint")
				}
			},
		},
		{
			name: "changes_fallback_no_initial_tools", cfg: Config{Capabilities: changesCaps},
			msgs: []llm.Message{
				head("base prompt", nil),
				user("hi"),
				update("updated guidance", nil, []llm.Tool{lateTool}),
			},
			class: llm.ToolsText,
			check: func(t *testing.T, w wire) {
				wantSystem(t, w, "base prompt")
				wantTools(t, w, "late_tool")
				wantRoles(t, w, "user", "system")
				wantBlocks(t, w.last(), "text")
				if w.last().Content[0].Text != "updated guidance" {
					t.Errorf("update text = %q", w.last().Content[0].Text)
				}
			},
		},
		{
			name: "collapse_without_midconversation_text", cfg: Config{Model: "claude-sonnet-5"}, msgs: nativeUpdate,
			class: llm.ToolsNone,
			check: func(t *testing.T, w wire) {
				wantSystem(t, w, "base prompt\n\nupdated guidance\n\nAnswer briefly.")
				wantTools(t, w, "late_tool")
				wantRoles(t, w, "user")
			},
		},
		{
			name: "collapse_changes_without_text_flag",
			cfg:  Config{Capabilities: provider.Capabilities{Tools: llm.ToolsChanges, CacheControlOnTools: true}}, msgs: nativeUpdate,
			class: llm.ToolsNone,
			check: func(t *testing.T, w wire) {
				wantSystem(t, w, "base prompt\n\nupdated guidance\n\nAnswer briefly.")
				wantTools(t, w, "late_tool")
				wantRoles(t, w, "user")
			},
		},
		{
			name: "bridge_head", cfg: Config{Capabilities: bridgeCaps}, msgs: bridgeLoaded[:2],
			class: llm.ToolsBridge,
			check: func(t *testing.T, w wire) {
				wantTools(t, w, "base_tool", llm.CallToolName)
				wantRoles(t, w, "user")
			},
		},
		{
			name: "bridge_after_load", cfg: Config{Capabilities: bridgeCaps}, msgs: bridgeLoaded,
			class: llm.ToolsBridge,
			check: func(t *testing.T, w wire) {
				wantTools(t, w, "base_tool", llm.CallToolName)
				wantRoles(t, w, "user", "assistant", "user", "system")
				wantBlocks(t, w.last(), "text")
				text := w.last().Content[0].Text
				compact := `{"name":"late_tool","description":"Read a file.","parameters":{"required":["path"],"properties":{"path":{"type":"string","description":"A <relative> path & name."},"mode":{"enum":["r","w"]}},"type":"object"}}`
				if !strings.Contains(text, compact) || !strings.Contains(text, llm.CallToolName) {
					t.Errorf("update text lacks the compact definition or call_tool:\n%s", text)
				}
			},
		},
		{
			name: "bridge_loaded_call", cfg: Config{Capabilities: bridgeCaps},
			msgs: append(append([]llm.Message{}, bridgeLoaded...),
				assistant(callPart("toolu_02", "late_tool", `{"path": "a.txt"}`)),
				result("toolu_02", "late_tool", llm.Text("contents")),
			),
			class: llm.ToolsBridge,
			check: func(t *testing.T, w wire) {
				wantRoles(t, w, "user", "assistant", "user", "system", "assistant", "user")
				call := w.Messages[4].Content[0]
				if call.Type != "tool_use" || call.Name != llm.CallToolName || call.ID != "toolu_02" {
					t.Fatalf("loaded call = %+v", call)
				}
				if diff := jsonDiff([]byte(`{"name":"late_tool","arguments":{"path":"a.txt"}}`), call.Input); diff != "" {
					t.Errorf("call_tool input (-want +got):\n%s", diff)
				}
				if w.Messages[1].Content[0].Name != "base_tool" {
					t.Errorf("a head tool's call should stay direct: %+v", w.Messages[1].Content[0])
				}
			},
		},
		{
			name: "bridge_updates_as_user", cfg: Config{Capabilities: provider.Capabilities{Tools: llm.ToolsBridge}},
			msgs:  append(append([]llm.Message{}, bridgeLoaded...), user("now read it")),
			class: llm.ToolsBridge,
			check: func(t *testing.T, w wire) {
				wantTools(t, w, "base_tool", llm.CallToolName)
				wantRoles(t, w, "user", "assistant", "user", "user", "user")
				text := w.Messages[3].Content[0].Text
				if !strings.HasPrefix(text, "<system-update>\n") || !strings.Contains(text, `{"name":"late_tool"`) {
					t.Errorf("update as user text = %q", text)
				}
			},
		},
		{
			name: "holdback_update_before_prompt", cfg: Config{Capabilities: changesCaps},
			msgs: []llm.Message{
				head("base prompt", nil, baseTool),
				user("first"),
				assistant(llm.Text("first answer")),
				update("", nil, []llm.Tool{lateTool}),
				user("second"),
			},
			class: llm.ToolsChanges, beta: true,
			check: func(t *testing.T, w wire) {
				wantRoles(t, w, "user", "assistant", "user", "system")
				if w.Messages[2].Content[0].Text != "second" {
					t.Errorf("the prompt stored after the update should come before it: %+v", w.Messages[2])
				}
				wantBlocks(t, w.last(), "tool_addition")
			},
		},
		{
			name: "holdback_update_between_call_and_result", cfg: Config{Capabilities: changesCaps},
			msgs: []llm.Message{
				head("base prompt", nil, baseTool),
				user("look it up"),
				assistant(callPart("toolu_01", "base_tool", `{"q":"x"}`)),
				update("Tools changed.", nil, []llm.Tool{lateTool}),
				result("toolu_01", "base_tool", llm.Text("found")),
				assistant(llm.Text("done")),
				user("thanks"),
			},
			class: llm.ToolsChanges, beta: true,
			check: func(t *testing.T, w wire) {
				wantRoles(t, w, "user", "assistant", "user", "system", "assistant", "user")
				wantBlocks(t, w.Messages[2], "tool_result")
			},
		},
		{
			name: "update_after_tool_results", cfg: Config{Capabilities: changesCaps},
			msgs: []llm.Message{
				head("base prompt", nil, baseTool),
				user("look it up"),
				assistant(callPart("toolu_01", "base_tool", `{"q":"x"}`)),
				result("toolu_01", "base_tool", llm.Text("found")),
				update("", nil, []llm.Tool{lateTool, bareTool}),
			},
			class: llm.ToolsChanges, beta: true,
			check: func(t *testing.T, w wire) {
				wantRoles(t, w, "user", "assistant", "user", "system")
				wantBlocks(t, w.last(), "tool_addition", "tool_addition")
				if s := w.last().Content[1].Tool.Definition.InputSchema; string(s) != adapt.EmptySchema {
					t.Errorf("a tool without parameters should get %s, got %s", adapt.EmptySchema, s)
				}
				// The tool results, where the previous request ended, carry
				// the second conversation breakpoint.
				if w.Messages[2].Content[0].CacheControl == nil || w.last().Content[1].CacheControl == nil {
					t.Errorf("the last two messages carry the conversation breakpoints")
				}
			},
		},
		{
			name: "tool_results_merge", cfg: Config{Capabilities: changesCaps},
			msgs: []llm.Message{
				head("base prompt", nil, baseTool),
				user("two lookups"),
				assistant(llm.Text("Looking."),
					callPart("call.1/x", "base_tool", `{"q":"a"}`),
					callPart(strings.Repeat("a", 70), "base_tool", `not json`)),
				result("call.1/x", "base_tool", llm.Text("first"), llm.Part{Type: llm.PartImage, MIMEType: "image/png", Data: []byte("png")}),
				llm.Message{Role: llm.RoleToolResult, ToolCallID: strings.Repeat("a", 70), ToolName: "base_tool", IsError: true,
					Content: []llm.Part{llm.Text("invalid arguments")}},
				user("and?"),
			},
			class: llm.ToolsChanges, beta: true,
			check: func(t *testing.T, w wire) {
				wantRoles(t, w, "user", "assistant", "user", "user")
				wantBlocks(t, w.Messages[1], "text", "tool_use", "tool_use")
				wantBlocks(t, w.Messages[2], "tool_result", "tool_result")
				uses, results := w.Messages[1].Content, w.Messages[2].Content
				if uses[1].ID != "call_1_x" || results[0].ToolUseID != "call_1_x" {
					t.Errorf("ids not normalised alike: %q, %q", uses[1].ID, results[0].ToolUseID)
				}
				if uses[2].ID != strings.Repeat("a", 64) || results[1].ToolUseID != uses[2].ID {
					t.Errorf("long ids not cut alike: %q, %q", uses[2].ID, results[1].ToolUseID)
				}
				if string(uses[2].Input) != "{}" {
					t.Errorf("invalid arguments should be sent as {}, got %s", uses[2].Input)
				}
				if results[0].IsError == nil || *results[0].IsError || results[1].IsError == nil || !*results[1].IsError {
					t.Errorf("is_error = %v, %v", results[0].IsError, results[1].IsError)
				}
				if len(results[0].Content) != 2 || results[0].Content[1].Type != "image" {
					t.Errorf("first result content = %+v", results[0].Content)
				}
			},
		},
		{
			name: "assistant_replay", cfg: Config{Capabilities: changesCaps},
			msgs: []llm.Message{
				head("base prompt", nil, baseTool),
				{Role: llm.RoleUser, Content: []llm.Part{llm.Text("look"), {Type: llm.PartImage, MIMEType: "image/jpeg", Data: []byte{0xff, 0xd8}}, llm.Text("  ")}},
				assistant(
					llm.Part{Type: llm.PartThinking, Text: "Let me think.", Signature: "sig-1"},
					llm.Part{Type: llm.PartThinking, Redacted: true, Signature: "redacted-data"},
					llm.Part{Type: llm.PartThinking, Text: "no signature"},
					llm.Text(""),
					llm.Text("An answer."),
				),
				user("again"),
				{Role: llm.RoleAssistant, Model: "claude-other", Content: []llm.Part{
					{Type: llm.PartThinking, Text: "foreign thoughts", Signature: "sig-2"}, llm.Text("Other answer.")}},
				user("once more"),
				{Role: llm.RoleAssistant, Model: "claude-other", StopReason: llm.StopAborted, Content: []llm.Part{
					{Type: llm.PartThinking, Text: "only thoughts", Signature: "sig-3"}}},
				user("last"),
			},
			class: llm.ToolsChanges, beta: true,
			check: func(t *testing.T, w wire) {
				wantRoles(t, w, "user", "assistant", "user", "assistant", "user", "user")
				wantBlocks(t, w.Messages[0], "text", "image")
				if src := w.Messages[0].Content[1].Source; src == nil || src.Type != "base64" || src.MediaType != "image/jpeg" || src.Data != "/9g=" {
					t.Errorf("image source = %+v", src)
				}
				wantBlocks(t, w.Messages[1], "thinking", "redacted_thinking", "text")
				if b := w.Messages[1].Content[0]; b.Thinking != "Let me think." || b.Signature != "sig-1" {
					t.Errorf("thinking = %+v", b)
				}
				if b := w.Messages[1].Content[1]; b.Data != "redacted-data" {
					t.Errorf("redacted thinking = %+v", b)
				}
				wantBlocks(t, w.Messages[3], "text")
			},
		},
		{
			name: "retention_1h", cfg: Config{Capabilities: changesCaps, Retention: RetentionLong}, msgs: nativeUpdate,
			class: llm.ToolsChanges, beta: true,
			check: func(t *testing.T, w wire) {
				for _, cc := range []*wireCache{w.System[0].CacheControl, w.Tools[0].CacheControl, w.last().Content[2].CacheControl} {
					if cc == nil || cc.Type != "ephemeral" || cc.TTL != "1h" {
						t.Errorf("breakpoint = %+v, want ephemeral 1h", cc)
					}
				}
			},
		},
		{
			name: "retention_1h_without_long_retention",
			cfg: Config{Capabilities: provider.Capabilities{Tools: llm.ToolsChanges, MidConversationText: true, CacheControlOnTools: true},
				Retention: RetentionLong},
			msgs: nativeUpdate, class: llm.ToolsChanges, beta: true,
			check: func(t *testing.T, w wire) {
				for _, cc := range []*wireCache{w.System[0].CacheControl, w.Tools[0].CacheControl, w.last().Content[2].CacheControl} {
					if cc == nil || cc.Type != "ephemeral" || cc.TTL != "" {
						t.Errorf("breakpoint = %+v, want plain ephemeral", cc)
					}
				}
			},
		},
		{
			name: "retention_none", cfg: Config{Capabilities: changesCaps, Retention: RetentionNone}, msgs: nativeUpdate,
			class: llm.ToolsChanges, beta: true,
		},
		{
			name: "no_tool_breakpoint_without_capability",
			cfg:  Config{Capabilities: provider.Capabilities{Tools: llm.ToolsChanges, MidConversationText: true}}, msgs: nativeUpdate,
			class: llm.ToolsChanges, beta: true,
			check: func(t *testing.T, w wire) {
				if w.Tools[0].CacheControl != nil {
					t.Errorf("tools carry a breakpoint without CacheControlOnTools")
				}
				if w.System[0].CacheControl == nil || w.last().Content[2].CacheControl == nil {
					t.Errorf("system and last message should keep their breakpoints")
				}
			},
		},
	}
}

func wantSystem(t *testing.T, w wire, text string) {
	t.Helper()
	if len(w.System) != 1 || w.System[0].Type != "text" || w.System[0].Text != text {
		t.Errorf("system = %+v, want one text block %q", w.System, text)
	}
}

func wantTools(t *testing.T, w wire, names ...string) {
	t.Helper()
	if got := w.toolNames(); !reflect.DeepEqual(got, names) {
		t.Errorf("tools = %q, want %q", got, names)
	}
}

func wantRoles(t *testing.T, w wire, roles ...string) {
	t.Helper()
	if got := w.roles(); !reflect.DeepEqual(got, roles) {
		t.Errorf("roles = %q, want %q", got, roles)
	}
}

func wantBlocks(t *testing.T, m wireMessage, types ...string) {
	t.Helper()
	if got := blockTypes(m); !reflect.DeepEqual(got, types) {
		t.Errorf("%s blocks = %q, want %q", m.Role, got, types)
	}
}

func TestRequestBody(t *testing.T) {
	for _, c := range renderCases() {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, c.cfg)
			req := &llm.Request{Messages: c.msgs}
			r, err := m.render(req)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if r.plan.Class != c.class {
				t.Errorf("class = %s, want %s", r.plan.Class, c.class)
			}
			if got := len(r.params.Betas) > 0; got != c.beta {
				t.Errorf("betas = %v, want the inline-tools beta: %v", r.params.Betas, c.beta)
			}
			body, err := m.RequestBody(req)
			if err != nil {
				t.Fatalf("RequestBody: %v", err)
			}
			checkGolden(t, c.name, body)
			checkWireRules(t, body)
			checkSchemas(t, body, c.msgs)
			w := decodeWire(t, body)
			if w.Model != m.cfg.Model || w.MaxTokens != DefaultMaxTokens || !w.Stream {
				t.Errorf("model %q, max_tokens %d, stream %v", w.Model, w.MaxTokens, w.Stream)
			}
			var raw any
			_ = json.Unmarshal(body, &raw)
			wantMarks := 0
			if c.cfg.Retention != RetentionNone {
				wantMarks = 1 // the system block
				if m.caps.CacheControlOnTools && len(w.Tools) > 0 {
					wantMarks++
				}
				// The last message and the one before it, when user or
				// system messages.
				for i := max(0, len(w.Messages)-2); i < len(w.Messages); i++ {
					if role := w.Messages[i].Role; role == "user" || role == "system" {
						wantMarks++
					}
				}
			}
			if n := countKey(raw, "cache_control"); n != wantMarks {
				t.Errorf("%d breakpoints, want %d", n, wantMarks)
			}
			if c.check != nil {
				c.check(t, w)
			}
		})
	}
}

// checkSchemas asserts that every input_schema sent is its declaration's
// parameters, compacted, keys in their order: the SDK's encoder only
// compacts and escapes <, > and & as \u003c, \u003e, \u0026.
func checkSchemas(t *testing.T, body []byte, msgs []llm.Message) {
	t.Helper()
	declared := map[string]json.RawMessage{}
	for _, m := range msgs {
		for _, tl := range m.ToolsAdded {
			declared[tl.Name] = tl.Parameters
		}
	}
	declared[llm.CallToolName] = provider.CallTool().Parameters
	declared[PlaceholderToolName] = json.RawMessage(placeholderSchema)
	w := decodeWire(t, body)
	sent := append([]wireTool{}, w.Tools...)
	for _, m := range w.Messages {
		for _, b := range m.Content {
			if b.Tool != nil && b.Tool.Definition != nil {
				sent = append(sent, *b.Tool.Definition)
			}
		}
	}
	for _, tl := range sent {
		params, ok := declared[tl.Name]
		if !ok {
			t.Errorf("tool %s was never declared", tl.Name)
			continue
		}
		if len(params) == 0 {
			params = json.RawMessage(adapt.EmptySchema)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, params); err != nil {
			t.Fatal(err)
		}
		var escaped bytes.Buffer
		json.HTMLEscape(&escaped, want.Bytes())
		if !bytes.Equal(tl.InputSchema, escaped.Bytes()) {
			t.Errorf("tool %s input_schema\n got %s\nwant %s", tl.Name, tl.InputSchema, escaped.Bytes())
		}
	}
}

// TestBridgeHeadIsStable checks that loading a tool in the bridge class
// leaves the system prompt and tool list byte for byte as they were.
func TestBridgeHeadIsStable(t *testing.T) {
	m := newModel(t, Config{Capabilities: bridgeCaps})
	type headPart struct {
		System json.RawMessage `json:"system"`
		Tools  json.RawMessage `json:"tools"`
	}
	var heads []headPart
	for _, msgs := range [][]llm.Message{bridgeLoaded[:2], bridgeLoaded} {
		body, err := m.RequestBody(&llm.Request{Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		var h headPart
		if err := json.Unmarshal(body, &h); err != nil {
			t.Fatal(err)
		}
		heads = append(heads, h)
	}
	if !bytes.Equal(heads[0].System, heads[1].System) || !bytes.Equal(heads[0].Tools, heads[1].Tools) {
		t.Errorf("the head changed after a load:\n%s\n%s\n---\n%s\n%s", heads[0].System, heads[0].Tools, heads[1].System, heads[1].Tools)
	}
}

// TestChangesPrefixIsStable checks that the changes class keeps system and
// tools identical across a tool change and that each request's messages
// extend the previous one's, so the cache prefix survives.
func TestChangesPrefixIsStable(t *testing.T) {
	m := newModel(t, Config{Capabilities: changesCaps, Retention: RetentionNone})
	first, err := m.RequestBody(&llm.Request{Messages: nativeUpdate[:2]})
	if err != nil {
		t.Fatal(err)
	}
	second, err := m.RequestBody(&llm.Request{Messages: nativeUpdate})
	if err != nil {
		t.Fatal(err)
	}
	a, b := decodeWire(t, first), decodeWire(t, second)
	if !reflect.DeepEqual(a.System, b.System) || !reflect.DeepEqual(a.Tools, b.Tools) {
		t.Errorf("system or tools changed across a tool change")
	}
	if !reflect.DeepEqual(a.Messages, b.Messages[:len(a.Messages)]) {
		t.Errorf("the second request's messages do not extend the first's")
	}
}

func TestMaxTokens(t *testing.T) {
	cases := []struct {
		name      string
		cfg, req  int
		wantBound int
	}{
		{"default", 0, 0, DefaultMaxTokens},
		{"config", 1000, 0, 1000},
		{"request wins", 1000, 300, 300},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, Config{Capabilities: changesCaps, MaxTokens: c.cfg})
			body, err := m.RequestBody(&llm.Request{Messages: nativeUpdate[:2], MaxTokens: c.req})
			if err != nil {
				t.Fatal(err)
			}
			if got := decodeWire(t, body).MaxTokens; got != c.wantBound {
				t.Errorf("max_tokens = %d, want %d", got, c.wantBound)
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	cases := []struct {
		name string
		msgs []llm.Message
		want []string
	}{
		{"dotted name in the head", []llm.Message{head("p", nil, decl("files.read", "", `{}`)), user("hi")},
			[]string{`"files.read"`, "rename the tool"}},
		{"dotted name added later", []llm.Message{head("p", nil, baseTool), user("hi"), update("", nil, []llm.Tool{decl("a.b", "", `{}`)})},
			[]string{`"a.b"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			api := newFakeAPI(t, 200, "text/event-stream", fixture(t, "text.sse"), nil)
			m := newModel(t, api.config(Config{Capabilities: changesCaps}))
			req := &llm.Request{Messages: c.msgs}
			if _, err := m.RequestBody(req); err == nil || !containsAll(err.Error(), c.want) {
				t.Errorf("RequestBody error = %v, want one naming %q", err, c.want)
			}
			events, err := collect(m.Stream(t.Context(), req))
			if err == nil || !containsAll(err.Error(), c.want) || len(events) != 0 {
				t.Errorf("Stream: events %v, error %v, want only an error naming %q", events, err, c.want)
			}
			if n := len(api.captured()); n != 0 {
				t.Errorf("%d requests sent, want none", n)
			}
		})
	}
	if _, err := newModel(t, Config{}).RequestBody(nil); err == nil {
		t.Errorf("a nil request should be an error")
	}
}

// TestRenderRefusedDeclarations checks that declarations a provider would
// reject (a schema that is not JSON, not an object, or not valid JSON
// Schema) are sent as provider.Refused stand-ins, in the head and in
// later additions, instead of failing every request.
func TestRenderRefusedDeclarations(t *testing.T) {
	msgs := []llm.Message{
		head("p", nil, baseTool, decl("broken", "", `{"type":`), decl("listy", "", `[1]`)),
		user("hi"),
		update("", nil, []llm.Tool{decl("regex", "Bad.", `{"type":"object","properties":{"q":{"pattern":"(((("}}}`)}),
	}
	body, err := newModel(t, Config{Capabilities: changesCaps}).RequestBody(&llm.Request{Messages: msgs})
	if err != nil {
		t.Fatalf("RequestBody: %v", err)
	}
	for _, name := range []string{"broken", "listy", "regex"} {
		stand := provider.Refused(llm.Tool{Name: name})
		want := `{"input_schema":` + adapt.EmptySchema + `,"name":"` + name + `","description":` + string(adapt.JSON(stand.Description))
		if !strings.Contains(string(body), want) {
			t.Errorf("the body lacks the stand-in %s:\n%s", want, body)
		}
	}
	if strings.Contains(string(body), "((((") || strings.Contains(string(body), `[1]`) {
		t.Errorf("the body still holds a refused schema:\n%s", body)
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestSentBodyIsRequestBody checks, for every rendering case, that the
// bytes the SDK sends are RequestBody's, that the beta header is sent
// exactly in the changes class, and the endpoint and key.
func TestSentBodyIsRequestBody(t *testing.T) {
	for _, c := range renderCases() {
		t.Run(c.name, func(t *testing.T) {
			api := newFakeAPI(t, 200, "text/event-stream", fixture(t, "text.sse"), nil)
			m := newModel(t, api.config(c.cfg))
			req := &llm.Request{Messages: c.msgs}
			want, err := m.RequestBody(req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := collect(m.Stream(t.Context(), req)); err != nil {
				t.Fatalf("stream: %v", err)
			}
			reqs := api.captured()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			got := reqs[0]
			if diff := jsonDiff(want, got.body); diff != "" {
				t.Errorf("sent body differs from RequestBody (-RequestBody +sent):\n%s", diff)
			}
			if !bytes.Equal(want, got.body) {
				t.Errorf("sent body equals RequestBody as JSON but not byte for byte:\n%s\n%s", want, got.body)
			}
			beta := got.header.Get("anthropic-beta")
			if wantBeta := map[bool]string{true: InlineToolsBeta, false: ""}[c.beta]; beta != wantBeta {
				t.Errorf("anthropic-beta = %q, want %q", beta, wantBeta)
			}
			if got.path != "/v1/messages" {
				t.Errorf("path = %s", got.path)
			}
			if auth := got.header.Get("Authorization"); auth != "Bearer test-key" {
				t.Errorf("authorization = %q", auth)
			}
		})
	}
}
