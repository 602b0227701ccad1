package adapter

import (
	"fmt"
	"net/http"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/internal/standin"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider/anthropic"
	"github.com/toolshelf/toolshelf/provider/gemini"
	"github.com/toolshelf/toolshelf/provider/openai"
)

// New returns the model of a provider, resolved first
// ([toolshelf.Provider.Resolve]): an [llm.Model] on the provider's
// official SDK that renders toolshelf's transcript so the prompt cache
// survives tool changes. For the [toolshelf.Emulator] it is the adapter of
// the model's API, answered in process by a new emulator whose model is
// toolshelf's stand-in. New is what [toolshelf.AgentConfig.NewModel]
// takes.
func New(p toolshelf.Provider) (llm.Model, error) { return Config{}.New(p) }

// Config chooses what [New] takes as given: the emulator that answers for
// the offline provider. The zero Config builds what New does.
type Config struct {
	// Emulator answers for the [toolshelf.Emulator] provider, and only for
	// it; nil means a new one whose model is toolshelf's stand-in. Give one
	// to choose its responder, clock or records.
	Emulator *emulator.Server
}

// New returns the model of a provider as the package's [New] does, on c's
// emulator. Its method value is a [toolshelf.AgentConfig.NewModel].
func (c Config) New(p toolshelf.Provider) (llm.Model, error) {
	p, err := p.Resolve()
	if err != nil {
		return nil, err
	}
	info, _ := toolshelf.LookupProvider(p.Name)
	if !info.Offline {
		if c.Emulator != nil {
			return nil, fmt.Errorf("adapter: Config.Emulator is for provider %s, not %s", toolshelf.Emulator, p.Name)
		}
		return onSDK(info, p, nil)
	}
	em := c.Emulator
	if em == nil {
		if em, err = emulator.New(emulator.Config{Responder: standin.Scout{}}); err != nil {
			return nil, fmt.Errorf("adapter: %w", err)
		}
	}
	// The emulator speaks each API through the adapter of the provider
	// that speaks it.
	speaker, _ := toolshelf.ProviderOf(p.API)
	p.BaseURL = speaker.BaseURL(emulatorRoot)
	return onSDK(speaker, p, em.Client())
}

// emulatorRoot is the root URL the offline provider's adapters are given;
// the in-process client never resolves it (.invalid never resolves
// anywhere).
const emulatorRoot = "http://emulator.invalid"

// onSDK builds the adapter of a provider on its SDK for the resolved p,
// sending through client (nil: the SDK's default client).
func onSDK(info toolshelf.ProviderInfo, p toolshelf.Provider, client *http.Client) (llm.Model, error) {
	switch info.Name {
	case toolshelf.Anthropic:
		return anthropic.New(anthropic.Config{APIKey: p.APIKey, BaseURL: p.BaseURL, Model: p.Model, Capabilities: *p.Capabilities,
			MaxTokens: p.MaxTokens, MaxRetries: p.MaxRetries, Retention: anthropic.Retention(p.Retention), HTTPClient: client})
	case toolshelf.OpenAI:
		return openai.NewResponses(openaiConfig(p, client))
	case toolshelf.OpenAIChat:
		return openai.NewChat(openaiConfig(p, client))
	case toolshelf.Gemini:
		return gemini.New(gemini.Config{APIKey: p.APIKey, BaseURL: p.BaseURL, Model: p.Model, Capabilities: *p.Capabilities,
			MaxTokens: p.MaxTokens, MaxRetries: p.MaxRetries, HTTPClient: client})
	}
	return nil, fmt.Errorf("adapter: provider %q has no adapter", info.Name)
}

func openaiConfig(p toolshelf.Provider, client *http.Client) openai.Config {
	return openai.Config{APIKey: p.APIKey, BaseURL: p.BaseURL, Model: p.Model, Capabilities: *p.Capabilities,
		MaxTokens: p.MaxTokens, MaxRetries: p.MaxRetries, HTTPClient: client}
}
