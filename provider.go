package toolshelf

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/internal/standin"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/provider/anthropic"
	"github.com/toolshelf/toolshelf/provider/openai"
)

// Provider names a model behind a provider API, for [NewModel] and
// [AgentConfig.Provider]. [Providers] lists the names with their APIs,
// default models and keys.
type Provider struct {
	// Name is a provider of [Providers]: [Anthropic], [OpenAI],
	// [OpenAIChat] or [Emulator] (offline).
	Name string
	// Model is the model id; empty means the provider's
	// [ProviderInfo.DefaultModel]. openai-chat has none and needs one.
	Model string
	// API is the wire format, for the emulator, which speaks them all;
	// empty means the one the model's name suggests ([SuggestAPI]). The
	// other providers speak one API each, and refuse another.
	API provider.API
	// APIKey authenticates; empty means the environment variable of the
	// provider's [ProviderInfo.KeyEnv]. Without either, anthropic and openai
	// fail, openai-chat sends "none" (local servers ignore it) and the
	// emulator needs none.
	APIKey string
	// BaseURL is the API's address; empty means the provider's own. A
	// server's root, such as an emulator's that toolshelf emulate serves,
	// becomes a base URL with [ProviderInfo.BaseURL]. The emulator runs in
	// process and refuses one.
	BaseURL string
	// Capabilities override the model's tool class and flags; nil means
	// the built-in capability table's entry for the API and Model.
	Capabilities *provider.Capabilities
	// MaxTokens bounds each answer; zero means the provider's default.
	MaxTokens int
	// MaxRetries bounds the SDK's retries; nil means its default.
	MaxRetries *int
	// Retention is the Anthropic prompt-cache retention: "5m" (default),
	// "1h" or "none".
	Retention string
	// Emulator is the emulator that answers for the Emulator provider;
	// nil means a new one whose model is toolshelf's stand-in (see
	// [Emulator]). Give one to choose its responder, clock or records.
	Emulator *emulator.Server
}

// Provider names: what [Provider.Name] and the command line's --provider
// take.
const (
	// Anthropic is the Anthropic Messages API.
	Anthropic = "anthropic"
	// OpenAI is the OpenAI Responses API.
	OpenAI = "openai"
	// OpenAIChat is Chat Completions: OpenAI's, and any compatible server's
	// (Ollama, vLLM, llama.cpp, LM Studio).
	OpenAIChat = "openai-chat"
	// Emulator answers offline, in process, with no key: the built-in
	// provider emulator (package emulator) behind the adapter of the
	// model's API, its model a stand-in that knows toolshelf. For the last
	// request it calls a tool whose name the request mentions, or searches
	// with the request's words and calls the first tool the search loaded
	// (arguments made from the tool's schema), and answers with what the
	// tool returned. Requests are validated and their prompt cache
	// simulated as the real APIs do, so usage reports cache reads and
	// writes.
	Emulator = "emulator"
)

// ProviderInfo describes a provider of [Providers].
type ProviderInfo struct {
	// Name is the provider's name (Anthropic, OpenAI, OpenAIChat,
	// Emulator).
	Name string
	// Summary says what it is in a few words, for help texts.
	Summary string
	// API is the wire format its adapter speaks; empty for the emulator,
	// which speaks each (see [ProviderInfo.APIFor]).
	API provider.API
	// DefaultModel is the model an empty [Provider.Model] means; empty
	// when the provider needs one.
	DefaultModel string
	// KeyEnv names the environment variable an empty [Provider.APIKey] is
	// read from; empty when none is.
	KeyEnv string
	// NeedsKey reports that the provider fails without a key.
	NeedsKey bool
	// Offline reports that the provider answers in process: no network,
	// no key.
	Offline bool

	// basePath is what the API's base URL adds to a server's root: "/v1"
	// for OpenAI's APIs; nothing for Anthropic's, whose SDK adds /v1
	// itself.
	basePath string
	// noKey is the key sent without one, "" when the provider needs one.
	noKey string
	// adapter builds the model of a resolved provider on client (nil:
	// the SDK's default client).
	adapter func(p Provider, client *http.Client) (llm.Model, error)
}

