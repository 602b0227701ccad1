package anthropic

import (
	"errors"
	"fmt"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// Retention is how long Anthropic keeps the prompt cache a request writes.
type Retention string

// The retentions.
const (
	// RetentionShort keeps the cache five minutes (the API's default). The
	// empty Retention means the same.
	RetentionShort Retention = "5m"
	// RetentionLong keeps the cache an hour, on models whose capabilities
	// report LongCacheRetention; others get the short retention.
	RetentionLong Retention = "1h"
	// RetentionNone places no cache breakpoints.
	RetentionNone Retention = "none"
)

// DefaultMaxTokens bounds an answer when neither the Config nor the Request
// sets a limit.
const DefaultMaxTokens = 8192

// Config configures a Model.
type Config struct {
	// APIKey authenticates the requests. Empty leaves the credential to the
	// SDK, which reads ANTHROPIC_API_KEY and its other usual sources.
	APIKey string
	// BaseURL replaces the API's address (a proxy, an emulator); empty
	// keeps the SDK's default (or ANTHROPIC_BASE_URL).
	BaseURL string
	// Model is the model id, such as "claude-opus-5-5". Required.
	Model string
	// Capabilities describe what the model can express. The zero value
	// (no tool class) means what provider.DefaultTable gives the model.
	Capabilities provider.Capabilities
	// Retention is the prompt cache retention; empty means RetentionShort.
	Retention Retention
	// MaxTokens bounds each answer unless the Request sets a bound; zero
	// means DefaultMaxTokens.
	MaxTokens int
	// HTTPClient sends the requests; nil means the SDK's default client.
	HTTPClient *http.Client
	// MaxRetries is how often the SDK retries a request that failed with a
	// retryable status (408, 409, 429, 5xx); nil means the SDK's default.
	MaxRetries *int
}

// Model is an llm.Model that talks to Anthropic's Messages API. It is safe
// for concurrent use.
type Model struct {
	cfg    Config
	caps   provider.Capabilities
	client sdk.Client
}

var _ llm.Model = (*Model)(nil)

// New checks a configuration and returns its Model. It sends nothing.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("anthropic: no model: set Config.Model to a model id such as \"claude-opus-5-5\"")
	}
	caps := cfg.Capabilities
	if caps.Tools == "" {
		caps = provider.DefaultTable().Lookup(provider.AnthropicMessages, cfg.Model)
	}
	if err := caps.Check(provider.AnthropicMessages); err != nil {
		return nil, fmt.Errorf("anthropic: capabilities of model %q: %w", cfg.Model, err)
	}
	switch cfg.Retention {
	case "", RetentionShort, RetentionLong, RetentionNone:
	default:
		return nil, fmt.Errorf("anthropic: unknown cache retention %q: use %q, %q or %q",
			cfg.Retention, RetentionShort, RetentionLong, RetentionNone)
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("anthropic: MaxTokens is %d: use a positive bound, or 0 for the default %d", cfg.MaxTokens, DefaultMaxTokens)
	}
	if cfg.MaxRetries != nil && *cfg.MaxRetries < 0 {
		return nil, fmt.Errorf("anthropic: MaxRetries is %d: use 0 to disable retries, or leave it nil for the SDK default", *cfg.MaxRetries)
	}
	var opts []option.RequestOption
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	if cfg.MaxRetries != nil {
		opts = append(opts, option.WithMaxRetries(*cfg.MaxRetries))
	}
	return &Model{cfg: cfg, caps: caps, client: sdk.NewClient(opts...)}, nil
}

// Capabilities returns the capabilities the model renders with: the
// configured ones or the default table's.
func (m *Model) Capabilities() provider.Capabilities { return m.caps }

// maxTokens returns the bound for a request.
func (m *Model) maxTokens(requested int) int64 {
	switch {
	case requested > 0:
		return int64(requested)
	case m.cfg.MaxTokens > 0:
		return int64(m.cfg.MaxTokens)
	}
	return DefaultMaxTokens
}
