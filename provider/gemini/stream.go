package gemini

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/internal/cut"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// decoder folds streamGenerateContent chunks into an assistant message.
// Consecutive text parts form one text part and consecutive thoughts one
// thinking part; a functionCall part arrives whole. A thought signature
// on a part that is not a thought is kept in a thinking part of its own
// (signature only, no text) just before it, so the renderer can put it
// back.
type decoder struct {
	plan   *provider.Plan
	msg    llm.Message
	reason string
	// message is the finish message of a stop the API explains.
	message string
	chunks  int
	calls   int
}

func newDecoder(plan *provider.Plan, model string) *decoder {
	return &decoder{plan: plan, msg: llm.Message{Role: llm.RoleAssistant, Model: model}}
}

func (d *decoder) handle(chunk *response) []llm.Event {
	d.chunks++
	if chunk == nil {
		return nil
	}
	if u := chunk.UsageMetadata; u != nil {
		cached := u.CachedContentTokenCount
		d.msg.Usage = &llm.Usage{Input: max(u.PromptTokenCount+u.ToolUsePromptTokenCount-cached, 0),
			CacheRead: cached, Output: u.CandidatesTokenCount + u.ThoughtsTokenCount}
	}
	if f := chunk.PromptFeedback; f != nil && f.BlockReason != "" {
		d.reason, d.message = f.BlockReason, cmp.Or(f.BlockReasonMessage, "the prompt was blocked ("+f.BlockReason+")")
	}
	var evs []llm.Event
	for _, c := range chunk.Candidates {
		if c == nil || c.Index != 0 {
			continue // one answer per request; other candidates are not asked for
		}
		if c.FinishReason != "" && c.FinishReason != finishUnset {
			d.reason, d.message = c.FinishReason, c.FinishMessage
		}
		if c.Content == nil {
			continue
		}
		for _, p := range c.Content.Parts {
			if p == nil {
				continue
			}
			evs = append(evs, d.part(p)...)
		}
	}
	return evs
}

// part adds one part of the answer.
func (d *decoder) part(p *part) []llm.Event {
	sig := ""
	if len(p.ThoughtSignature) > 0 {
		sig = base64.StdEncoding.EncodeToString(p.ThoughtSignature)
	}
	switch {
	case p.Thought:
		ev := d.delta(llm.PartThinking, p.Text)
		if sig != "" {
			d.msg.Content[len(d.msg.Content)-1].Signature = sig
		}
		if p.Text == "" {
			return nil
		}
		return []llm.Event{ev}
	case p.FunctionCall != nil:
		if sig != "" {
			d.msg.Content = append(d.msg.Content, llm.Part{Type: llm.PartThinking, Redacted: true, Signature: sig})
		}
		fc := p.FunctionCall
		args := []byte("{}")
		if fc.Args != nil {
			if b, err := json.Marshal(fc.Args); err == nil {
				args = b
			}
		}
		id := fc.ID
		if id == "" {
			id = adapt.NewCallID(generatedIDPrefix) // the transcript needs one
		}
		call := d.plan.Unwrap(llm.ToolCall{ID: id, Name: fc.Name, Arguments: args})
		d.msg.Content = append(d.msg.Content, llm.Part{Type: llm.PartToolCall, ToolCall: &call})
		d.calls++
		ev := call
		return []llm.Event{{Type: llm.EventToolCall, Index: len(d.msg.Content) - 1, ToolCall: &ev}}
	case p.Text != "" || sig != "":
		if sig != "" {
			// A signature starts a part of its own, so it stays with
			// the text it came with.
			d.msg.Content = append(d.msg.Content, llm.Part{Type: llm.PartThinking, Redacted: true, Signature: sig})
		}
		if p.Text == "" {
			return nil
		}
		return []llm.Event{d.delta(llm.PartText, p.Text)}
	}
	return nil
}

// delta adds text to the last part when it has the type, else to a new one.
func (d *decoder) delta(t llm.PartType, text string) llm.Event {
	n := len(d.msg.Content)
	if n == 0 || d.msg.Content[n-1].Type != t || d.msg.Content[n-1].Redacted {
		d.msg.Content = append(d.msg.Content, llm.Part{Type: t})
		n++
	}
	d.msg.Content[n-1].Text += text
	typ := llm.EventTextDelta
	if t == llm.PartThinking {
		typ = llm.EventThinkingDelta
	}
	return llm.Event{Type: typ, Index: n - 1, Delta: text}
}

// finish ends the answer with its stop reason.
func (d *decoder) finish() ([]llm.Event, error) {
	if d.reason == "" {
		if d.chunks == 0 {
			return nil, errors.New("the stream ended without any chunk: check that the server speaks the Gemini API at this base URL")
		}
		return nil, errors.New("the stream ended without a finishReason: the connection was cut or the server stopped early; retry the request")
	}
	m := &d.msg
	switch d.reason {
	case finishStop:
		m.StopReason = llm.StopEnd
		if d.calls > 0 {
			m.StopReason = llm.StopToolUse
		}
	case finishMaxTokens:
		m.StopReason = llm.StopLength
	default:
		m.StopReason = llm.StopError
		m.ErrorMessage = fmt.Sprintf("the model stopped with %s", d.reason)
		if d.message != "" {
			m.ErrorMessage += ": " + d.message
		}
	}
	done := m.Clone()
	return []llm.Event{{Type: llm.EventDone, Message: &done}}, nil
}

