package emulator

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
)

// API names a wire format the emulator speaks.
type API string

// The wire formats.
const (
	AnthropicMessages API = "anthropic-messages"
	OpenAIResponses   API = "openai-responses"
	OpenAIChat        API = "openai-chat"
)

// Exchange is a decoded, valid request in the form the emulator's core
// works with: the request's prompt as cacheable segments in render order,
// the tools available to the model at the end of the conversation, and
// the conversation itself for responders.
type Exchange struct {
	API    API
	Model  string
	Stream bool
	// Seq numbers the server's requests from 1; codecs derive response
	// ids from it (call ids count the conversation's turns, see callSeq).
	Seq int
	// Namespace scopes the prompt cache: the API key (a workspace or an
	// organisation) and, for OpenAI, the prompt_cache_key.
	Namespace string
	// MaxTokens is the request's output bound (0 when not given).
	MaxTokens int
	// Segments is the prompt in the provider's render order. See Segment.
	Segments []Segment
	// AutoBreakpoint is the TTL of Anthropic's automatic caching (a
	// top-level cache_control), empty when not requested: the server then
	// places one more breakpoint on the last segment.
	AutoBreakpoint TTL
	// Tools are the tools the model can call at the end of the request,
	// in order: top-level tools that are not deferred, then tools added
	// mid-conversation, minus those removed.
	Tools []ToolDef
	// Turns is the conversation after the instructions, in order.
	Turns []Turn
	// IncludeUsage reports that a Chat Completions stream ends with a
	// usage chunk (stream_options.include_usage).
	IncludeUsage bool
	// Header is the request's HTTP header.
	Header http.Header
}

// TTL is a cache entry's lifetime as a request asks for it: "5m", "1h"
// (Anthropic), "30m", "12h" (OpenAI); empty for no breakpoint.
type TTL string

// Segment is one cacheable unit of a prompt: a tool definition, a system
// block, a content block or input item. The cache compares prompts
// segment by segment, so a segment's Bytes must be exactly what makes it
// equal to another request's (cache markers removed, canonical JSON).
type Segment struct {
	// Bytes identify the segment's content.
	Bytes []byte
	// Text is what the tokenizer counts; when empty, Bytes are counted.
	Text string
	// Breakpoint is set when the request marks a cache breakpoint on this
	// segment (Anthropic cache_control, OpenAI prompt_cache_breakpoint).
	Breakpoint TTL
	// ToolDef marks a tool definition: counted as tool-definition tokens.
	ToolDef bool
	// Run groups consecutive segments that count as one position when a
	// breakpoint looks back for earlier cache entries (Anthropic: a run of
	// tool_use blocks, a run of tool_result blocks). Zero means none.
	Run int
	// Tokens is filled in by the server.
	Tokens int
}

// ToolDef is a tool as the model sees it.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Turn is one message of the conversation, in a neutral form.
type Turn struct {
	// Role is "user", "assistant", "system" (instructions after the
	// first, updates) or "tool" (a tool result).
	Role string
	// Text is the message's text (blocks joined by newlines).
	Text string
	// Calls are an assistant turn's tool calls.
	Calls []Call
	// CallID and IsError belong to a tool result.
	CallID  string
	IsError bool
}

// Call is a tool call, in a request's history or in a reply.
type Call struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Namespace is the Responses namespace of the called function
	// (function_call.namespace); the other APIs have none.
	Namespace string `json:"namespace,omitempty"`
	// Type "tool_search" makes a scripted Responses reply a
	// tool_search_call item (a client-side tool search, with Arguments
	// as its arguments) rather than a function_call; Name is then unused.
	Type string `json:"type,omitempty"`
}

// CallToolSearch is the Call.Type of a scripted tool_search_call.
const CallToolSearch = "tool_search"

// Reply is what a responder answers: text, tool calls or both.
type Reply struct {
	Text     string `json:"text,omitempty"`
	Thinking string `json:"thinking,omitempty"`
	Calls    []Call `json:"tool_calls,omitempty"`
}

// Usage is what the server computed for a request; codecs place it where
// their API puts usage.
type Usage struct {
	// Input counts every prompt token (cached or not).
	Input int
	// CacheRead counts prompt tokens served from the cache.
	CacheRead int
	// CacheWrite counts prompt tokens written to the cache, split by TTL
	// in CacheWriteShort (5m, 30m) and CacheWriteLong (1h, 12h).
	CacheWrite, CacheWriteShort, CacheWriteLong int
	// Output counts the reply's tokens; Reasoning those of its thinking.
	// Cache writes are zero for APIs that do not report them (OpenAI
	// models before gpt-5.6).
	Output, Reasoning int
}

// Uncached returns the prompt tokens neither read nor written.
func (u Usage) Uncached() int { return u.Input - u.CacheRead - u.CacheWrite }

// Error is an API error as the emulated provider reports it.
type Error struct {
	Status int
	// Type is the error's type (Anthropic error.type, OpenAI error.type).
	Type string
	// Code is OpenAI's error.code; empty for Anthropic.
	Code string
	// Param is OpenAI's error.param: the JSON path of the bad value.
	Param   string
	Message string
}

// Error returns the message with its status.
func (e *Error) Error() string { return http.StatusText(e.Status) + ": " + e.Message }

// codec is one API's wire format: it decodes and validates requests and
// writes replies and errors the way the API does.
type codec interface {
	// decode parses and validates a request body. A nil Error means the
	// Exchange is valid.
	decode(h http.Header, body []byte) (*Exchange, *Error)
	// writeError writes an error in the API's shape and status.
	writeError(w http.ResponseWriter, e *Error)
	// writeReply writes a reply, as server-sent events when ex.Stream
	// is set, else as one JSON object.
	writeReply(w http.ResponseWriter, ex *Exchange, r *Reply, u Usage)
}

// emuCallID matches the call ids the emulator makes: toolu_emu_<seq>_<i>,
// call_emu_<seq>_<i>.
var emuCallID = regexp.MustCompile(`_emu_([0-9]+)_[0-9]+$`)

// callSeq is the number the ids of the reply's calls are made from: one
// more than the assistant turns the conversation holds, unless it already
// holds calls with ids the emulator made from that number or a later one
// (it was continued from elsewhere, as a resumed session is), in which case
// one more than the largest. Call ids stay unique within a conversation
// either way, and do not depend on other conversations the emulator serves
// at the same time, so replies are reproducible.
func (ex *Exchange) callSeq() int {
	seq := 1
	for _, t := range ex.Turns {
		if t.Role == "assistant" {
			seq++
		}
	}
	for _, t := range ex.Turns {
		for _, c := range t.Calls {
			if m := emuCallID.FindStringSubmatch(c.ID); m != nil {
				if n, err := strconv.Atoi(m[1]); err == nil && n >= seq {
					seq = n + 1
				}
			}
		}
	}
	return seq
}
