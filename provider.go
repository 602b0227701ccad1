package toolshelf

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/provider"
)

// Provider names a model behind a provider API, for
// [AgentConfig.Provider]. [Providers] lists the names with their APIs,
// default models and keys. A Provider is data: [AgentConfig.NewModel]
// builds the model it names (New of package
// github.com/toolshelf/toolshelf/adapter does, on the provider's SDK), so
// this package links no SDK.
type Provider struct {
	// Name is a provider of [Providers]: [Anthropic], [OpenAI],
	// [OpenAIChat], [Gemini] or [Emulator] (offline).
	Name string
	// Model is the model id; empty means the provider's
	// [ProviderInfo.DefaultModel]. openai-chat has none and needs one.
	Model string
	// API is the wire format, for the emulator, which speaks them all;
	// empty means the one the model's name suggests ([SuggestAPI]). The
	// other providers speak one API each, and refuse another. A resolved
	// provider ([Provider.Resolve]) names the API its adapter speaks.
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
	// Gemini is Google's Gemini API.
	Gemini = "gemini"
	// Emulator answers offline, in process, with no key: the built-in
	// provider emulator (package emulator) behind the adapter of the
	// model's API, its model a stand-in that knows toolshelf (package
	// adapter builds it, as it builds the others). For the last
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
	// Name is the provider's name (Anthropic, OpenAI, OpenAIChat, Gemini,
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
	// read from; empty when none is. Gemini's falls back on
	// GOOGLE_API_KEY, which Google's SDK reads too.
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
	// altKeyEnv is read when KeyEnv is empty.
	altKeyEnv string
}

// The default models.
const (
	defaultClaude = "claude-opus-5-5"
	defaultGPT    = "gpt-5.6-sol"
	defaultGemini = "gemini-3.5-flash"
)

// providers is the provider table: every name, in the order help texts
// list them.
var providers = []ProviderInfo{
	{Name: Anthropic, Summary: "Anthropic Messages", API: provider.AnthropicMessages, DefaultModel: defaultClaude,
		KeyEnv: "ANTHROPIC_API_KEY", NeedsKey: true},
	{Name: OpenAI, Summary: "OpenAI Responses", API: provider.OpenAIResponses, DefaultModel: defaultGPT,
		KeyEnv: "OPENAI_API_KEY", NeedsKey: true, basePath: "/v1"},
	{Name: OpenAIChat, Summary: "Chat Completions, OpenAI-compatible servers too", API: provider.OpenAIChat,
		KeyEnv: "OPENAI_API_KEY", basePath: "/v1", noKey: "none"},
	{Name: Gemini, Summary: "Google Gemini API", API: provider.Gemini, DefaultModel: defaultGemini,
		KeyEnv: "GEMINI_API_KEY", altKeyEnv: "GOOGLE_API_KEY", NeedsKey: true},
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
// chatgpt-*) the Responses API, Google's (gemini-*) the Gemini API, and
// anything else (served by Ollama,
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
	for _, p := range []string{"gemini-*", "models/gemini-*"} {
		if provider.Match(p, model) {
			return provider.Gemini
		}
	}
	return provider.OpenAIChat
}

// Resolve returns p with its defaults filled, as a model's constructor
// ([AgentConfig.NewModel]) gets it: the model ([ProviderInfo.DefaultModel]),
// the API its adapter speaks in API, the key (from [ProviderInfo.KeyEnv],
// else the placeholder a keyless provider sends) and the capabilities
// (the built-in capability table's for the API and model). It fails,
// saying what to change, on an unknown provider or API, an API the
// provider does not speak, a missing model or key, a BaseURL for the
// in-process emulator and capabilities the API cannot render. A resolved
// provider resolves to itself.
func (p Provider) Resolve() (Provider, error) {
	info, ok := LookupProvider(p.Name)
	if !ok {
		if p.Name == "" {
			return p, fmt.Errorf("toolshelf: no model: set AgentConfig.Model, or Provider.Name to %s", ProviderNames())
		}
		return p, fmt.Errorf("toolshelf: unknown provider %q: use %s", p.Name, ProviderNames())
	}
	if p.Model == "" {
		if info.DefaultModel == "" {
			return p, fmt.Errorf("toolshelf: provider %s needs a model: the id the server knows, such as llama3.3", p.Name)
		}
		p.Model = info.DefaultModel
	}
	switch {
	case p.API == "":
		p.API = info.APIFor(p.Model)
	case !slices.Contains(provider.APIs, p.API):
		return p, fmt.Errorf("toolshelf: unknown API %q: use %s", p.API, apiNames())
	case info.API != "" && p.API != info.API:
		return p, fmt.Errorf("toolshelf: provider %s speaks %s, not %s: leave Provider.API empty, or name the provider of %[3]s", p.Name, info.API, p.API)
	}
	if p.APIKey == "" && info.KeyEnv != "" {
		p.APIKey = os.Getenv(info.KeyEnv)
	}
	if p.APIKey == "" && info.altKeyEnv != "" {
		p.APIKey = os.Getenv(info.altKeyEnv)
	}
	if p.APIKey == "" {
		if info.NeedsKey {
			env := info.KeyEnv
			if info.altKeyEnv != "" {
				env += " (or " + info.altKeyEnv + ")"
			}
			return p, fmt.Errorf("toolshelf: provider %s needs an API key: set %s or Provider.APIKey", p.Name, env)
		}
		p.APIKey = info.noKey // the SDKs want one
	}
	if info.Offline && p.BaseURL != "" {
		return p, fmt.Errorf("toolshelf: provider %s runs in process and takes no BaseURL: for an emulator served over HTTP, name the provider of its API with that BaseURL", p.Name)
	}
	if p.Capabilities == nil {
		c := provider.DefaultTable().Lookup(p.API, p.Model)
		p.Capabilities = &c
	}
	if err := p.Capabilities.Check(p.API); err != nil {
		return p, fmt.Errorf("toolshelf: %s %s: %w", p.API, p.Model, err)
	}
	return p, nil
}

// apiNames lists the APIs as a sentence does.
func apiNames() string {
	names := make([]string, len(provider.APIs))
	for i, a := range provider.APIs {
		names[i] = string(a)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
