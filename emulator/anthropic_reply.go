package emulator

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// anthErrorSeq numbers error answers, which have no exchange to take a
// sequence number from.
var anthErrorSeq atomic.Int64

// anthErrorTypes maps statuses to Anthropic's error types (§1.7).
var anthErrorTypes = map[int]string{
	400: "invalid_request_error", 401: "authentication_error", 402: "billing_error", 403: "permission_error",
	404: "not_found_error", 409: "conflict_error", 413: "request_too_large", 429: "rate_limit_error",
	500: "api_error", 504: "timeout_error", 529: "overloaded_error",
}

// writeError writes {"type":"error","error":{"type","message",
// "details"?},"request_id"} with a request-id header, and retry-after on
// 429. The codes Anthropic reports as error.details.error_code travel in
// Error.Code (see anthDetailCodes).
func (anthropicCodec) writeError(w http.ResponseWriter, e *Error) {
	typ := e.Type
	if typ == "" {
		typ = anthErrorTypes[e.Status]
		if typ == "" {
			typ = "invalid_request_error"
			if e.Status >= 500 {
				typ = "api_error"
			}
		}
	}
	body := map[string]any{"type": typ, "message": e.Message}
	if slices.Contains(anthDetailCodes, e.Code) {
		body["details"] = map[string]any{"error_code": e.Code}
	}
	id := fmt.Sprintf("req_emu_e%d", anthErrorSeq.Add(1))
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("request-id", id)
	if e.Status == http.StatusTooManyRequests {
		h.Set("retry-after", "1")
	}
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": body, "request_id": id})
}

// anthWriteCount answers count_tokens: {"input_tokens": n}.
func anthWriteCount(w http.ResponseWriter, ex *Exchange, n int) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("request-id", fmt.Sprintf("req_emu_%d", ex.Seq))
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(map[string]int{"input_tokens": n})
}

// anthUsage is the usage object of a reply.
type anthUsage struct {
	InputTokens              int                `json:"input_tokens"`
	CacheCreationInputTokens int                `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int                `json:"cache_read_input_tokens"`
	CacheCreation            *anthCacheCreation `json:"cache_creation,omitempty"`
	OutputTokens             int                `json:"output_tokens"`
	ServiceTier              string             `json:"service_tier,omitempty"`
}

type anthCacheCreation struct {
	Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
}

// anthUsageOf places the server's usage: input_tokens are the tokens
// neither read nor written.
func anthUsageOf(u Usage, output int) anthUsage {
	write, short, long := u.CacheWrite, u.CacheWriteShort, u.CacheWriteLong
	return anthUsage{
		InputTokens:              max(u.Input-u.CacheRead-write, 0),
		CacheCreationInputTokens: write,
		CacheReadInputTokens:     u.CacheRead,
		CacheCreation:            &anthCacheCreation{Ephemeral5m: short, Ephemeral1h: long},
		OutputTokens:             output,
		ServiceTier:              "standard",
	}
}

// anthContentBlock is a response content block.
type anthContentBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Citations *[]any          `json:"citations,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

// anthMessage is a response Message (§1.8).
type anthMessage struct {
	ID           string             `json:"id"`
	Type         string             `json:"type"`
	Role         string             `json:"role"`
	Model        string             `json:"model"`
	Content      []anthContentBlock `json:"content"`
	StopReason   *string            `json:"stop_reason"`
	StopSequence *string            `json:"stop_sequence"`
	Usage        anthUsage          `json:"usage"`
}

// anthReply is a reply laid out as the API answers it.
type anthReply struct {
	id       string
	thinking string
	text     string
	calls    []Call
	stop     string
	output   int
}

func anthLayout(ex *Exchange, r *Reply, u Usage) anthReply {
	out := anthReply{id: fmt.Sprintf("msg_emu_%d", ex.Seq), output: u.Output}
	if ex.MaxTokens == 0 {
		// A cache pre-warm: nothing is generated.
		out.stop, out.output = "max_tokens", 0
		return out
	}
	out.thinking, out.text = r.Thinking, r.Text
	callSeq := ex.callSeq()
	for i, c := range r.Calls {
		if c.ID == "" || !anthToolID.MatchString(c.ID) {
			c.ID = fmt.Sprintf("toolu_emu_%d_%d", callSeq, i+1)
		}
		args := bytes.TrimSpace(c.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		}
		var compact bytes.Buffer
		if json.Compact(&compact, args) == nil {
			args = compact.Bytes()
		}
		c.Arguments = args
		out.calls = append(out.calls, c)
	}
	switch {
	case len(out.calls) > 0:
		out.stop = "tool_use"
	case ex.MaxTokens > 0 && u.Output > ex.MaxTokens:
		out.stop = "max_tokens"
	default:
		out.stop = "end_turn"
	}
	return out
}

// anthSignature is a thinking block's signature: opaque, deterministic.
func anthSignature(thinking string) string {
	sum := sha256.Sum256([]byte(thinking))
	return "emu" + base64.StdEncoding.EncodeToString(sum[:])
}

func anthPtr[T any](v T) *T { return &v }

// blocks returns the reply's content blocks, complete.
func (a anthReply) blocks() []anthContentBlock {
	out := []anthContentBlock{}
	if a.thinking != "" {
		out = append(out, anthContentBlock{Type: "thinking", Thinking: anthPtr(a.thinking), Signature: anthPtr(anthSignature(a.thinking))})
	}
	if a.text != "" {
		out = append(out, anthContentBlock{Type: "text", Text: anthPtr(a.text), Citations: anthPtr([]any(nil))})
	}
	for _, c := range a.calls {
		input := c.Arguments
		if !json.Valid(input) {
			// A complete message always carries a JSON object; only a
			// stream can show a responder's broken arguments.
			input = json.RawMessage(`{}`)
		}
		out = append(out, anthContentBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: input})
	}
	return out
}

