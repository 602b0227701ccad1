package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/toolshelf/toolshelf/tokens"
)

// Config configures a Server.
type Config struct {
	// Responder plays the model; nil means Echo.
	Responder Responder
	// Now is the clock cache lifetimes are measured on; nil means
	// time.Now. Tests and benchmarks pass a controllable clock.
	Now func() time.Time
	// ContextWindow caps a request's prompt tokens; a longer prompt gets
	// the provider's context-length error. Zero means the model's default
	// (see DefaultContextWindow); negative means no cap.
	ContextWindow int
	// MaxBodyBytes caps a request body; zero means 32 MiB.
	MaxBodyBytes int64
	// BodyTimeout bounds the time a request's body may take to arrive,
	// from when its handling starts: a body that trickles in, or that
	// promises more bytes than it sends, is answered 408 and its
	// connection closed (the http.Server's ReadHeaderTimeout bounds only
	// the headers). Zero means DefaultBodyTimeout; negative means no bound.
	// It needs a ResponseWriter whose connection takes read deadlines, as
	// net/http's does.
	BodyTimeout time.Duration
	// Observe, when set, receives a record of every request, in order.
	Observe func(Record)
	// Counter counts tokens; nil means tokens.Default().
	Counter *tokens.Counter
	// KeepBodies puts each request's body in its Record.
	KeepBodies bool
}

// DefaultBodyTimeout is the BodyTimeout of a zero Config.
const DefaultBodyTimeout = 30 * time.Second

