package toolshelf_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/tool"
)

// TestProviderTable: every name of the table resolves (with a key where
// one is needed) to the API its adapter speaks, with capabilities, and
// resolves again to itself; each API has exactly one provider, and the
// base URL of an API on a server's root follows the SDKs: Anthropic's
// adds /v1 itself, OpenAI's does not.
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
		if _, err := (toolshelf.Provider{Name: p.Name, Model: model}).Resolve(); (err != nil) != p.NeedsKey {
			t.Errorf("%s without a key: %v (needs a key: %v)", p.Name, err, p.NeedsKey)
		}
		r, err := toolshelf.Provider{Name: p.Name, APIKey: "k", Model: model}.Resolve()
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if r.API != p.APIFor(model) || r.Model != model || r.APIKey != "k" || r.Capabilities == nil || r.Capabilities.Tools == "" {
			t.Errorf("%s resolves to %+v", p.Name, r)
		}
		if again, err := r.Resolve(); err != nil || !cmp.Equal(again, r) {
			t.Errorf("%s resolved again: %+v, %v; want %+v", p.Name, again, err, r)
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
	for model, want := range map[string]provider.API{"claude-opus-5-5": provider.AnthropicMessages, "gpt-5.6-sol": provider.OpenAIResponses, "o3-mini": provider.OpenAIResponses, "llama3.3": provider.OpenAIChat, "gemini-3.5-flash": provider.Gemini} {
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
		{toolshelf.Provider{Name: "mistral"}, `unknown provider "mistral": use anthropic, openai, openai-chat, gemini or emulator`},
		{toolshelf.Provider{Name: toolshelf.OpenAIChat}, "needs a model"},
		{toolshelf.Provider{Name: toolshelf.Anthropic, APIKey: "k", API: provider.OpenAIChat}, "speaks anthropic-messages, not openai-chat"},
		{toolshelf.Provider{Name: toolshelf.Emulator, API: "vertex"}, `unknown API "vertex"`},
		{toolshelf.Provider{Name: toolshelf.Emulator, BaseURL: "http://127.0.0.1:8089"}, "runs in process and takes no BaseURL"},
	} {
		if _, err := c.p.Resolve(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}

// TestAgentBuildsTheProvidersModelWithNewModel: a conversation that names
// a provider gets its model from AgentConfig.NewModel, which receives the
// provider resolved, and the metrics log describes the model by it;
// without NewModel it fails, naming the constructor and its package.
func TestAgentBuildsTheProvidersModelWithNewModel(t *testing.T) {
	metrics := t.TempDir() + "/metrics.jsonl"
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Metrics: metrics})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	p := toolshelf.Provider{Name: toolshelf.Emulator, Model: "gpt-5.6-sol"}
	if _, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Provider: p}); err == nil ||
		!strings.Contains(err.Error(), "AgentConfig.NewModel") || !strings.Contains(err.Error(), "adapter.New, of package github.com/toolshelf/toolshelf/adapter") {
		t.Errorf("a provider without NewModel: %v", err)
	}
	var got []toolshelf.Provider
	model := llmtest.New(llmtest.Reply{Message: llm.Message{Content: []llm.Part{llm.Text("hi")}, Usage: &llm.Usage{Input: 10, Output: 1}}})
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Provider: p, NewModel: func(p toolshelf.Provider) (llm.Model, error) {
		got = append(got, p)
		return model, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "hello")
	a.Close()
	want, err := p.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]toolshelf.Provider{want}, got); diff != "" || want.API != provider.OpenAIResponses {
		t.Errorf("NewModel got (-want +got):\n%s", diff)
	}
	shelf.Close()
	b, err := os.ReadFile(metrics)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct{ API, Model, Class string }
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if rec.API != string(want.API) || rec.Model != want.Model || rec.Class != string(want.Capabilities.Tools) {
		t.Errorf("the metrics record describes %+v, want the resolved provider's %s %s %s", rec, want.API, want.Model, want.Capabilities.Tools)
	}
}

// forecast is a program's own tool, waiting on the shelf.
var forecast = tool.Tool{Name: "get_forecast", Description: "Get the weather forecast for a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	Exposure:   tool.Deferred,
	Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
		return tool.TextResult("Sunny, 21 °C."), nil
	})}