// The default models.
const (
	defaultClaude = "claude-opus-5-5"
	defaultGPT    = "gpt-5.6-sol"
)

// providers is the provider table: every name, in the order help texts
// list them.
var providers = []ProviderInfo{
	{Name: Anthropic, Summary: "Anthropic Messages", API: provider.AnthropicMessages, DefaultModel: defaultClaude,
		KeyEnv: "ANTHROPIC_API_KEY", NeedsKey: true, adapter: newAnthropic},
	{Name: OpenAI, Summary: "OpenAI Responses", API: provider.OpenAIResponses, DefaultModel: defaultGPT,
		KeyEnv: "OPENAI_API_KEY", NeedsKey: true, basePath: "/v1", adapter: newResponses},
	{Name: OpenAIChat, Summary: "Chat Completions, OpenAI-compatible servers too", API: provider.OpenAIChat,
		KeyEnv: "OPENAI_API_KEY", basePath: "/v1", noKey: "none", adapter: newChat},
	{Name: Emulator, Summary: "offline, in process, no key",
		DefaultModel: defaultClaude, Offline: true, noKey: "emulator"},
}

// Providers returns the provider table: every name [Provider.Name]
// takes, with its API, default model and key, in the order help texts
// list them.
func Providers() []ProviderInfo { return slices.Clone(providers) }

// LookupProvider returns the provider of a name, and whether the name is
// known.
func LookupProvider(name string) (ProviderInfo, bool) {
	i := slices.IndexFunc(providers, func(p ProviderInfo) bool { return p.Name == name })
	if i < 0 {
		return ProviderInfo{}, false
	}
	return providers[i], true
}

// ProviderOf returns the provider whose adapter speaks an API (the
// emulator, which speaks each, is never the answer), and whether there
// is one.
func ProviderOf(api provider.API) (ProviderInfo, bool) {
	i := slices.IndexFunc(providers, func(p ProviderInfo) bool { return p.API != "" && p.API == api })
	if i < 0 {
		return ProviderInfo{}, false
	}
	return providers[i], true
}

