package emulator

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/toolshelf/toolshelf/internal/adapt"
)

func (chatCodec) writeError(w http.ResponseWriter, e *Error) { oaiWriteError(w, e) }

// chatUsage is a completion's usage: prompt_tokens counts every prompt
// token, cached ones included.
type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
		AudioTokens      int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

func chatUsageOf(u Usage) *chatUsage {
	out := &chatUsage{PromptTokens: u.Input, CompletionTokens: u.Output, TotalTokens: u.Input + u.Output}
	out.PromptTokensDetails.CachedTokens = u.CacheRead
	out.PromptTokensDetails.CacheWriteTokens = u.CacheWrite // 0 where writes are not reported
	out.CompletionTokensDetails.ReasoningTokens = min(u.Reasoning, u.Output)
	return out
}

// The completion object.
type (
	chatCompletion struct {
		ID                string       `json:"id"`
		Object            string       `json:"object"`
		Created           int64        `json:"created"`
		Model             string       `json:"model"`
		Choices           []chatChoice `json:"choices"`
		Usage             *chatUsage   `json:"usage"`
		ServiceTier       string       `json:"service_tier"`
		SystemFingerprint string       `json:"system_fingerprint"`
	}
	chatChoice struct {
		Index        int         `json:"index"`
		Message      chatMessage `json:"message"`
		FinishReason string      `json:"finish_reason"`
		Logprobs     any         `json:"logprobs"`
	}
	chatMessage struct {
		Role             string         `json:"role"`
		Content          *string        `json:"content"`
		Refusal          any            `json:"refusal"`
		ReasoningContent string         `json:"reasoning_content,omitempty"`
		ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
		Annotations      []any          `json:"annotations"`
	}
	chatToolCall struct {
		Index    *int   `json:"index,omitempty"`
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function struct {
			Name      string `json:"name,omitempty"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	chatChunk struct {
		ID                string            `json:"id"`
		Object            string            `json:"object"`
		Created           int64             `json:"created"`
		Model             string            `json:"model"`
		ServiceTier       string            `json:"service_tier"`
		SystemFingerprint string            `json:"system_fingerprint"`
		Choices           []chatChunkChoice `json:"choices"`
		Usage             json.RawMessage   `json:"usage,omitempty"`
	}
	chatChunkChoice struct {
		Index        int            `json:"index"`
		Delta        map[string]any `json:"delta"`
		Logprobs     any            `json:"logprobs"`
		FinishReason any            `json:"finish_reason"`
	}
)

const chatFingerprint = "fp_emulator"

func (chatCodec) writeReply(w http.ResponseWriter, ex *Exchange, r *Reply, u Usage) {
	id := "chatcmpl-emu-" + strconv.Itoa(ex.Seq)
	finish := "stop"
	if len(r.Calls) > 0 {
		finish = "tool_calls"
	}
	created := oaiCreated()
	if !ex.Stream {
		msg := chatMessage{Role: "assistant", ReasoningContent: r.Thinking, Annotations: []any{}}
		if r.Text != "" || len(r.Calls) == 0 {
			msg.Content = &r.Text
		}
		for i, c := range r.Calls {
			tc := chatToolCall{ID: oaiCallID(ex, c, i), Type: "function"}
			tc.Function.Name, tc.Function.Arguments = c.Name, oaiCallArguments(c)
			msg.ToolCalls = append(msg.ToolCalls, tc)
		}
		oaiWriteJSON(w, chatCompletion{ID: id, Object: "chat.completion", Created: created, Model: ex.Model,
			Choices: []chatChoice{{Message: msg, FinishReason: finish}}, Usage: chatUsageOf(u),
			ServiceTier: "default", SystemFingerprint: chatFingerprint})
		return
	}
	includeUsage := ex.IncludeUsage
	s := oaiNewStream(w)
	chunk := func(delta map[string]any, finish any) {
		c := chatChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: ex.Model, ServiceTier: "default",
			SystemFingerprint: chatFingerprint, Choices: []chatChunkChoice{{Delta: delta, FinishReason: finish}}}
		if includeUsage {
			c.Usage = json.RawMessage("null")
		}
		s.data(c)
	}
	chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)
	for _, d := range oaiChunks(r.Thinking, 16) {
		chunk(map[string]any{"reasoning_content": d}, nil)
	}
	for _, d := range oaiChunks(r.Text, 16) {
		chunk(map[string]any{"content": d}, nil)
	}
	for i, c := range r.Calls {
		first := chatToolCall{Index: &i, ID: oaiCallID(ex, c, i), Type: "function"}
		first.Function.Name = c.Name
		chunk(map[string]any{"tool_calls": []chatToolCall{first}}, nil)
		for _, d := range oaiChunks(oaiCallArguments(c), 24) {
			frag := chatToolCall{Index: &i}
			frag.Function.Arguments = d
			chunk(map[string]any{"tool_calls": []chatToolCall{frag}}, nil)
		}
	}
	chunk(map[string]any{}, finish)
	if includeUsage {
		s.data(chatChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: ex.Model, ServiceTier: "default",
			SystemFingerprint: chatFingerprint, Choices: []chatChunkChoice{}, Usage: adapt.JSON(chatUsageOf(u))})
	}
	s.write([]byte("data: [DONE]\n\n"))
}
