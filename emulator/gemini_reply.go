package emulator

import (
	"fmt"
	"net/http"
	"strings"
)

// geminiStatus names the status of an HTTP code as Google's APIs do.
func geminiStatus(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge:
		return "INVALID_ARGUMENT"
	case http.StatusRequestTimeout:
		return "DEADLINE_EXCEEDED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	}
	return "INTERNAL"
}

// writeError writes {"error": {"code", "message", "status"}}. An error
// whose Type is already a status (the Gemini codec's) keeps it; the
// server's own errors (method, size, timeout) get their code's.
func (geminiCodec) writeError(w http.ResponseWriter, e *Error) {
	status := e.Type
	if status == "" || strings.ToUpper(status) != status {
		status = geminiStatus(e.Status)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.Status)
	_, _ = w.Write(compactJSON(map[string]any{"error": map[string]any{"code": e.Status, "message": e.Message, "status": status}}))
}

// The response objects, in the API's field order.
type (
	geminiResponse struct {
		Candidates    []geminiCandidate `json:"candidates"`
		UsageMetadata *geminiUsage      `json:"usageMetadata,omitempty"`
		ModelVersion  string            `json:"modelVersion"`
		ResponseID    string            `json:"responseId"`
	}
	geminiCandidate struct {
		Content      geminiContent `json:"content"`
		FinishReason string        `json:"finishReason,omitempty"`
		Index        int           `json:"index"`
	}
	geminiContent struct {
		Parts []map[string]any `json:"parts"`
		Role  string           `json:"role"`
	}
	geminiUsage struct {
		PromptTokenCount        int              `json:"promptTokenCount"`
		CandidatesTokenCount    int              `json:"candidatesTokenCount,omitempty"`
		TotalTokenCount         int              `json:"totalTokenCount"`
		CachedContentTokenCount int              `json:"cachedContentTokenCount,omitempty"`
		PromptTokensDetails     []geminiModality `json:"promptTokensDetails"`
		CacheTokensDetails      []geminiModality `json:"cacheTokensDetails,omitempty"`
		ThoughtsTokenCount      int              `json:"thoughtsTokenCount,omitempty"`
	}
	geminiModality struct {
		Modality   string `json:"modality"`
		TokenCount int    `json:"tokenCount"`
	}
)

// geminiUsageOf is a reply's usage: promptTokenCount counts every prompt
// token, cached ones included; candidatesTokenCount excludes thoughts.
func geminiUsageOf(u Usage) *geminiUsage {
	thoughts := min(u.Reasoning, u.Output)
	out := &geminiUsage{PromptTokenCount: u.Input, CandidatesTokenCount: u.Output - thoughts, TotalTokenCount: u.Input + u.Output,
		CachedContentTokenCount: u.CacheRead, ThoughtsTokenCount: thoughts,
		PromptTokensDetails: []geminiModality{{"TEXT", u.Input}}}
	if u.CacheRead > 0 {
		out.CacheTokensDetails = []geminiModality{{"TEXT", u.CacheRead}}
	}
	return out
}

// geminiParts returns a reply's parts: a thought, the text, the calls.
func geminiParts(r *Reply) []map[string]any {
	var parts []map[string]any
	if r.Thinking != "" {
		parts = append(parts, map[string]any{"text": r.Thinking, "thought": true})
	}
	if r.Text != "" {
		parts = append(parts, map[string]any{"text": r.Text})
	}
	for _, c := range r.Calls {
		args := any(map[string]any{})
		if len(c.Arguments) > 0 {
			args = c.Arguments
		}
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": args}})
	}
	if len(parts) == 0 {
		parts = append(parts, map[string]any{"text": ""})
	}
	return parts
}

// writeReply writes one GenerateContentResponse, or for a stream the
// reply's chunks (its text first, then the calls with the finish reason
// and usage) as server-sent events (alt=sse) or as one JSON array.
func (g geminiCodec) writeReply(w http.ResponseWriter, ex *Exchange, r *Reply, u Usage) {
	id := fmt.Sprintf("emu-%d", ex.Seq)
	finish := func(parts []map[string]any, usage bool) geminiResponse {
		resp := geminiResponse{Candidates: []geminiCandidate{{Content: geminiContent{Parts: parts, Role: "model"}, FinishReason: "STOP"}},
			ModelVersion: ex.Model, ResponseID: id}
		if usage {
			resp.UsageMetadata = geminiUsageOf(u)
		}
		return resp
	}
	if !ex.Stream {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = w.Write(compactJSON(finish(geminiParts(r), true)))
		return
	}
	var chunks []geminiResponse
	parts := geminiParts(r)
	if len(parts) > 1 {
		// The leading text (and thought) arrive before the rest.
		first := geminiResponse{Candidates: []geminiCandidate{{Content: geminiContent{Parts: parts[:1], Role: "model"}}},
			UsageMetadata: &geminiUsage{PromptTokenCount: u.Input, TotalTokenCount: u.Input, CachedContentTokenCount: u.CacheRead,
				PromptTokensDetails: []geminiModality{{"TEXT", u.Input}}},
			ModelVersion: ex.Model, ResponseID: id}
		chunks = append(chunks, first)
		parts = parts[1:]
	}
	chunks = append(chunks, finish(parts, true))
	if !g.sse {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = w.Write(compactJSON(chunks))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range chunks {
		fmt.Fprintf(w, "data: %s\r\n\r\n", compactJSON(c))
	}
}
