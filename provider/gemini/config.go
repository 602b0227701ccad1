package gemini

import (
	"fmt"
	"net/http"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// Config configures a Gemini adapter.
type Config struct {
	// APIKey is sent as the x-goog-api-key header. Empty means the
	// GOOGLE_API_KEY environment variable, else GEMINI_API_KEY.
	APIKey string
	// BaseURL is the API's root, without the version (the adapter adds
	// /v1beta). Empty means GOOGLE_GEMINI_BASE_URL, else
	// [DefaultBaseURL].
	BaseURL string
	// Model is the model id sent with every request; required.
	Model string
	// Capabilities say what the model can express. The zero value means
	// provider.DefaultTable().Lookup(provider.Gemini, Model).
	Capabilities provider.Capabilities
	// MaxTokens bounds each answer when the request sets no bound; zero
	// leaves maxOutputTokens out (the model's default applies).
	MaxTokens int
	// HTTPClient sends the requests; nil means a new http.Client.
	HTTPClient *http.Client
	// MaxRetries is how often a failed request is retried (a transport
	// failure, or HTTP 408, 429, 500, 502, 503 or 504), after 1 s doubled
	// for each retry plus up to 1 s of jitter (at most 60 s); nil means
	// none.
	MaxRetries *int
}

// resolve checks the configuration and fills in the default capabilities.
func (c Config) resolve() (Config, error) {
	if c.Model == "" {
		return c, fmt.Errorf("%s: Config.Model is empty: set the model id, for example gemini-3.5-flash", provider.Gemini)
	}
	if c.MaxTokens < 0 {
		return c, fmt.Errorf("%s: Config.MaxTokens is %d: use a positive bound, or 0 for the model's default", provider.Gemini, c.MaxTokens)
	}
	if c.MaxRetries != nil && *c.MaxRetries < 0 {
		return c, fmt.Errorf("%s: Config.MaxRetries is %d: use 0 to disable retries", provider.Gemini, *c.MaxRetries)
	}
	if c.Capabilities == (provider.Capabilities{}) {
		c.Capabilities = provider.DefaultTable().Lookup(provider.Gemini, c.Model)
	}
	if err := c.Capabilities.Check(provider.Gemini); err != nil {
		return c, fmt.Errorf("%s model %q: %w", provider.Gemini, c.Model, err)
	}
	return c, nil
}

// maxTokens returns the answer bound of a request: the request's own, else
// the configuration's, else zero (leave the field out).
func (c Config) maxTokens(req *llm.Request) int32 {
	n := c.MaxTokens
	if req.MaxTokens > 0 {
		n = req.MaxTokens
	}
	return int32(min(n, 1<<31-1))
}
