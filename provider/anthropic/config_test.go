package anthropic

import (
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

func TestNewValidates(t *testing.T) {
	minus := -1
	cases := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"no model", Config{}, []string{"Config.Model"}},
		{"class anthropic cannot render", Config{Model: testModel, Capabilities: provider.Capabilities{Tools: llm.ToolsAdditions}},
			[]string{testModel, `"additions"`, `"changes"`}},
		{"unknown class", Config{Model: testModel, Capabilities: provider.Capabilities{Tools: "magic"}}, []string{`"magic"`}},
		{"unknown retention", Config{Model: testModel, Retention: "forever"}, []string{`"forever"`, `"5m"`, `"1h"`, `"none"`}},
		{"negative max tokens", Config{Model: testModel, MaxTokens: -5}, []string{"-5", "positive"}},
		{"negative retries", Config{Model: testModel, MaxRetries: &minus}, []string{"-1", "0 to disable"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.cfg)
			if err == nil {
				t.Fatalf("New accepted %+v", c.cfg)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestNewCapabilities(t *testing.T) {
	cases := []struct {
		name  string
		cfg   Config
		class llm.ToolSupport
		mid   bool
	}{
		{"default table: changes model", Config{Model: "claude-opus-5-5"}, llm.ToolsChanges, true},
		{"default table: model without system messages", Config{Model: "claude-sonnet-5"}, llm.ToolsNone, false},
		{"caller's capabilities win", Config{Model: "claude-opus-5-5", Capabilities: provider.Capabilities{Tools: llm.ToolsBridge}},
			llm.ToolsBridge, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, c.cfg)
			if got := m.Capabilities(); got.Tools != c.class || got.MidConversationText != c.mid {
				t.Errorf("capabilities = %+v, want class %s, mid-conversation text %v", got, c.class, c.mid)
			}
		})
	}
}
