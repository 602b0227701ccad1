package toolshelf

import (
	"fmt"
	"os"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/provider/anthropic"
	"github.com/toolshelf/toolshelf/provider/openai"
)

// Provider names a model behind a provider API, for [NewModel] and
// [AgentConfig.Provider].
type Provider struct {
	// Name is the API: "anthropic" (Messages), "openai" (Responses) or
	// "openai-chat" (Chat Completions, also any OpenAI-compatible server).
	Name string
	// Model is the model id; empty means claude-opus-5-5 for anthropic and
	// gpt-5.6-sol for openai. openai-chat needs one.
	Model string
	// APIKey authenticates; empty means $ANTHROPIC_API_KEY or
	// $OPENAI_API_KEY (openai-chat: "none" when that is unset too, for local
	// servers that ignore it).
	APIKey string
	// BaseURL is the API's address; empty means the provider's own.
	BaseURL string
	// Capabilities override the model's tool class and flags; nil means
	// the built-in capability table's entry for Name and Model.
	Capabilities *provider.Capabilities
	// MaxTokens bounds each answer; zero means the provider's default.
	MaxTokens int
	// MaxRetries bounds the SDK's retries; nil means its default.
	MaxRetries *int
	// Retention is the Anthropic prompt-cache retention: "5m" (default),
	// "1h" or "none".
	Retention string
}

// Provider names.
const (
	Anthropic  = "anthropic"
	OpenAI     = "openai"
	OpenAIChat = "openai-chat"
)

// API returns the provider API of a provider name, and whether the name is
// known.
func API(name string) (provider.API, bool) {
	switch name {
	case Anthropic:
		return provider.AnthropicMessages, true
	case OpenAI:
		return provider.OpenAIResponses, true
	case OpenAIChat:
		return provider.OpenAIChat, true
	}
	return "", false
}

// resolve fills p's defaults and its capabilities.
func (p Provider) resolve() (Provider, provider.API, error) {
	api, ok := API(p.Name)
	if !ok {
		if p.Name == "" {
			return p, "", fmt.Errorf("toolshelf: no model: set AgentConfig.Model, or Provider.Name to %s, %s or %s", Anthropic, OpenAI, OpenAIChat)
		}
		return p, "", fmt.Errorf("toolshelf: unknown provider %q: use %s, %s or %s", p.Name, Anthropic, OpenAI, OpenAIChat)
	}
	switch p.Name {
	case Anthropic:
		if p.Model == "" {
			p.Model = "claude-opus-5-5"
		}
		if p.APIKey == "" {
			p.APIKey = os.Getenv("ANTHROPIC_API_KEY")
		}
	case OpenAI:
		if p.Model == "" {
			p.Model = "gpt-5.6-sol"
		}
		if p.APIKey == "" {
			p.APIKey = os.Getenv("OPENAI_API_KEY")
		}
	case OpenAIChat:
		if p.Model == "" {
			return p, api, fmt.Errorf("toolshelf: provider %s needs a model: the id the server knows, such as llama3.3", p.Name)
		}
		if p.APIKey == "" {
			p.APIKey = os.Getenv("OPENAI_API_KEY")
		}
		if p.APIKey == "" {
			p.APIKey = "none" // local servers ignore it; the SDK wants one
		}
	}
	if p.APIKey == "" {
		env := map[string]string{Anthropic: "ANTHROPIC_API_KEY", OpenAI: "OPENAI_API_KEY"}[p.Name]
		return p, api, fmt.Errorf("toolshelf: provider %s needs an API key: set %s or Provider.APIKey", p.Name, env)
	}
	if p.Capabilities == nil {
		c := provider.DefaultTable().Lookup(api, p.Model)
		p.Capabilities = &c
	}
	if err := p.Capabilities.Check(api); err != nil {
		return p, api, fmt.Errorf("toolshelf: %s %s: %w", api, p.Model, err)
	}
	return p, api, nil
}

// NewModel returns the adapter of a provider: an [llm.Model] on the
// provider's official SDK that renders toolshelf's transcript so the
// prompt cache survives tool changes.
func NewModel(p Provider) (llm.Model, error) {
	p, api, err := p.resolve()
	if err != nil {
		return nil, err
	}
	return newAdapter(p, api)
}

func newAdapter(p Provider, api provider.API) (llm.Model, error) {
	oc := openai.Config{APIKey: p.APIKey, BaseURL: p.BaseURL, Model: p.Model, Capabilities: *p.Capabilities,
		MaxTokens: p.MaxTokens, MaxRetries: p.MaxRetries}
	switch api {
	case provider.AnthropicMessages:
		return anthropic.New(anthropic.Config{APIKey: p.APIKey, BaseURL: p.BaseURL, Model: p.Model, Capabilities: *p.Capabilities,
			MaxTokens: p.MaxTokens, MaxRetries: p.MaxRetries, Retention: anthropic.Retention(p.Retention)})
	case provider.OpenAIResponses:
		return openai.NewResponses(oc)
	default:
		return openai.NewChat(oc)
	}
}