// APIError is a failure the Gemini API reported.
type APIError struct {
	// StatusCode is the HTTP status; for an error object inside the
	// stream, the object's code.
	StatusCode int
	// Status is the error's status, such as INVALID_ARGUMENT or
	// RESOURCE_EXHAUSTED.
	Status string
	// Message is the server's explanation.
	Message string
}

// Error names the status and the message, and what usually fixes it.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: HTTP %d", provider.Gemini, e.StatusCode)
	if text := http.StatusText(e.StatusCode); text != "" {
		b.WriteString(" " + text)
	}
	if e.Status != "" {
		b.WriteString(" (" + e.Status + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if hint := e.hint(); hint != "" {
		b.WriteString(" — " + hint)
	}
	return b.String()
}

func (e *APIError) hint() string {
	switch s := e.StatusCode; {
	case s == http.StatusUnauthorized || s == http.StatusForbidden || e.Status == "PERMISSION_DENIED" || e.Status == "UNAUTHENTICATED":
		return "check the API key (Config.APIKey, GEMINI_API_KEY or GOOGLE_API_KEY)"
	case s == http.StatusNotFound:
		return "check the model id and the base URL"
	case s == http.StatusTooManyRequests:
		return "rate limited or out of quota: wait and retry"
	case s >= 500:
		return "the server failed: retry later"
	}
	return ""
}

// streamError turns a failure of the request or its stream into the
// adapter's error: the context's error on a cancellation, an *APIError as
// it is, anything else prefixed with the provider.
func streamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	return fmt.Errorf("%s: %w", provider.Gemini, err)
}

// maxErrorBody bounds how much of an error status's body is read.
const maxErrorBody = 64 << 10

// statusError reads the API's error from a response with an error status:
// its {"error": {...}} object, else the body's text (at most 500 bytes of
// it).
func statusError(res *http.Response) *APIError {
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	e := &APIError{StatusCode: res.StatusCode}
	var wrapper struct {
		Error *errorObject `json:"error"`
	}
	if json.Unmarshal(body, &wrapper) == nil && wrapper.Error != nil && wrapper.Error.Message+wrapper.Error.Status != "" {
		e.Status, e.Message = wrapper.Error.Status, wrapper.Error.Message
		return e
	}
	text := strings.TrimSpace(string(body))
	e.Message = clip(text, 500)
	return e
}

// maxEvent bounds one server-sent event of the stream (its data lines
// together): a chunk is a few kilobytes, an inline image a few
// megabytes.
const maxEvent = 16 << 20

// errEventTooLarge is returned for a stream event over maxEvent.
var errEventTooLarge = fmt.Errorf("an event of the answer's stream is over %d MiB: the server is not the Gemini API, or it failed", maxEvent>>20)

// events reads the server-sent events of a stream and returns the data of
// each: its data lines joined with newlines. Comments and the other
// fields (event, id, retry) are skipped.
type events struct {
	sc   *bufio.Scanner
	data []byte
	has  bool
}

func newEvents(r io.Reader) *events {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxEvent+len("data: \r\n"))
	return &events{sc: sc}
}

// next returns the data of the next event; io.EOF at the end of the
// stream. The slice is valid until the next call.
func (e *events) next() ([]byte, error) {
	e.data, e.has = e.data[:0], false
	for e.sc.Scan() {
		line := e.sc.Bytes()
		if len(line) == 0 {
			if e.has {
				return e.data, nil
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			if len(field) > 0 && field[0] == '{' {
				// A JSON body where events were expected, such as
				// an error object.
				return nil, jsonInsteadOfEvents(line)
			}
			continue
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if e.has {
			e.data = append(e.data, '\n')
		}
		if len(e.data)+len(value) > maxEvent {
			return nil, errEventTooLarge
		}
		e.data, e.has = append(e.data, value...), true
	}
	if err := e.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, errEventTooLarge
		}
		return nil, err
	}
	if e.has {
		return e.data, nil // the last event, without its blank line
	}
	return nil, io.EOF
}

// jsonInsteadOfEvents returns the error of a JSON line in the stream: the
// API's error when it is one.
func jsonInsteadOfEvents(line []byte) error {
	var wrapper struct {
		Error *errorObject `json:"error"`
	}
	if json.Unmarshal(line, &wrapper) == nil && wrapper.Error != nil {
		return wrapper.Error.apiError()
	}
	return fmt.Errorf("the answer's stream holds a line that is not a server-sent event: %s", clip(string(line), 200))
}

// apiError returns the error object as an *APIError; its code stands for
// the HTTP status.
func (o *errorObject) apiError() *APIError {
	return &APIError{StatusCode: o.Code, Status: o.Status, Message: o.Message}
}

// clip returns at most n bytes of s, cut at a rune, with an ellipsis when
// something was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:cut.Before(s, n)] + "…"
}
