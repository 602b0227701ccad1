package openai

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// Config configures a Responses or Chat adapter.
type Config struct {
	// APIKey is sent as a bearer token. Empty means the SDK's default:
	// the OPENAI_API_KEY environment variable when set, else no
	// Authorization header (local servers need none).
	APIKey string
	// BaseURL is the API's root, such as http://localhost:11434/v1 for
	// Ollama. Empty means the SDK's default (OpenAI, or OPENAI_BASE_URL).
	BaseURL string
	// Model is the model id sent with every request; required.
	Model string
	// Capabilities say what the model can express. The zero value means
	// provider.DefaultTable().Lookup(api, Model).
	Capabilities provider.Capabilities
	// MaxTokens bounds each answer when the request sets no bound; zero
	// leaves the field out (the server's default applies).
	MaxTokens int
	// HTTPClient sends the requests; nil means the SDK's default client.
	HTTPClient *http.Client
	// MaxRetries is how often the SDK retries a failed request (408, 409,
	// 429, 5xx, connection errors); nil means the SDK's default (2).
	MaxRetries *int
}

// resolve checks the configuration for an API and fills in the default
// capabilities.
func (c Config) resolve(api provider.API) (Config, error) {
	if c.Model == "" {
		return c, fmt.Errorf("%s: Config.Model is empty: set the model id the server expects (for example gpt-5.6-sol or llama3.2)", api)
	}
	if c.MaxTokens < 0 {
		return c, fmt.Errorf("%s: Config.MaxTokens is %d: use a positive bound, or 0 for the server's default", api, c.MaxTokens)
	}
	if c.MaxRetries != nil && *c.MaxRetries < 0 {
		return c, fmt.Errorf("%s: Config.MaxRetries is %d: use 0 to disable retries", api, *c.MaxRetries)
	}
	if c.Capabilities == (provider.Capabilities{}) {
		c.Capabilities = provider.DefaultTable().Lookup(api, c.Model)
	}
	if err := c.Capabilities.Check(api); err != nil {
		return c, fmt.Errorf("%s model %q: %w", api, c.Model, err)
	}
	return c, nil
}

// client returns an SDK client for the configuration.
func (c Config) client() openai.Client {
	var opts []option.RequestOption
	if c.APIKey != "" {
		opts = append(opts, option.WithAPIKey(c.APIKey))
	}
	if c.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(c.BaseURL))
	}
	if c.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(c.HTTPClient))
	}
	if c.MaxRetries != nil {
		opts = append(opts, option.WithMaxRetries(*c.MaxRetries))
	}
	return openai.NewClient(opts...)
}

// maxTokens returns the answer bound of a request: the request's own, else
// the configuration's, else zero (leave the field out).
func (c Config) maxTokens(req *llm.Request) int64 {
	if req.MaxTokens > 0 {
		return int64(req.MaxTokens)
	}
	return int64(c.MaxTokens)
}

// errNilRequest is returned for a nil request.
var errNilRequest = errors.New("nil *llm.Request: pass the transcript in a Request")
