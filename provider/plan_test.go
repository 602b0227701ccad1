package provider

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
)

func tl(name, desc string) llm.Tool {
	return llm.Tool{Name: name, Description: desc, Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}
}

func toolNames(ts []llm.Tool) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func head(prompt string, tools ...llm.Tool) llm.Message {
	return llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.Text(prompt)}, ToolsAdded: tools}
}

func update(text string, added []llm.Tool, removed ...string) llm.Message {
	m := llm.Message{Role: llm.RoleSystem, ToolsAdded: added}
	if text != "" {
		m.Content = []llm.Part{llm.Text(text)}
	}
	for _, r := range removed {
		m.ToolsRemoved = append(m.ToolsRemoved, llm.ToolRef{Name: r})
	}
	return m
}

func user(s string) llm.Message { return llm.UserText(s, 1) }

func call(id, name, args string) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Part{
		{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}},
	}}
}

func result(id, name, text string) llm.Message {
	return llm.Message{Role: llm.RoleToolResult, ToolCallID: id, ToolName: name, Content: []llm.Part{llm.Text(text)}}
}

var (
	midText   = Capabilities{Tools: llm.ToolsChanges, MidConversationText: true}
	additions = Capabilities{Tools: llm.ToolsAdditions, MidConversationText: true, Anchor: AnchorToolSearch}
)

// kinds summarises a plan's items: "user", "assistant", "toolResult" or
// "update(text|+added|-removed)".
func kinds(p Plan) []string {
	var out []string
	for _, e := range p.Items {
		if e.Message != nil {
			out = append(out, string(e.Message.Role))
			continue
		}
		s := "update(" + e.Update.Text
		for _, t := range e.Update.Added {
			s += "|+" + t.Name
		}
		for _, r := range e.Update.Removed {
			s += "|-" + r
		}
		out = append(out, s+")")
	}
	return out
}

func TestBuildClassesAndFallbacks(t *testing.T) {
	base, late := tl("base_tool", "base"), tl("late_tool", "late")
	msgs := []llm.Message{head("base prompt", base), user("hi"), update("updated guidance", []llm.Tool{late})}
	cases := []struct {
		name   string
		msgs   []llm.Message
		caps   Capabilities
		class  llm.ToolSupport
		system string
		tools  []string
		kinds  []string
	}{
		{"changes native", msgs, midText, llm.ToolsChanges, "base prompt", []string{"base_tool"},
			[]string{"user", "update(updated guidance|+late_tool)"}},
		{"changes without initial tools falls back to text",
			[]llm.Message{head("base prompt"), user("hi"), update("", []llm.Tool{late})}, midText, llm.ToolsText,
			"base prompt", []string{"late_tool"}, []string{"user"}},
		{"changes without mid-conversation text collapses", msgs, Capabilities{Tools: llm.ToolsChanges}, llm.ToolsNone,
			"base prompt\n\nupdated guidance", []string{"base_tool", "late_tool"}, []string{"user"}},
		{"additions anchor", msgs, additions, llm.ToolsAdditions, "base prompt", []string{"base_tool"},
			[]string{"user", "update(updated guidance|+late_tool)"}},
		{"text sends the whole list", msgs, Capabilities{Tools: llm.ToolsText, MidConversationText: true}, llm.ToolsText,
			"base prompt", []string{"base_tool", "late_tool"}, []string{"user", "update(updated guidance)"}},
		{"none collapses", msgs, Capabilities{Tools: llm.ToolsNone, MidConversationText: true}, llm.ToolsNone,
			"base prompt\n\nupdated guidance", []string{"base_tool", "late_tool"}, []string{"user"}},
		{"late replace collapses even bridge",
			append(append([]llm.Message{}, msgs...), llm.Message{Role: llm.RoleSystem, Replace: true, Content: []llm.Part{llm.Text("new")}}),
			Capabilities{Tools: llm.ToolsBridge, MidConversationText: true}, llm.ToolsNone, "new", nil, []string{"user"}},
		{"no transcript head", []llm.Message{user("hi")}, midText, llm.ToolsText, "", nil, []string{"user"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Build(c.msgs, c.caps)
			if p.Class != c.class {
				t.Errorf("class = %s, want %s", p.Class, c.class)
			}
			if p.System != c.system {
				t.Errorf("system = %q, want %q", p.System, c.system)
			}
			if got := toolNames(p.Tools); !reflect.DeepEqual(got, append([]string{}, c.tools...)) {
				t.Errorf("tools = %v, want %v", got, c.tools)
			}
			if got := kinds(p); !reflect.DeepEqual(got, c.kinds) {
				t.Errorf("items = %q, want %q", got, c.kinds)
			}
		})
	}
}