// ProviderNames lists the provider names as a sentence does: "a, b or c".
func ProviderNames() string {
	names := make([]string, len(providers))
	for i, p := range providers {
		names[i] = p.Name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// APIFor returns the API the provider speaks for a model: its own, or for
// the emulator the one the model's name suggests ([SuggestAPI]).
func (p ProviderInfo) APIFor(model string) provider.API {
	if p.API != "" {
		return p.API
	}
	return SuggestAPI(model)
}

// BaseURL returns the base URL of the provider's API on a server whose
// root is root (such as http://127.0.0.1:8089, where toolshelf emulate
// listens): the root itself for Anthropic, whose SDK adds /v1, the root
// with /v1 for OpenAI's APIs. The emulator has no API of its own and
// returns root.
func (p ProviderInfo) BaseURL(root string) string {
	return strings.TrimSuffix(root, "/") + p.basePath
}

// SuggestAPI returns the API a model's name suggests: Claude models speak
// Anthropic Messages, OpenAI's own models (gpt-*, o1/o3/o4-*, codex-*,
// chatgpt-*) the Responses API, and anything else (served by Ollama,
// vLLM, llama.cpp, LM Studio, ...) Chat Completions.
func SuggestAPI(model string) provider.API {
	for _, p := range []string{"claude*", "anthropic/*"} {
		if provider.Match(p, model) {
			return provider.AnthropicMessages
		}
	}
	for _, p := range []string{"gpt-*", "o1*", "o3*", "o4*", "codex-*", "chatgpt-*"} {
		if provider.Match(p, model) {
			return provider.OpenAIResponses
		}
	}
	return provider.OpenAIChat
}

// resolve fills p's defaults and its capabilities, and returns the API
// its adapter speaks.
func (p Provider) resolve() (Provider, provider.API, error) {
	info, ok := LookupProvider(p.Name)
	if !ok {
		if p.Name == "" {
			return p, "", fmt.Errorf("toolshelf: no model: set AgentConfig.Model, or Provider.Name to %s", ProviderNames())
		}
		return p, "", fmt.Errorf("toolshelf: unknown provider %q: use %s", p.Name, ProviderNames())
	}
	if p.Model == "" {
		if info.DefaultModel == "" {
			return p, "", fmt.Errorf("toolshelf: provider %s needs a model: the id the server knows, such as llama3.3", p.Name)
		}
		p.Model = info.DefaultModel
	}
	api := info.APIFor(p.Model)
	switch {
	case p.API == "":
	case !slices.Contains(provider.APIs, p.API):
		return p, "", fmt.Errorf("toolshelf: unknown API %q: use %s", p.API, apiNames())
	case info.API != "" && p.API != info.API:
		return p, "", fmt.Errorf("toolshelf: provider %s speaks %s, not %s: leave Provider.API empty, or name the provider of %[3]s", p.Name, info.API, p.API)
	default:
		api = p.API
	}
	if p.APIKey == "" && info.KeyEnv != "" {
		p.APIKey = os.Getenv(info.KeyEnv)
	}
	if p.APIKey == "" {
		if info.NeedsKey {
			return p, api, fmt.Errorf("toolshelf: provider %s needs an API key: set %s or Provider.APIKey", p.Name, info.KeyEnv)
		}
		p.APIKey = info.noKey // the SDKs want one
	}
	if info.Offline && p.BaseURL != "" {
		return p, api, fmt.Errorf("toolshelf: provider %s runs in process and takes no BaseURL: for an emulator served over HTTP, name the provider of its API with that BaseURL", p.Name)
	}
	if !info.Offline && p.Emulator != nil {
		return p, api, fmt.Errorf("toolshelf: Provider.Emulator is for provider %s, not %s", Emulator, p.Name)
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

// apiNames lists the APIs as a sentence does.
func apiNames() string {
	names := make([]string, len(provider.APIs))
	for i, a := range provider.APIs {
		names[i] = string(a)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// NewModel returns the adapter of a provider: an [llm.Model] on the
// provider's official SDK that renders toolshelf's transcript so the
// prompt cache survives tool changes. For the [Emulator] it is the
// adapter of the model's API, answered in process.
func NewModel(p Provider) (llm.Model, error) {
	p, api, err := p.resolve()
	if err != nil {
		return nil, err
	}
	return newAdapter(p, api)
}

// emulatorRoot is the root URL the offline provider's adapters are
// given; the in-process client never resolves it (.invalid never
// resolves anywhere).
const emulatorRoot = "http://emulator.invalid"

// newAdapter builds the adapter of a resolved provider that speaks api.
func newAdapter(p Provider, api provider.API) (llm.Model, error) {
	info, _ := LookupProvider(p.Name)
	if !info.Offline {
		return info.adapter(p, nil)
	}
	em := p.Emulator
	if em == nil {
		var err error
		if em, err = emulator.New(emulator.Config{Responder: standin.Scout{}}); err != nil {
			return nil, fmt.Errorf("toolshelf: %w", err)
		}
	}
	speaker, _ := ProviderOf(api)
	p.BaseURL = speaker.BaseURL(emulatorRoot)
	return speaker.adapter(p, em.Client())
}

func newAnthropic(p Provider, client *http.Client) (llm.Model, error) {
	return anthropic.New(anthropic.Config{APIKey: p.APIKey, BaseURL: p.BaseURL, Model: p.Model, Capabilities: *p.Capabilities,
		MaxTokens: p.MaxTokens, MaxRetries: p.MaxRetries, Retention: anthropic.Retention(p.Retention), HTTPClient: client})
}

func newResponses(p Provider, client *http.Client) (llm.Model, error) {
	return openai.NewResponses(openaiConfig(p, client))
}

func newChat(p Provider, client *http.Client) (llm.Model, error) {
	return openai.NewChat(openaiConfig(p, client))
}

func openaiConfig(p Provider, client *http.Client) openai.Config {
	return openai.Config{APIKey: p.APIKey, BaseURL: p.BaseURL, Model: p.Model, Capabilities: *p.Capabilities,
		MaxTokens: p.MaxTokens, MaxRetries: p.MaxRetries, HTTPClient: client}
}
