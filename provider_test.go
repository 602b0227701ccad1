package toolshelf_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/tool"
)

// TestProviderTable: every name of the table resolves to an adapter of
// its API (with a key where one is needed), each API has exactly one
// provider, and the base URL of an API on a server's root follows the
// SDKs: Anthropic's adds /v1 itself, OpenAI's does not.
func TestProviderTable(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	seen := map[provider.API]string{}
	for _, p := range toolshelf.Providers() {
		got, ok := toolshelf.LookupProvider(p.Name)
		if !ok || got.Name != p.Name || got.API != p.API {
			t.Errorf("LookupProvider(%q) = %+v, %v", p.Name, got, ok)
		}
		if p.API != "" {
			if other, dup := seen[p.API]; dup {
				t.Errorf("%s and %s both speak %s", other, p.Name, p.API)
			}
			seen[p.API] = p.Name
			if of, ok := toolshelf.ProviderOf(p.API); !ok || of.Name != p.Name {
				t.Errorf("ProviderOf(%s) = %q, want %q", p.API, of.Name, p.Name)
			}
		}
		model := p.DefaultModel
		if model == "" {
			model = "llama3.3"
		}
		if _, err := toolshelf.NewModel(toolshelf.Provider{Name: p.Name, Model: model}); (err != nil) != p.NeedsKey {
			t.Errorf("%s without a key: %v (needs a key: %v)", p.Name, err, p.NeedsKey)
		}
		if _, err := toolshelf.NewModel(toolshelf.Provider{Name: p.Name, Model: model, APIKey: "k"}); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if !strings.Contains(toolshelf.ProviderNames(), p.Name) {
			t.Errorf("ProviderNames() = %q lacks %s", toolshelf.ProviderNames(), p.Name)
		}
	}
	for _, api := range provider.APIs {
		if _, ok := seen[api]; !ok {
			t.Errorf("no provider speaks %s", api)
		}
	}
	anth, _ := toolshelf.ProviderOf(provider.AnthropicMessages)
	chat, _ := toolshelf.ProviderOf(provider.OpenAIChat)
	if got := anth.BaseURL("http://127.0.0.1:8089/"); got != "http://127.0.0.1:8089" {
		t.Errorf("Anthropic base URL %q", got)
	}
	if got := chat.BaseURL("http://127.0.0.1:8089"); got != "http://127.0.0.1:8089/v1" {
		t.Errorf("Chat Completions base URL %q", got)
	}
	em, _ := toolshelf.LookupProvider(toolshelf.Emulator)
	if !em.Offline || em.NeedsKey || em.KeyEnv != "" {
		t.Errorf("the emulator is not offline and keyless: %+v", em)
	}
	for model, want := range map[string]provider.API{"claude-opus-5-5": provider.AnthropicMessages, "gpt-5.6-sol": provider.OpenAIResponses, "o3-mini": provider.OpenAIResponses, "llama3.3": provider.OpenAIChat} {
		if got := em.APIFor(model); got != want {
			t.Errorf("the emulator speaks %s to %s, want %s", got, model, want)
		}
	}
}

// TestProviderMistakes: what a provider cannot take fails with the fix.
func TestProviderMistakes(t *testing.T) {
	for _, c := range []struct {
		p    toolshelf.Provider
		want string
	}{
		{toolshelf.Provider{Name: "gemini"}, `unknown provider "gemini": use anthropic, openai, openai-chat or emulator`},
		{toolshelf.Provider{Name: toolshelf.OpenAIChat}, "needs a model"},
		{toolshelf.Provider{Name: toolshelf.Anthropic, APIKey: "k", API: provider.OpenAIChat}, "speaks anthropic-messages, not openai-chat"},
		{toolshelf.Provider{Name: toolshelf.Emulator, API: "gemini"}, `unknown API "gemini"`},
		{toolshelf.Provider{Name: toolshelf.Emulator, BaseURL: "http://127.0.0.1:8089"}, "runs in process and takes no BaseURL"},
		{toolshelf.Provider{Name: toolshelf.OpenAI, APIKey: "k", Emulator: &emulator.Server{}}, "Provider.Emulator is for provider emulator"},
	} {
		if _, err := toolshelf.NewModel(c.p); err == nil || !strings.Contains(err.Error(), c.want) {
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

// TestEmulatorProviderAnswersOffline: the offline provider, named like
// any other and given no key, answers through the adapter of each API:
// its stand-in model searches the shelf, calls what it found and reports
// the result, and the usage says what the emulated cache did.
func TestEmulatorProviderAnswersOffline(t *testing.T) {
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
			a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Provider: p})
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

// TestEmulatorProviderTakesAnEmulator: a program's own emulator answers,
// with its responder, and records the requests.
func TestEmulatorProviderTakesAnEmulator(t *testing.T) {
	var records []emulator.Record
	em, err := emulator.New(emulator.Config{Responder: emulator.Echo{}, Observe: func(r emulator.Record) { records = append(records, r) }})
	if err != nil {
		t.Fatal(err)
	}
	m, err := toolshelf.NewModel(toolshelf.Provider{Name: toolshelf.Emulator, Emulator: em, APIKey: "mine"})
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