func TestBuildChangesRemovalsAndRedefinitions(t *testing.T) {
	a, b := tl("a", "A"), tl("b", "B")
	b2 := tl("b", "B changed")
	msgs := []llm.Message{
		head("p", a), user("go"),
		update("", []llm.Tool{b}),
		call("c1", "b", `{}`), result("c1", "b", "ok"),
		update("", []llm.Tool{b2}, "b"), // redefinition: removed and re-added
		update("", nil, "a"),
	}
	p := Build(msgs, midText)
	want := []string{"user", "update(|+b)", "assistant", "toolResult", "update(|+b)", "update(|-a)"}
	if got := kinds(p); !reflect.DeepEqual(got, want) {
		t.Fatalf("items = %q, want %q", got, want)
	}
	if p.Items[4].Update.Added[0].Description != "B changed" {
		t.Errorf("the redefinition carries the new definition: %+v", p.Items[4].Update.Added)
	}
	for i, e := range p.Items {
		if e.Index != i+1 {
			t.Errorf("item %d has transcript index %d, want %d", i, e.Index, i+1)
		}
	}
}

// TestBuildAdditionsPromotesOnce checks the promote-once rule: the
// request after a removal puts the current set at the top level; later
// additions are anchored after it, so later requests extend that one.
func TestBuildAdditionsPromotesOnce(t *testing.T) {
	a, b, c, d := tl("a", "A"), tl("b", "B"), tl("c", "C"), tl("d", "D")
	steps := [][]llm.Message{
		{head("p", a), user("go")},
		{update("", []llm.Tool{b})},
		{call("1", "b", `{}`), result("1", "b", "ok"), update("load c", []llm.Tool{c})},
		{update("drop b", nil, "b")},
		{user("more"), update("", []llm.Tool{d})},
		{update("", []llm.Tool{tl("a", "A")})},  // identical resend: additive no-op
		{update("", []llm.Tool{tl("c", "C2")})}, // redefinition: promotes again
	}
	want := []struct {
		tools []string
		kinds []string
	}{
		{[]string{"a"}, []string{"user"}},
		{[]string{"a"}, []string{"user", "update(|+b)"}},
		{[]string{"a"}, []string{"user", "update(|+b)", "assistant", "toolResult", "update(load c|+c)"}},
		{[]string{"a", "c"}, []string{"user", "assistant", "toolResult", "update(load c)", "update(drop b)"}},
		{[]string{"a", "c"}, []string{"user", "assistant", "toolResult", "update(load c)", "update(drop b)", "user", "update(|+d)"}},
		{[]string{"a", "c"}, []string{"user", "assistant", "toolResult", "update(load c)", "update(drop b)", "user", "update(|+d)"}},
		{[]string{"a", "c", "d"}, []string{"user", "assistant", "toolResult", "update(load c)", "update(drop b)", "user"}},
	}
	var msgs []llm.Message
	for i, s := range steps {
		msgs = append(msgs, s...)
		p := Build(msgs, additions)
		if got := toolNames(p.Tools); !reflect.DeepEqual(got, want[i].tools) {
			t.Errorf("step %d: tools = %v, want %v", i, got, want[i].tools)
		}
		if got := kinds(p); !reflect.DeepEqual(got, want[i].kinds) {
			t.Errorf("step %d: items = %q, want %q", i, got, want[i].kinds)
		}
	}
	p := Build(msgs, additions)
	if p.Tools[1].Description != "C2" {
		t.Errorf("the promoted set carries the redefinition, got %+v", p.Tools[1])
	}
}

func TestBuildAdditionsReaddAfterRemovalIsAnchored(t *testing.T) {
	a, b := tl("a", "A"), tl("b", "B")
	msgs := []llm.Message{head("p", a, b), user("go"), update("", nil, "b"), user("again"), update("", []llm.Tool{b})}
	p := Build(msgs, additions)
	if got := toolNames(p.Tools); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("tools = %v, want [a]", got)
	}
	want := []string{"user", "user", "update(|+b)"}
	if got := kinds(p); !reflect.DeepEqual(got, want) {
		t.Errorf("items = %q, want %q", got, want)
	}
}

func TestBridgePlan(t *testing.T) {
	search, late := tl("tool_search", "find tools"), tl("late_tool", "late")
	msgs := []llm.Message{
		head("p", search), user("go"),
		call("1", "tool_search", `{"query":"late"}`), result("1", "tool_search", "loaded"),
		update("", []llm.Tool{late}),
		call("2", "late_tool", `{"q": "x"}`), result("2", "late_tool", "done"),
		update("", nil, "late_tool"),
	}
	before := msgs[5].Content[0].ToolCall.Name
	p := Build(msgs, Capabilities{Tools: llm.ToolsBridge, MidConversationText: true})
	if p.Class != llm.ToolsBridge || p.UpdatesAsUser {
		t.Fatalf("class %s, updates as user %v", p.Class, p.UpdatesAsUser)
	}
	if got := toolNames(p.Tools); !reflect.DeepEqual(got, []string{"tool_search", "call_tool"}) {
		t.Errorf("head tools = %v", got)
	}
	// A direct head call stays as it is; the loaded tool's call is wrapped.
	if got := p.Items[1].Message.Content[0].ToolCall.Name; got != "tool_search" {
		t.Errorf("head call renamed to %s", got)
	}
	wrapped := p.Items[4].Message.Content[0].ToolCall
	if wrapped.Name != llm.CallToolName || string(wrapped.Arguments) != `{"name":"late_tool","arguments":{"q":"x"}}` {
		t.Errorf("wrapped call = %s %s", wrapped.Name, wrapped.Arguments)
	}
	if msgs[5].Content[0].ToolCall.Name != before {
		t.Error("Build modified the transcript")
	}
	load := p.Items[3].Update
	if load == nil || len(load.Added) != 0 || !strings.Contains(load.Text, `{"name":"late_tool","description":"late","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}`) {
		t.Errorf("load update = %+v", load)
	}
	drop := p.Items[len(p.Items)-1].Update
	if drop == nil || drop.Text != "Tools no longer available: late_tool." {
		t.Errorf("removal update = %+v", drop)
	}
	if u := p.Unwrap(*wrapped); u.Name != "late_tool" || string(u.Arguments) != `{"q":"x"}` || u.ID != "2" {
		t.Errorf("unwrap = %+v", u)
	}
	nb := Build(msgs, Capabilities{Tools: llm.ToolsBridge})
	if !nb.UpdatesAsUser || nb.Class != llm.ToolsBridge {
		t.Errorf("bridge without mid-conversation text: class %s, updates as user %v", nb.Class, nb.UpdatesAsUser)
	}
}

