package gemini

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"sync"

	"google.golang.org/genai"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// Model is an [llm.Model] on the Gemini API. It is safe for concurrent
// use.
type Model struct {
	cfg    Config
	client *genai.Client
}

var _ llm.Model = (*Model)(nil)

// New returns a Gemini adapter. It fails when the model id is missing or
// the capabilities name a class the Gemini API cannot render.
func New(cfg Config) (*Model, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	client, err := newClient(cfg, cfg.HTTPClient, cfg.MaxRetries)
	if err != nil {
		return nil, err
	}
	return &Model{cfg: cfg, client: client}, nil
}

// newClient returns an SDK client on the Gemini API backend.
func newClient(cfg Config, hc *http.Client, retries *int) (*genai.Client, error) {
	cc := &genai.ClientConfig{APIKey: cfg.APIKey, Backend: genai.BackendGeminiAPI, HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: cfg.BaseURL}}
	if retries != nil {
		attempts := int32(min(*retries, 1<<30) + 1)
		cc.HTTPOptions.RetryOptions = &genai.HTTPRetryOptions{Attempts: &attempts}
	}
	c, err := genai.NewClient(context.Background(), cc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (set Config.APIKey, or GEMINI_API_KEY)", provider.Gemini, err)
	}
	return c, nil
}

// Capabilities returns the capabilities the adapter renders with.
func (m *Model) Capabilities() provider.Capabilities { return m.cfg.Capabilities }

// errCaptured stops the request RequestBody captures.
var errCaptured = errors.New("gemini: request captured")

// captureTransport keeps the body of the one request it is given and
// sends nothing.
type captureTransport struct {
	mu   sync.Mutex
	last []byte
}

func (t *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var b []byte
	if r.Body != nil {
		var err error
		if b, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
		_ = r.Body.Close()
	}
	t.mu.Lock()
	t.last = b
	t.mu.Unlock()
	return nil, errCaptured
}

// RequestBody returns the JSON body Stream would send for the request:
// the SDK renders it and the request is stopped before anything is sent.
func (m *Model) RequestBody(req *llm.Request) ([]byte, error) {
	contents, config, _, err := m.params(req)
	if err != nil {
		return nil, err
	}
	// One capturing client per call, so concurrent calls do not share
	// what they capture.
	tr := &captureTransport{}
	cfg := m.cfg
	if cfg.APIKey == "" {
		cfg.APIKey = "none" // nothing is sent; the SDK wants a key
	}
	none := 0
	c, err := newClient(cfg, &http.Client{Transport: tr}, &none)
	if err != nil {
		return nil, err
	}
	for _, err := range c.Models.GenerateContentStream(context.Background(), m.cfg.Model, contents, config) {
		if err != nil && !errors.Is(err, errCaptured) {
			return nil, err
		}
		break
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.last == nil {
		return nil, fmt.Errorf("%s: the SDK sent no request body", provider.Gemini)
	}
	return bytes.Clone(tr.last), nil
}

// Stream sends the request to streamGenerateContent and yields the
// answer's events; see [llm.Model].
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		contents, config, plan, err := m.params(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		d := newDecoder(plan, m.cfg.Model)
		if !yield(llm.Event{Type: llm.EventStart}, nil) {
			return
		}
		for chunk, err := range m.client.Models.GenerateContentStream(ctx, m.cfg.Model, contents, config) {
			if err != nil {
				yield(llm.Event{}, streamError(ctx, err))
				return
			}
			for _, ev := range d.handle(chunk) {
				if !yield(ev, nil) {
					return
				}
			}
		}
		evs, err := d.finish()
		if err != nil {
			yield(llm.Event{}, fmt.Errorf("%s: %w", provider.Gemini, err))
			return
		}
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// params renders a request.
func (m *Model) params(req *llm.Request) ([]*genai.Content, *genai.GenerateContentConfig, *provider.Plan, error) {
	if req == nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", provider.Gemini, errNilRequest)
	}
	plan := provider.Build(req.Messages, m.cfg.Capabilities)
	if err := plan.CheckNames(provider.Gemini); err != nil {
		return nil, nil, nil, err
	}
	r := renderer{model: m.cfg.Model, names: map[string]string{}}
	config := &genai.GenerateContentConfig{Tools: tools(plan.Tools)}
	if plan.System != "" {
		config.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: plan.System}}}
	}
	if n := m.cfg.maxTokens(req); n > 0 {
		config.MaxOutputTokens = n
	}
	return r.render(&plan), config, &plan, nil
}
