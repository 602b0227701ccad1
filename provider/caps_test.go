package provider

import (
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
)

func TestDefaultTable(t *testing.T) {
	table := DefaultTable()
	cases := []struct {
		api    API
		model  string
		tools  llm.ToolSupport
		mid    bool
		anchor Anchor
	}{
		{AnthropicMessages, "claude-opus-5-5", llm.ToolsChanges, true, ""},
		{AnthropicMessages, "claude-fable-5-1-20261001", llm.ToolsChanges, true, ""},
		{AnthropicMessages, "claude-opus-4-8", llm.ToolsChanges, true, ""},
		{AnthropicMessages, "claude-sonnet-5", llm.ToolsNone, false, ""},
		{AnthropicMessages, "claude-haiku-4-5", llm.ToolsNone, false, ""},
		{OpenAIResponses, "gpt-5.6-sol", llm.ToolsAdditions, true, AnchorToolSearch},
		{OpenAIResponses, "gpt-6-astra", llm.ToolsAdditions, true, AnchorToolSearch},
		{OpenAIResponses, "gpt-5.2", llm.ToolsNone, false, ""},
		{OpenAIChat, "qwen3-coder:30b", llm.ToolsNone, false, ""},
		{OpenAIChat, "kimi-k2.5", llm.ToolsAdditions, true, AnchorSystemTools},
	}
	for _, c := range cases {
		got := table.Lookup(c.api, c.model)
		if got.Tools != c.tools || got.MidConversationText != c.mid || got.Anchor != c.anchor {
			t.Errorf("%s %s: %+v, want tools %s mid %v anchor %q", c.api, c.model, got, c.tools, c.mid, c.anchor)
		}
		if err := got.Check(c.api); err != nil {
			t.Errorf("%s %s: the default table yields capabilities its API refuses: %v", c.api, c.model, err)
		}
	}
	if !table.Lookup(AnthropicMessages, "claude-sonnet-5").CacheControlOnTools {
		t.Error("every Claude model takes a breakpoint on tools")
	}
	if table.Lookup(OpenAIResponses, "gpt-4.1").DeveloperRole || !table.Lookup(OpenAIResponses, "gpt-5.6").DeveloperRole {
		t.Error("developer role: gpt-4.1 no, gpt-5.6 yes")
	}
}

func TestOverridesWin(t *testing.T) {
	rules, err := ParseRules([]byte(`[
		{"model": "*", "tools": "bridge", "note": "bridge everywhere"},
		{"api": "openai-responses", "model": "gpt-5.6*", "anchor": "additional_tools", "tools": "additions"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	table := DefaultTable().With(rules...)
	if got := table.Lookup(AnthropicMessages, "claude-opus-5-5"); got.Tools != llm.ToolsBridge || !got.MidConversationText {
		t.Errorf("bridge override keeps the other flags: %+v", got)
	}
	if got := table.Lookup(OpenAIResponses, "gpt-5.6-sol"); got.Tools != llm.ToolsAdditions || got.Anchor != AnchorAdditionalTools {
		t.Errorf("anchor override: %+v", got)
	}
	if got := DefaultTable().Lookup(OpenAIResponses, "gpt-5.6-sol"); got.Anchor != AnchorToolSearch {
		t.Errorf("With changed the default table: %+v", got)
	}
}

func TestParseRulesErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{"model":"x"}`:                     "expected a JSON array",
		`[{"model":"x","tool":"bridge"}]`:   "unknown field",
		`[{"model":"x","tools":"bridges"}]`: `unknown tools class "bridges"`,
		`[{"api":"vertex"}]`:                `unknown api "vertex"`,
		`[{"anchor":"items"}]`:              `unknown anchor "items"`,
	} {
		_, err := ParseRules([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRules(%s) = %v, want an error containing %q", in, err, want)
		}
	}
}

func TestCheck(t *testing.T) {
	if err := (Capabilities{Tools: llm.ToolsChanges}).Check(OpenAIResponses); err == nil || !strings.Contains(err.Error(), `"additions"`) {
		t.Errorf("changes on Responses: %v", err)
	}
	if err := (Capabilities{Tools: llm.ToolsAdditions}).Check(AnthropicMessages); err == nil {
		t.Error("additions on Anthropic accepted")
	}
	if err := (Capabilities{Tools: llm.ToolsAdditions, Anchor: AnchorToolSearch}).Check(OpenAIChat); err == nil || !strings.Contains(err.Error(), "system_tools") {
		t.Errorf("tool_search anchor on Chat: %v", err)
	}
	if err := (Capabilities{Tools: llm.ToolsBridge}).Check("vertex"); err == nil {
		t.Error("unknown API accepted")
	}
	for _, api := range APIs {
		if err := (Capabilities{Tools: llm.ToolsBridge}).Check(api); err != nil {
			t.Errorf("bridge must be available on %s: %v", api, err)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, model string
		want           bool
	}{
		{"gpt-5.6*", "gpt-5.6-sol", true},
		{"gpt-5.6*", "gpt-5.60", true},
		{"gpt-5.6*", "gpt-5.5", false},
		{"*claude*", "anthropic/claude-opus-5", true},
		{"claude-*-5", "claude-opus-5", true},
		{"claude-*-5", "claude-opus-5-5x", false},
		{"Kimi-*", "kimi-k2", true},
		{"exact", "exact", true},
		{"exact", "exactly", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "acb", false},
	} {
		if got := Match(c.pattern, c.model); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.pattern, c.model, got)
		}
	}
}
