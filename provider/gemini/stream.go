package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/genai"

	"github.com/toolshelf/toolshelf/internal/adapt"
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
	reason genai.FinishReason
	// message is the finish message of a stop the API explains.
	message string
	chunks  int
	calls   int
}

func newDecoder(plan *provider.Plan, model string) *decoder {
	return &decoder{plan: plan, msg: llm.Message{Role: llm.RoleAssistant, Model: model}}
}

func (d *decoder) handle(chunk *genai.GenerateContentResponse) []llm.Event {
	d.chunks++
	if chunk == nil {
		return nil
	}
	if u := chunk.UsageMetadata; u != nil {
		cached := int(u.CachedContentTokenCount)
		d.msg.Usage = &llm.Usage{Input: max(int(u.PromptTokenCount)+int(u.ToolUsePromptTokenCount)-cached, 0),
			CacheRead: cached, Output: int(u.CandidatesTokenCount) + int(u.ThoughtsTokenCount)}
	}
	if f := chunk.PromptFeedback; f != nil && f.BlockReason != "" {
		d.reason, d.message = genai.FinishReason(f.BlockReason), cmpOr(f.BlockReasonMessage, "the prompt was blocked ("+string(f.BlockReason)+")")
	}
	var evs []llm.Event
	for _, c := range chunk.Candidates {
		if c == nil || c.Index != 0 {
			continue // one answer per request; other candidates are not asked for
		}
		if c.FinishReason != "" && c.FinishReason != genai.FinishReasonUnspecified {
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

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// part adds one part of the answer.
func (d *decoder) part(p *genai.Part) []llm.Event {
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
	case genai.FinishReasonStop:
		m.StopReason = llm.StopEnd
		if d.calls > 0 {
			m.StopReason = llm.StopToolUse
		}
	case genai.FinishReasonMaxTokens:
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
	// StatusCode is the HTTP status.
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

// streamError turns what the SDK returned into the adapter's error: an
// *APIError for an answer of the API, the context's error on a
// cancellation.
func streamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ae genai.APIError
	if errors.As(err, &ae) {
		return &APIError{StatusCode: ae.Code, Status: ae.Status, Message: ae.Message}
	}
	var pae *genai.APIError
	if errors.As(err, &pae) && pae != nil {
		return &APIError{StatusCode: pae.Code, Status: pae.Status, Message: pae.Message}
	}
	return fmt.Errorf("%s: %w", provider.Gemini, err)
}