// Record is what the server saw and answered for one request.
type Record struct {
	Seq    int    `json:"seq"`
	API    API    `json:"api"`
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	// Status is the HTTP status; Error the message of an error answer.
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
	// OverWindow reports a request refused for exceeding the model's
	// context window.
	OverWindow bool `json:"overWindow,omitempty"`
	// Input counts every prompt token; ToolTokens those of tool
	// definitions (top-level, added mid-conversation or described in
	// text).
	Input      int `json:"input"`
	ToolTokens int `json:"toolTokens"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	Uncached   int `json:"uncached"`
	Output     int `json:"output"`
	// Ideal is what a cache that kept every earlier prompt could have
	// served (same namespace, model, granularity and minimum length).
	Ideal int `json:"ideal"`
	// Tools counts the tools callable at the end of the request.
	Tools int `json:"tools"`
	// CountTokens marks an Anthropic count_tokens request: its prompt is
	// counted (Input, ToolTokens), not answered, and the cache is not
	// touched.
	CountTokens bool `json:"countTokens,omitempty"`
	// Key is the request's API key.
	Key string `json:"-"`
	// Body is the request body, when Config.KeepBodies is set.
	Body []byte `json:"-"`
}

// Server is the emulator: an http.Handler that speaks Anthropic Messages
// (POST /v1/messages), OpenAI Responses (POST /v1/responses), Chat
// Completions (POST /v1/chat/completions) and the Gemini API (POST
// /v1beta/models/{model}:generateContent and :streamGenerateContent).
type Server struct {
	cfg     Config
	counter *tokens.Counter
	cache   *cache
	codecs  map[API]codec

	mu  sync.Mutex
	seq int
}

// New returns a server.
func New(cfg Config) (*Server, error) {
	if cfg.Responder == nil {
		cfg.Responder = Echo{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 32 << 20
	}
	if cfg.BodyTimeout == 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	c := cfg.Counter
	if c == nil {
		var err error
		if c, err = tokens.Default(); err != nil {
			return nil, err
		}
	}
	return &Server{cfg: cfg, counter: c, cache: newCache(), codecs: map[API]codec{
		AnthropicMessages: anthropicCodec{},
		OpenAIResponses:   responsesCodec{},
		OpenAIChat:        chatCodec{},
	}}, nil
}

// route returns the API a path belongs to; count is set for Anthropic's
// count_tokens.
func route(path string) (api API, count, ok bool) {
	switch strings.TrimSuffix(path, "/") {
	case "/v1/messages", "/messages":
		return AnthropicMessages, false, true
	case "/v1/messages/count_tokens", "/messages/count_tokens":
		return AnthropicMessages, true, true
	case "/v1/responses", "/responses":
		return OpenAIResponses, false, true
	case "/v1/chat/completions", "/chat/completions":
		return OpenAIChat, false, true
	}
	return "", false, false
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api, count, ok := route(r.URL.Path)
	var c codec
	if gc, isGemini := geminiRoute(r.URL); isGemini {
		api, ok, c = Gemini, true, gc
	}
	if !ok && geminiLike(r.URL.Path) {
		geminiCodec{}.writeError(w, &Error{Status: http.StatusNotFound, Type: "NOT_FOUND",
			Message: fmt.Sprintf("Unknown request URL: %s %s. The emulator serves POST /v1beta/models/{model}:generateContent and :streamGenerateContent.", r.Method, r.URL.Path)})
		return
	}
	if !ok {
		// Answer in the shape of the API the path looks like.
		c := s.codecs[OpenAIChat]
		if strings.Contains(r.URL.Path, "messages") {
			c = s.codecs[AnthropicMessages]
		}
		c.writeError(w, &Error{Status: http.StatusNotFound, Type: "not_found_error", Code: "unknown_url",
			Message: fmt.Sprintf("Unknown request URL: %s %s. The emulator serves POST /v1/messages, /v1/messages/count_tokens, /v1/responses and /v1/chat/completions.", r.Method, r.URL.Path)})
		return
	}
	if c == nil {
		c = s.codecs[api]
	}
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	rec := Record{Seq: seq, API: api, Key: APIKey(r.Header), CountTokens: count}
	if api == Gemini {
		rec.Key = geminiKey(r)
	}
	fail := func(e *Error) {
		rec.Status, rec.Error = e.Status, e.Message
		s.observe(rec)
		c.writeError(w, e)
	}
	if r.Method != http.MethodPost {
		fail(&Error{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error", Code: "method_not_allowed",
			Message: fmt.Sprintf("Method %s is not allowed; use POST.", r.Method)})
		return
	}
	if rec.Key == "" && api == Gemini {
		fail(geminiNoKey())
		return
	}
	if rec.Key == "" {
		fail(&Error{Status: http.StatusUnauthorized, Type: authType(api), Code: "invalid_api_key",
			Message: "No API key provided: send x-api-key (Anthropic) or Authorization: Bearer <key>. The emulator accepts any key."})
		return
	}
	body, err := s.readBody(w, r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.Is(err, os.ErrDeadlineExceeded) {
			came := fmt.Sprintf("%d bytes came", len(body))
			if r.ContentLength >= 0 {
				came = fmt.Sprintf("%d of the %d bytes its Content-Length promised came", len(body), r.ContentLength)
			}
			fail(&Error{Status: http.StatusRequestTimeout, Type: "invalid_request_error", Code: "request_timeout",
				Message: fmt.Sprintf("The request body did not arrive within %s: %s.", s.cfg.BodyTimeout, came)})
			return
		}
		if errors.As(err, &tooLarge) {
			fail(&Error{Status: http.StatusRequestEntityTooLarge, Type: "request_too_large", Code: "request_too_large",
				Message: fmt.Sprintf("Request exceeds the maximum allowed number of bytes (%d).", s.cfg.MaxBodyBytes)})
			return
		}
		fail(&Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: "reading the request body: " + err.Error()})
		return
	}
	if s.cfg.KeepBodies {
		rec.Body = body
	}
	decode := c.decode
	if count {
		decode = anthropicCodec{}.decodeCount
	}
	ex, apiErr := decode(r.Header, body)
	if apiErr != nil {
		fail(apiErr)
		return
	}
	ex.Seq, ex.Header = seq, r.Header
	ex.Namespace = rec.Key + "\x00" + ex.Namespace
	rec.Model, rec.Stream, rec.Tools = ex.Model, ex.Stream, len(ex.Tools)
	total, toolTokens := 0, 0
	for i := range ex.Segments {
		seg := &ex.Segments[i]
		if seg.Text != "" {
			seg.Tokens = s.counter.Count(seg.Text)
		} else {
			seg.Tokens = s.counter.CountBytes(seg.Bytes)
		}
		total += seg.Tokens
		if seg.ToolDef {
			toolTokens += seg.Tokens
		} else if seg.Text != "" {
			toolTokens += s.textDefinitionTokens(seg.Text)
		}
	}
	rec.Input, rec.ToolTokens = total, toolTokens
	if count {
		rec.Status = http.StatusOK
		s.observe(rec)
		anthWriteCount(w, ex, total)
		return
	}
	if limit := s.contextWindow(api, ex.Model); limit > 0 && total > limit {
		rec.OverWindow = true
		fail(contextError(api, total, limit))
		return
	}
	out := s.cache.apply(ex, s.cfg.Now())
	reply, err := s.cfg.Responder.Respond(r.Context(), ex)
	if err != nil {
		status := http.StatusInternalServerError
		if errors.Is(err, context.Canceled) {
			status = 499
		}
		fail(&Error{Status: status, Type: "api_error", Code: "server_error", Message: "the responder failed: " + err.Error()})
		return
	}
	if err := responsesOnly(api, reply); err != nil {
		fail(&Error{Status: http.StatusInternalServerError, Type: "api_error", Code: "server_error", Message: "the responder failed: " + err.Error()})
		return
	}
	u := Usage{Input: total, CacheRead: out.read, CacheWrite: out.write, CacheWriteShort: out.writeShort,
		CacheWriteLong: out.writeLong, Output: s.outputTokens(reply), Reasoning: s.counter.Count(reply.Thinking)}
	rec.Status = http.StatusOK
	rec.CacheRead, rec.CacheWrite, rec.Uncached, rec.Output, rec.Ideal = out.read, out.write, u.Uncached(), u.Output, out.ideal
	// Observe first: a client that has read the reply finds its record.
	s.observe(rec)
	c.writeReply(w, ex, reply, u)
}

// readBody reads a request's body within MaxBodyBytes and BodyTimeout. On
// success the read deadline is lifted again (the reply may stream for
// long); after a failure it stays, so the server does not wait for the
// rest of the body before closing the connection.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	bounded := s.cfg.BodyTimeout > 0 && rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)) == nil
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err == nil && bounded {
		_ = rc.SetReadDeadline(time.Time{})
	}
	return body, err
}

func (s *Server) observe(r Record) {
	if s.cfg.Observe != nil {
		s.cfg.Observe(r)
	}
}

// outputTokens counts a reply's text, thinking and calls.
func (s *Server) outputTokens(r *Reply) int {
	n := s.counter.Count(r.Text) + s.counter.Count(r.Thinking)
	for _, c := range r.Calls {
		n += s.counter.Count(c.Name) + s.counter.CountBytes(c.Arguments)
	}
	return max(n, 1)
}

// textDefinitionTokens counts the tool definitions a text carries as
// JSON lines (TextToolDefinition), as toolshelf's bridge updates do.
func (s *Server) textDefinitionTokens(text string) int {
	if !strings.Contains(text, `"parameters"`) {
		return 0
	}
	n := 0
	for line := range strings.Lines(text) {
		if _, _, ok := TextToolDefinition(line); ok {
			n += s.counter.Count(strings.TrimSpace(line))
		}
	}
	return n
}

// APIKey returns a request's API key, from x-api-key or a bearer token.
// Responders that serve several clients at once can tell them apart by it.
func APIKey(h http.Header) string {
	if k := h.Get("X-Api-Key"); k != "" {
		return k
	}
	if a := h.Get("Authorization"); a != "" {
		return strings.TrimSpace(strings.TrimPrefix(a, "Bearer"))
	}
	return ""
}

func authType(api API) string {
	if api == AnthropicMessages {
		return "authentication_error"
	}
	return "invalid_request_error"
}

// DefaultContextWindow returns the prompt token limit the emulator
// applies to a model when Config.ContextWindow is zero: 200,000 for
// Claude models, 400,000 for OpenAI's gpt-5 and later on Responses,
// 1,048,576 for the Gemini API, 128,000 otherwise.
func DefaultContextWindow(api API, model string) int {
	switch {
	case api == AnthropicMessages:
		return 200_000
	case api == Gemini:
		return 1_048_576
	case strings.HasPrefix(model, "gpt-5") || strings.HasPrefix(model, "gpt-6"):
		return 400_000
	}
	return 128_000
}

func (s *Server) contextWindow(api API, model string) int {
	switch {
	case s.cfg.ContextWindow < 0:
		return 0
	case s.cfg.ContextWindow > 0:
		return s.cfg.ContextWindow
	}
	return DefaultContextWindow(api, model)
}

// contextError is the provider's answer to a prompt over the window.
func contextError(api API, tokens, limit int) *Error {
	if api == AnthropicMessages {
		return &Error{Status: http.StatusBadRequest, Type: "invalid_request_error",
			Message: fmt.Sprintf("prompt is too long: %d tokens > %d maximum", tokens, limit)}
	}
	return &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "context_length_exceeded",
		Param: "input", Message: fmt.Sprintf("Your input exceeds the context window of this model: %d tokens > %d maximum.", tokens, limit)}
}

// responsesOnly refuses a reply's calls that only the Responses API can
// carry (a namespace, a tool_search_call) on another API.
func responsesOnly(api API, r *Reply) error {
	if api == OpenAIResponses {
		return nil
	}
	for i, c := range r.Calls {
		if c.Namespace != "" || c.Type == CallToolSearch {
			return fmt.Errorf("tool call %d has a namespace or type %q, which only the OpenAI Responses API carries, not %s", i+1, CallToolSearch, api)
		}
	}
	return nil
}
