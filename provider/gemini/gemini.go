package gemini

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// DefaultBaseURL is the Gemini API's root, used when neither
// Config.BaseURL nor GOOGLE_GEMINI_BASE_URL sets one.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/"

// apiVersion is the version path the requests go to.
const apiVersion = "v1beta"

// Model is an [llm.Model] on the Gemini API. It is safe for concurrent
// use.
type Model struct {
	cfg    Config
	key    string
	url    string // the streamGenerateContent endpoint, with ?alt=sse
	client *http.Client
	// attempts is how often a request is sent at most.
	attempts int
	// backoff returns the wait before retry n (1 for the first); tests
	// replace it.
	backoff func(n int) time.Duration
}

var _ llm.Model = (*Model)(nil)

// New returns a Gemini adapter. It fails when the model id is missing,
// no API key is set, or the capabilities name a class the Gemini API
// cannot render.
func New(cfg Config) (*Model, error) {
	cfg, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	key := cmp.Or(cfg.APIKey, os.Getenv("GOOGLE_API_KEY"), os.Getenv("GEMINI_API_KEY"))
	if key == "" {
		return nil, fmt.Errorf("%s: no API key: set Config.APIKey, or GEMINI_API_KEY (get one at https://ai.google.dev/gemini-api/docs/api-key)", provider.Gemini)
	}
	endpoint, err := streamURL(cmp.Or(cfg.BaseURL, os.Getenv("GOOGLE_GEMINI_BASE_URL"), DefaultBaseURL), cfg.Model)
	if err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, key: key, url: endpoint, client: cfg.HTTPClient, attempts: 1, backoff: backoff}
	if m.client == nil {
		m.client = &http.Client{}
	}
	if cfg.MaxRetries != nil {
		m.attempts = min(*cfg.MaxRetries, 1<<30) + 1
	}
	return m, nil
}

// streamURL returns the streamGenerateContent endpoint of a model:
// {base}/v1beta/models/{model}:streamGenerateContent?alt=sse. A model id
// that already names its collection (models/…, tunedModels/…) keeps it.
func streamURL(base, model string) (string, error) {
	if strings.ContainsAny(model, "?&#") || strings.Contains(model, "..") {
		return "", fmt.Errorf("%s: model id %q holds ?, &, # or ..: use the bare id, for example gemini-3.5-flash", provider.Gemini, model)
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("%s: base URL %q is not an absolute URL, such as %s", provider.Gemini, base, DefaultBaseURL)
	}
	if !strings.HasPrefix(model, "models/") && !strings.HasPrefix(model, "tunedModels/") {
		model = "models/" + model
	}
	u = u.JoinPath(apiVersion, model+":streamGenerateContent")
	u.RawQuery = "alt=sse"
	return u.String(), nil
}

// Capabilities returns the capabilities the adapter renders with.
func (m *Model) Capabilities() provider.Capabilities { return m.cfg.Capabilities }

// RequestBody returns the JSON body Stream sends for the request.
func (m *Model) RequestBody(req *llm.Request) ([]byte, error) {
	body, _, err := m.body(req)
	return body, err
}

// Stream sends the request to streamGenerateContent and yields the
// answer's events; see [llm.Model]. A cancelled ctx ends it with
// ctx.Err().
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		body, plan, err := m.body(req)
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
		res, err := m.send(ctx, body)
		if err != nil {
			yield(llm.Event{}, streamError(ctx, err))
			return
		}
		defer res.Body.Close()
		evs := newEvents(res.Body)
		for {
			data, err := evs.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				yield(llm.Event{}, streamError(ctx, err))
				return
			}
			var chunk response
			if err := json.Unmarshal(data, &chunk); err != nil {
				yield(llm.Event{}, streamError(ctx, fmt.Errorf("a chunk of the answer's stream is not JSON (%v): %s", err, clip(string(data), 200))))
				return
			}
			if chunk.Error != nil {
				yield(llm.Event{}, chunk.Error.apiError())
				return
			}
			for _, ev := range d.handle(&chunk) {
				if !yield(ev, nil) {
					return
				}
			}
		}
		out, err := d.finish()
		if err != nil {
			yield(llm.Event{}, fmt.Errorf("%s: %w", provider.Gemini, err))
			return
		}
		for _, ev := range out {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// body renders a request: the JSON, ending in a newline as the SDK sent
// it, and the plan the answer is decoded against.
func (m *Model) body(req *llm.Request) ([]byte, *provider.Plan, error) {
	if req == nil {
		return nil, nil, fmt.Errorf("%s: %w", provider.Gemini, errNilRequest)
	}
	plan := provider.Build(req.Messages, m.cfg.Capabilities)
	if err := plan.CheckNames(provider.Gemini); err != nil {
		return nil, nil, err
	}
	r := renderer{model: m.cfg.Model, names: map[string]string{}}
	body := request{Contents: r.render(&plan), Tools: tools(plan.Tools)}
	if body.Contents == nil {
		body.Contents = []*content{}
	}
	if plan.System != "" {
		body.SystemInstruction = &content{Parts: []*part{{Text: plan.System}}, Role: "user"}
	}
	body.GenerationConfig.MaxOutputTokens = m.cfg.maxTokens(req)
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(body); err != nil {
		return nil, nil, fmt.Errorf("%s: rendering the request: %w", provider.Gemini, err)
	}
	return b.Bytes(), &plan, nil
}

// retryStatuses are the statuses a request is retried on, as the SDK
// retried them.
var retryStatuses = []int{http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
	http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}

// send posts the body and returns the response of a success status. A
// transport failure or a status of retryStatuses is retried up to the
// configured attempts, after a backoff; the last failure is returned, an
// error status as an *APIError.
func (m *Model) send(ctx context.Context, body []byte) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		res, err := m.post(ctx, body)
		if err == nil && res.StatusCode >= 200 && res.StatusCode < 300 {
			return res, nil
		}
		retry := err != nil || slices.Contains(retryStatuses, res.StatusCode)
		if err == nil {
			err = statusError(res)
			_ = res.Body.Close()
		}
		if !retry || attempt >= m.attempts || ctx.Err() != nil {
			return nil, err
		}
		t := time.NewTimer(m.backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// post sends the body once.
func (m *Model) post(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-goog-api-key", m.key)
	return m.client.Do(req)
}

// backoff is the SDK's wait before retry n: 1 s doubled for each retry,
// plus up to 1 s of jitter, at most 60 s.
func backoff(n int) time.Duration {
	d := time.Second<<min(n-1, 6) + rand.N(time.Second)
	return min(d, 60*time.Second)
}

// errNilRequest is returned for a nil request.
var errNilRequest = errors.New("nil *llm.Request: pass the transcript in a Request")
