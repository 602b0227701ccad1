package openai

import (
	"cmp"
	"encoding/json"
	"errors"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// reasoningFields are the delta fields OpenAI-compatible servers stream
// reasoning in: reasoning_content (DeepSeek, vLLM, llama.cpp) and
// reasoning (Ollama, newer vLLM). The SDK keeps them as extra fields.
var reasoningFields = []string{"reasoning_content", "reasoning"}

// chatDecoder folds Chat Completions chunks into an assistant message.
// Consecutive content deltas form one text part and consecutive reasoning
// deltas one thinking part; a tool call gets its part at its first
// fragment and is complete when the stream ends.
type chatDecoder struct {
	plan         *provider.Plan
	msg          llm.Message
	current      map[int64]*chatCall // the call each tool call index is assembling
	calls        []*chatCall         // in order of their first fragment
	finishReason string
	chunks       int
}

// chatCall is a tool call being assembled from fragments.
type chatCall struct {
	part     int
	id, name string
	args     strings.Builder
}

func newChatDecoder(plan *provider.Plan, model string) *chatDecoder {
	return &chatDecoder{
		plan:    plan,
		msg:     llm.Message{Role: llm.RoleAssistant, Model: model},
		current: map[int64]*chatCall{},
	}
}

func (d *chatDecoder) handle(chunk openai.ChatCompletionChunk) ([]llm.Event, error) {
	d.chunks++
	if chunk.JSON.Usage.Valid() {
		u := chunk.Usage
		d.msg.Usage = usage(u.PromptTokens, u.PromptTokensDetails.CachedTokens, u.PromptTokensDetails.CacheWriteTokens, u.CompletionTokens)
	}
	var evs []llm.Event
	for _, c := range chunk.Choices {
		if c.Index != 0 {
			continue // one answer per request; other choices are not asked for
		}
		delta := c.Delta
		for _, field := range reasoningFields {
			if text := extraString(delta.JSON.ExtraFields[field].Raw()); text != "" {
				evs = append(evs, d.delta(llm.PartThinking, text))
				break
			}
		}
		if delta.Content != "" {
			evs = append(evs, d.delta(llm.PartText, delta.Content))
		}
		if delta.Refusal != "" {
			evs = append(evs, d.delta(llm.PartText, delta.Refusal))
		}
		for _, tc := range delta.ToolCalls {
			d.toolCall(tc)
		}
		if c.FinishReason != "" {
			d.finishReason = c.FinishReason
		}
	}
	return evs, nil
}

// extraString returns the text of a raw JSON string, "" for anything else.
func extraString(raw string) string {
	var s string
	if raw == "" || json.Unmarshal([]byte(raw), &s) != nil {
		return ""
	}
	return s
}

// delta adds text to the last part when it has the type, else to a new one.
func (d *chatDecoder) delta(t llm.PartType, text string) llm.Event {
	n := len(d.msg.Content)
	if n == 0 || d.msg.Content[n-1].Type != t {
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

// toolCall adds a fragment of a tool call: the first carries id and name,
// the others pieces of the arguments. A fragment with a new id at an index
// already in use starts another call: some servers send every call whole
// at index 0.
func (d *chatDecoder) toolCall(tc openai.ChatCompletionChunkChoiceDeltaToolCall) {
	c, ok := d.current[tc.Index]
	if !ok || (tc.ID != "" && c.id != "" && tc.ID != c.id) {
		d.msg.Content = append(d.msg.Content, llm.Part{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{}})
		c = &chatCall{part: len(d.msg.Content) - 1}
		d.current[tc.Index] = c
		d.calls = append(d.calls, c)
	}
	if tc.ID != "" {
		c.id = tc.ID
	}
	if tc.Function.Name != "" {
		c.name = tc.Function.Name
	}
	c.args.WriteString(tc.Function.Arguments)
}

func (d *chatDecoder) finish() ([]llm.Event, error) {
	if d.finishReason == "" {
		if d.chunks == 0 {
			return nil, errors.New("the stream ended without any chunk: check that the server streams Chat Completions at this base URL")
		}
		return nil, errors.New("the stream ended without a finish_reason: the connection was cut or the server stopped early; retry the request")
	}
	var evs []llm.Event
	for _, c := range d.calls {
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		id := cmp.Or(c.id, adapt.NewCallID("call_toolshelf_")) // some servers send no id; the transcript needs one
		call := d.plan.Unwrap(llm.ToolCall{ID: id, Name: c.name, Arguments: json.RawMessage(args)})
		d.msg.Content[c.part].ToolCall = &call
		ev := call
		evs = append(evs, llm.Event{Type: llm.EventToolCall, Index: c.part, ToolCall: &ev})
	}
	m := &d.msg
	switch d.finishReason {
	case "length":
		m.StopReason = llm.StopLength
	case "content_filter":
		m.StopReason, m.ErrorMessage = llm.StopError, "the answer was stopped by the content filter"
	default: // stop, tool_calls, function_call, or a server's own reason
		m.StopReason = llm.StopEnd
		if len(d.calls) > 0 {
			m.StopReason = llm.StopToolUse
		}
	}
	done := m.Clone()
	return append(evs, llm.Event{Type: llm.EventDone, Message: &done}), nil
}
