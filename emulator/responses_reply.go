package emulator

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

func (responsesCodec) writeError(w http.ResponseWriter, e *Error) { oaiWriteError(w, e) }

// responsesResponse is a Response object.
type responsesResponse struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Error              any               `json:"error"`
	IncompleteDetails  any               `json:"incomplete_details"`
	Instructions       any               `json:"instructions"`
	MaxOutputTokens    any               `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []any             `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID any               `json:"previous_response_id"`
	PromptCacheKey     any               `json:"prompt_cache_key"`
	Reasoning          map[string]any    `json:"reasoning"`
	Store              bool              `json:"store"`
	Temperature        float64           `json:"temperature"`
	Text               map[string]any    `json:"text"`
	ToolChoice         string            `json:"tool_choice"`
	Tools              []any             `json:"tools"`
	TopP               float64           `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *responsesUsage   `json:"usage"`
	Metadata           map[string]string `json:"metadata"`
}

// responsesUsage is a Response's usage: input_tokens counts every prompt
// token, cached ones included.
type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens            int `json:"cached_tokens"`
		CacheWriteTokens        int `json:"cache_write_tokens"`
		CacheWriteTokensDetails struct {
			TTL30m int `json:"ttl_30m_tokens"`
			TTL12h int `json:"ttl_12h_tokens"`
		} `json:"cache_write_tokens_details"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

// The output items.
type (
	responsesReasoningItem struct {
		ID      string             `json:"id"`
		Type    string             `json:"type"`
		Summary []responsesSummary `json:"summary"`
	}
	responsesSummary struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	responsesMessageItem struct {
		ID      string              `json:"id"`
		Type    string              `json:"type"`
		Role    string              `json:"role"`
		Status  string              `json:"status"`
		Content []responsesTextPart `json:"content"`
	}
	responsesTextPart struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Annotations []any  `json:"annotations"`
		Logprobs    []any  `json:"logprobs"`
	}
	responsesCallItem struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Namespace string `json:"namespace,omitempty"`
		Status    string `json:"status"`
	}
	// responsesSearchItem is a client-side tool_search_call: the client
	// runs the search and sends its tool_search_output.
	responsesSearchItem struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		CallID    string          `json:"call_id"`
		Execution string          `json:"execution"`
		Arguments json.RawMessage `json:"arguments"`
		Status    string          `json:"status"`
	}
)

// responsesUsageOf places the server's usage where Responses puts it.
func responsesUsageOf(u Usage) *responsesUsage {
	out := &responsesUsage{InputTokens: u.Input, OutputTokens: u.Output, TotalTokens: u.Input + u.Output}
	out.InputTokensDetails.CachedTokens = u.CacheRead
	// Models that do not report writes get none from the cache.
	out.InputTokensDetails.CacheWriteTokens = u.CacheWrite
	out.InputTokensDetails.CacheWriteTokensDetails.TTL30m = u.CacheWriteShort
	out.InputTokensDetails.CacheWriteTokensDetails.TTL12h = u.CacheWriteLong
	out.OutputTokensDetails.ReasoningTokens = min(u.Reasoning, u.Output)
	return out
}

// responsesItems returns the reply's output items: reasoning when it
// thought, a message when it wrote text (or nothing at all), a
// function_call per call.
func responsesItems(ex *Exchange, r *Reply) []any {
	seq := strconv.Itoa(ex.Seq)
	var items []any
	if r.Thinking != "" {
		items = append(items, responsesReasoningItem{ID: "rs_emu_" + seq, Type: "reasoning",
			Summary: []responsesSummary{{Type: "summary_text", Text: r.Thinking}}})
	}
	if r.Text != "" || len(r.Calls) == 0 {
		items = append(items, responsesMessageItem{ID: "msg_emu_" + seq, Type: "message", Role: "assistant", Status: "completed",
			Content: []responsesTextPart{{Type: "output_text", Text: r.Text, Annotations: []any{}, Logprobs: []any{}}}})
	}
	for i, c := range r.Calls {
		if c.Type == CallToolSearch {
			items = append(items, responsesSearchItem{ID: "tsc_emu_" + seq + "_" + strconv.Itoa(i), Type: "tool_search_call",
				CallID: oaiCallID(ex, c, i), Execution: "client", Arguments: c.Arguments, Status: "completed"})
			continue
		}
		items = append(items, responsesCallItem{ID: "fc_emu_" + seq + "_" + strconv.Itoa(i), Type: "function_call",
			CallID: oaiCallID(ex, c, i), Name: c.Name, Arguments: oaiCallArguments(c), Namespace: c.Namespace, Status: "completed"})
	}
	return items
}