func TestUnwrapCallTool(t *testing.T) {
	cases := []struct {
		name, args string
		wantName   string
		wantArgs   string
	}{
		{"object", `{"name":"x","arguments":{"a":1}}`, "x", `{"a":1}`},
		{"string arguments", `{"name":"x","arguments":"{\"a\":1}"}`, "x", `{"a":1}`},
		{"missing arguments", `{"name":"x"}`, "x", `{}`},
		{"null arguments", `{"name":"x","arguments":null}`, "x", `{}`},
		{"no name", `{"arguments":{}}`, llm.CallToolName, `{"arguments":{}}`},
		{"invalid JSON", `{"name":`, llm.CallToolName, `{"name":`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := UnwrapCallTool(llm.ToolCall{ID: "i", Name: llm.CallToolName, Arguments: json.RawMessage(c.args)})
			if got.Name != c.wantName || string(got.Arguments) != c.wantArgs || got.ID != "i" {
				t.Errorf("got %s %s %s, want %s %s", got.ID, got.Name, got.Arguments, c.wantName, c.wantArgs)
			}
		})
	}
	other := llm.ToolCall{ID: "i", Name: "x", Arguments: json.RawMessage(`{"name":"y"}`)}
	if got := UnwrapCallTool(other); got.Name != "x" {
		t.Errorf("a call of another tool was unwrapped: %+v", got)
	}
	p := Build(nil, midText)
	if got := p.Unwrap(llm.ToolCall{Name: llm.CallToolName, Arguments: json.RawMessage(`{"name":"x","arguments":{}}`)}); got.Name != llm.CallToolName {
		t.Errorf("a non-bridge plan unwrapped %+v", got)
	}
}

func TestCheckNames(t *testing.T) {
	ok := Build([]llm.Message{head("p", tl("read_file", ""))}, midText)
	if err := ok.CheckNames(AnthropicMessages); err != nil {
		t.Errorf("valid name refused: %v", err)
	}
	dotted := []llm.Message{head("p", tl("a", "")), user("go"), update("", []llm.Tool{tl("fs.read", "")})}
	p := Build(dotted, midText)
	err := p.CheckNames(AnthropicMessages)
	if err == nil || !strings.Contains(err.Error(), `"fs.read"`) || !strings.Contains(err.Error(), "bridge") {
		t.Errorf("dotted name: %v", err)
	}
	// The bridge declares loaded tools as text, so their names are free.
	bp := Build(dotted, Capabilities{Tools: llm.ToolsBridge, MidConversationText: true})
	if err := bp.CheckNames(AnthropicMessages); err != nil {
		t.Errorf("bridge refused a loaded name: %v", err)
	}
	long := strings.Repeat("x", 65)
	lp := Build([]llm.Message{head("p", tl(long, ""))}, midText)
	if lp.CheckNames(AnthropicMessages) != nil || lp.CheckNames(OpenAIChat) == nil {
		t.Error("a 65-character name is fine for Anthropic and too long for OpenAI")
	}
}

// TestBridgePlansDoNotShareCallTool checks that a bridge plan's call_tool
// declaration is the plan's own: a caller that edits a plan's tools (its
// bytes included) changes no later plan, so the head stays byte-stable.
func TestBridgePlansDoNotShareCallTool(t *testing.T) {
	msgs := []llm.Message{head("p", tl("tool_search", "find tools")), user("go")}
	bridge := Capabilities{Tools: llm.ToolsBridge, MidConversationText: true}
	first := Build(msgs, bridge)
	want := first.Tools[len(first.Tools)-1].Clone()
	ct := &first.Tools[len(first.Tools)-1]
	ct.Description = "changed"
	for i := range ct.Parameters {
		ct.Parameters[i] = ' '
	}
	second := Build(msgs, bridge)
	if got := second.Tools[len(second.Tools)-1]; !got.Equal(want) || got.Description != want.Description {
		t.Errorf("call_tool after editing an earlier plan = %s %q, want %s %q", got.Parameters, got.Description, want.Parameters, want.Description)
	}
}
