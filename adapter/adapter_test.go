package adapter_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/adapter"
	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/provider/anthropic"
	"github.com/toolshelf/toolshelf/provider/gemini"
	"github.com/toolshelf/toolshelf/provider/openai"
	"github.com/toolshelf/toolshelf/tool"
)

// TestEveryProviderHasAnAdapter: every name of the provider table builds
// the adapter of its API (with a key where one is needed), and the
// emulator builds the adapter of each API.
func TestEveryProviderHasAnAdapter(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	isAPI := map[provider.API]func(llm.Model) bool{
		provider.AnthropicMessages: func(m llm.Model) bool { _, ok := m.(*anthropic.Model); return ok },
		provider.OpenAIResponses:   func(m llm.Model) bool { _, ok := m.(*openai.Responses); return ok },
		provider.OpenAIChat:        func(m llm.Model) bool { _, ok := m.(*openai.Chat); return ok },
		provider.Gemini:            func(m llm.Model) bool { _, ok := m.(*gemini.Model); return ok },
	}
	for _, p := range toolshelf.Providers() {
		model := p.DefaultModel
		if model == "" {
			model = "llama3.3"
		}
		if _, err := adapter.New(toolshelf.Provider{Name: p.Name, Model: model}); (err != nil) != p.NeedsKey {
			t.Errorf("%s without a key: %v (needs a key: %v)", p.Name, err, p.NeedsKey)
		}
		apis := []provider.API{p.API}
		if p.API == "" {
			apis = provider.APIs
		}
		for _, api := range apis {
			m, err := adapter.New(toolshelf.Provider{Name: p.Name, Model: model, APIKey: "k", API: api})
			if err != nil {
				t.Errorf("%s %s: %v", p.Name, api, err)
			} else if !isAPI[api](m) {
				t.Errorf("%s %s: the model is a %T", p.Name, api, m)
			}
		}
	}
}

// TestMistakes: what a provider cannot take fails with the fix: the root
// package's resolution, and an emulator for a provider that is not the
// emulator.
func TestMistakes(t *testing.T) {
	for _, c := range []struct {
		cfg  adapter.Config
		p    toolshelf.Provider
		want string
	}{
		{adapter.Config{}, toolshelf.Provider{Name: "mistral"}, `unknown provider "mistral": use anthropic, openai, openai-chat, gemini or emulator`},
		{adapter.Config{}, toolshelf.Provider{Name: toolshelf.Emulator, BaseURL: "http://127.0.0.1:8089"}, "runs in process and takes no BaseURL"},
		{adapter.Config{Emulator: &emulator.Server{}}, toolshelf.Provider{Name: toolshelf.OpenAI, APIKey: "k"}, "Config.Emulator is for provider emulator, not openai"},
	} {
		if _, err := c.cfg.New(c.p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}

// forecast is a program's own tool, waiting on the shelf.
var forecast = tool.Tool{Name: "get_forecast", Description: "Get the weather forecast for a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	Exposure:   tool.Deferred,
	Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
		return tool.TextResult("Sunny, 21 °C."), nil
	})}

// TestEmulatorAnswersOffline: the offline provider, named like any other
// and given no key, answers through the adapter of each API: its stand-in
// model searches the shelf, calls what it found and reports the result,
// and the usage says what the emulated cache did.
func TestEmulatorAnswersOffline(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	for _, c := range []struct {
		model string
		api   provider.API
	}{
		{"", provider.AnthropicMessages}, // the default model
		{"gpt-5.6-sol", provider.OpenAIResponses},
		{"llama3.3", provider.OpenAIChat},
		{"claude-sonnet-5", provider.OpenAIChat}, // an API the name does not suggest
	} {
		t.Run(string(c.api)+" "+c.model, func(t *testing.T) {
			shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Tools: []tool.Tool{forecast}})
			if err != nil {
				t.Fatal(err)
			}
			defer shelf.Close()
			p := toolshelf.Provider{Name: toolshelf.Emulator, Model: c.model}
			if c.model == "claude-sonnet-5" {
				p.API = c.api
			}
			a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Provider: p, NewModel: adapter.New})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			var text strings.Builder
			var calls []string
			for ev, err := range a.Run(t.Context(), "what is the weather forecast") {
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case ev.Type == agent.EventStream && ev.Stream.Type == llm.EventTextDelta:
					text.WriteString(ev.Stream.Delta)
				case ev.Type == agent.EventToolStart:
					calls = append(calls, ev.Call.Name)
				}
			}
			if strings.Join(calls, " ") != "tool_search get_forecast" || !strings.Contains(text.String(), "Sunny, 21 °C.") {
				t.Errorf("calls %v, answer %q", calls, text.String())
			}
			msgs := a.Messages()
			last := msgs[len(msgs)-1]
			if last.Usage == nil || last.Usage.TotalInput() == 0 || last.Usage.Output == 0 {
				t.Errorf("the answer's usage: %+v", last.Usage)
			}
		})
	}
}

// TestEmulatorTakesAnEmulator: a program's own emulator answers, with its
// responder, and records the requests.
func TestEmulatorTakesAnEmulator(t *testing.T) {
	var records []emulator.Record
	em, err := emulator.New(emulator.Config{Responder: emulator.Echo{}, Observe: func(r emulator.Record) { records = append(records, r) }})
	if err != nil {
		t.Fatal(err)
	}
	m, err := adapter.Config{Emulator: em}.New(toolshelf.Provider{Name: toolshelf.Emulator, APIKey: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for ev, err := range m.Stream(t.Context(), &llm.Request{Messages: []llm.Message{llm.UserText("hello there", 1)}}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.EventTextDelta {
			text.WriteString(ev.Delta)
		}
	}
	if text.String() != "echo: hello there" || len(records) != 1 || records[0].Key != "mine" || records[0].API != emulator.AnthropicMessages {
		t.Errorf("answer %q, records %+v", text.String(), records)
	}
}