// writeReply answers with a Message, or streams it as server-sent events
// (§1.9).
func (anthropicCodec) writeReply(w http.ResponseWriter, ex *Exchange, r *Reply, u Usage) {
	a := anthLayout(ex, r, u)
	h := w.Header()
	h.Set("request-id", fmt.Sprintf("req_emu_%d", ex.Seq))
	if !ex.Stream {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_ = json.NewEncoder(w).Encode(anthMessage{
			ID: a.id, Type: "message", Role: "assistant", Model: ex.Model, Content: a.blocks(),
			StopReason: anthPtr(a.stop), Usage: anthUsageOf(u, a.output),
		})
		return
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := anthSSE{w: w, rc: http.NewResponseController(w)}
	s.send("message_start", map[string]any{"message": anthMessage{
		ID: a.id, Type: "message", Role: "assistant", Model: ex.Model, Content: []anthContentBlock{},
		Usage: anthUsageOf(u, 1),
	}})
	s.send("ping", map[string]any{})
	index := 0
	block := func(start anthContentBlock, deltas []map[string]any) {
		s.send("content_block_start", map[string]any{"index": index, "content_block": start})
		for _, d := range deltas {
			s.send("content_block_delta", map[string]any{"index": index, "delta": d})
		}
		s.send("content_block_stop", map[string]any{"index": index})
		index++
	}
	if a.thinking != "" {
		var deltas []map[string]any
		for _, c := range anthChunks(a.thinking, 3) {
			deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": c})
		}
		deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": anthSignature(a.thinking)})
		block(anthContentBlock{Type: "thinking", Thinking: anthPtr(""), Signature: anthPtr("")}, deltas)
	}
	if a.text != "" {
		var deltas []map[string]any
		for _, c := range anthChunks(a.text, 4) {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": c})
		}
		block(anthContentBlock{Type: "text", Text: anthPtr(""), Citations: anthPtr([]any(nil))}, deltas)
	}
	for _, c := range a.calls {
		deltas := []map[string]any{{"type": "input_json_delta", "partial_json": ""}}
		for _, f := range anthSplit(string(c.Arguments), 3) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": f})
		}
		block(anthContentBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: json.RawMessage(`{}`)}, deltas)
	}
	final := anthUsageOf(u, a.output)
	final.CacheCreation, final.ServiceTier = nil, ""
	s.send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": a.stop, "stop_sequence": nil},
		"usage": final,
	})
	s.send("message_stop", map[string]any{})
}

// anthSSE writes server-sent events, flushing each.
type anthSSE struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// send writes one event; its data carries the same "type".
func (s anthSSE) send(typ string, payload map[string]any) {
	payload["type"] = typ
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(payload) // the payloads are plain values
	fmt.Fprintf(s.w, "event: %s\ndata: %s\n", typ, b.Bytes())
	_ = s.rc.Flush() // a writer that cannot flush still gets every event
}

// anthChunks splits text into at most n pieces at spaces, as a model's
// deltas arrive.
func anthChunks(text string, n int) []string {
	words := strings.SplitAfter(text, " ")
	n = min(n, len(words))
	out := make([]string, n)
	for i := range n {
		out[i] = strings.Join(words[i*len(words)/n:(i+1)*len(words)/n], "")
	}
	return out
}

// anthSplit cuts s into at most n pieces of about equal length, on rune
// boundaries.
func anthSplit(s string, n int) []string {
	size := max((len(s)+n-1)/n, 1)
	var out []string
	for len(s) > 0 {
		cut := min(size, len(s))
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}