// responsesObject returns the Response object around output and usage.
func responsesObject(ex *Exchange, status string, output []any, usage *responsesUsage) responsesResponse {
	tools := make([]any, len(ex.Tools))
	for i, t := range ex.Tools {
		tool := map[string]any{"type": "function", "name": t.Name, "description": oaiNullable(t.Description), "strict": false, "parameters": nil}
		if len(t.Parameters) > 0 {
			tool["parameters"] = t.Parameters
		}
		tools[i] = tool
	}
	var maxTokens any
	if ex.MaxTokens > 0 {
		maxTokens = ex.MaxTokens
	}
	_, key, _ := strings.Cut(ex.Namespace, "\x00")
	if output == nil {
		output = []any{}
	}
	return responsesResponse{
		ID: "resp_emu_" + strconv.Itoa(ex.Seq), Object: "response", CreatedAt: oaiCreated(), Status: status,
		MaxOutputTokens: maxTokens, Model: ex.Model, Output: output, ParallelToolCalls: true,
		PromptCacheKey: oaiNullable(key), Reasoning: map[string]any{"effort": nil, "summary": nil}, Store: true,
		Temperature: 1, Text: map[string]any{"format": map[string]any{"type": "text"}}, ToolChoice: "auto",
		Tools: tools, TopP: 1, Truncation: "disabled", Usage: usage, Metadata: map[string]string{},
	}
}

func (responsesCodec) writeReply(w http.ResponseWriter, ex *Exchange, r *Reply, u Usage) {
	items := responsesItems(ex, r)
	usage := responsesUsageOf(u)
	if !ex.Stream {
		oaiWriteJSON(w, responsesObject(ex, "completed", items, usage))
		return
	}
	s := oaiNewStream(w)
	pending := responsesObject(ex, "in_progress", nil, nil)
	s.event("response.created", map[string]any{"response": pending})
	s.event("response.in_progress", map[string]any{"response": pending})
	for i, item := range items {
		switch it := item.(type) {
		case responsesReasoningItem:
			responsesStreamReasoning(s, i, it)
		case responsesMessageItem:
			responsesStreamMessage(s, i, it)
		case responsesCallItem:
			responsesStreamCall(s, i, it)
		case responsesSearchItem:
			added := it
			added.Status = "in_progress"
			s.event("response.output_item.added", map[string]any{"output_index": i, "item": added})
			s.event("response.output_item.done", map[string]any{"output_index": i, "item": it})
		}
	}
	s.event("response.completed", map[string]any{"response": responsesObject(ex, "completed", items, usage)})
}

func responsesStreamReasoning(s *oaiStream, index int, it responsesReasoningItem) {
	added := it
	added.Summary = []responsesSummary{}
	s.event("response.output_item.added", map[string]any{"output_index": index, "item": added})
	text := it.Summary[0].Text
	at := map[string]any{"item_id": it.ID, "output_index": index, "summary_index": 0}
	s.event("response.reasoning_summary_part.added", oaiWith(at, "part", responsesSummary{Type: "summary_text"}))
	for _, d := range oaiChunks(text, 16) {
		s.event("response.reasoning_summary_text.delta", oaiWith(at, "delta", d))
	}
	s.event("response.reasoning_summary_text.done", oaiWith(at, "text", text))
	s.event("response.reasoning_summary_part.done", oaiWith(at, "part", it.Summary[0]))
	s.event("response.output_item.done", map[string]any{"output_index": index, "item": it})
}

func responsesStreamMessage(s *oaiStream, index int, it responsesMessageItem) {
	added := it
	added.Status, added.Content = "in_progress", []responsesTextPart{}
	s.event("response.output_item.added", map[string]any{"output_index": index, "item": added})
	part := it.Content[0]
	at := map[string]any{"item_id": it.ID, "output_index": index, "content_index": 0}
	s.event("response.content_part.added", oaiWith(at, "part", responsesTextPart{Type: "output_text", Annotations: []any{}, Logprobs: []any{}}))
	for _, d := range oaiChunks(part.Text, 16) {
		s.event("response.output_text.delta", oaiWith(oaiWith(at, "delta", d), "logprobs", []any{}))
	}
	s.event("response.output_text.done", oaiWith(oaiWith(at, "text", part.Text), "logprobs", []any{}))
	s.event("response.content_part.done", oaiWith(at, "part", part))
	s.event("response.output_item.done", map[string]any{"output_index": index, "item": it})
}

func responsesStreamCall(s *oaiStream, index int, it responsesCallItem) {
	added := it
	added.Arguments, added.Status = "", "in_progress"
	s.event("response.output_item.added", map[string]any{"output_index": index, "item": added})
	at := map[string]any{"item_id": it.ID, "output_index": index}
	for _, d := range oaiChunks(it.Arguments, 24) {
		s.event("response.function_call_arguments.delta", oaiWith(at, "delta", d))
	}
	s.event("response.function_call_arguments.done", oaiWith(oaiWith(at, "name", it.Name), "arguments", it.Arguments))
	s.event("response.output_item.done", map[string]any{"output_index": index, "item": it})
}

// oaiWith returns a copy of m with one more key.
func oaiWith(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}
