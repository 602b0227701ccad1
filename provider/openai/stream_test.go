package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

func textDelta(i int, s string) llm.Event {
	return llm.Event{Type: llm.EventTextDelta, Index: i, Delta: s}
}

func thinkingDelta(i int, s string) llm.Event {
	return llm.Event{Type: llm.EventThinkingDelta, Index: i, Delta: s}
}

func toolCall(i int, id, name, args string) llm.Event {
	return llm.Event{Type: llm.EventToolCall, Index: i, ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}}
}

func callPart(id, name, args string) llm.Part { return call(id, name, args) }

// reasoningItemJSON is the reasoning item of responses_reasoning.sse as
// its response.output_item.done event carries it.
const reasoningItemJSON = `{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Checking the docs."},{"type":"summary_text","text":"Done."}],"encrypted_content":"gAAAAB-encrypted"}`

type streamCase struct {
	name    string
	api     provider.API
	caps    provider.Capabilities
	fixture string
	events  []llm.Event // between EventStart and EventDone
	final   *llm.Message
	wantErr []string // substrings of the error, when the stream fails
}

// TestStreams plays recorded streams through each adapter and checks the
// decoded events, the final message and the usage exactly.
func TestStreams(t *testing.T) {
	const model = "test-model"
	final := func(stop llm.StopReason, u *llm.Usage, parts ...llm.Part) *llm.Message {
		return &llm.Message{Role: llm.RoleAssistant, Content: parts, StopReason: stop, Usage: u, Model: model}
	}
	tests := []streamCase{
		{name: "responses text", api: provider.OpenAIResponses, caps: respText, fixture: "responses_text.sse",
			events: []llm.Event{textDelta(0, "Hello"), textDelta(0, ", world.")},
			final:  final(llm.StopEnd, &llm.Usage{Input: 20, Output: 4}, llm.Text("Hello, world."))},
		{name: "responses reasoning summary and text", api: provider.OpenAIResponses, caps: respText, fixture: "responses_reasoning.sse",
			events: []llm.Event{thinkingDelta(0, "Checking "), thinkingDelta(0, "the docs."), thinkingDelta(0, "\n\nDone."),
				textDelta(1, "The answer "), textDelta(1, "is 4.")},
			final: final(llm.StopEnd, &llm.Usage{Input: 50, Output: 80},
				llm.Part{Type: llm.PartThinking, Text: "Checking the docs.\n\nDone.", Signature: reasoningItemJSON},
				llm.Text("The answer is 4."))},
		{name: "responses function call, cache read and write", api: provider.OpenAIResponses, caps: respAdditionalTools,
			fixture: "responses_function_call.sse",
			events:  []llm.Event{textDelta(0, "Let me look."), toolCall(1, "call_abc", "base_tool", `{"query":"cats","limit":3}`)},
			final: final(llm.StopToolUse, &llm.Usage{Input: 36, CacheRead: 1920, CacheWrite: 50, Output: 300},
				llm.Text("Let me look."), callPart("call_abc", "base_tool", `{"query":"cats","limit":3}`))},
		{name: "responses bridge call unwrapped", api: provider.OpenAIResponses, caps: respBridge, fixture: "responses_bridge.sse",
			events: []llm.Event{toolCall(0, "call_b1", "late_tool", `{"path":"/tmp/x"}`)},
			final: final(llm.StopToolUse, &llm.Usage{Input: 20, CacheRead: 100, Output: 30},
				callPart("call_b1", "late_tool", `{"path":"/tmp/x"}`))},
		{name: "responses call_tool kept outside bridge", api: provider.OpenAIResponses, caps: respText, fixture: "responses_bridge.sse",
			events: []llm.Event{toolCall(0, "call_b1", "call_tool", `{"name":"late_tool","arguments":{"path":"/tmp/x"}}`)},
			final: final(llm.StopToolUse, &llm.Usage{Input: 20, CacheRead: 100, Output: 30},
				callPart("call_b1", "call_tool", `{"name":"late_tool","arguments":{"path":"/tmp/x"}}`))},
		{name: "responses incomplete at max_output_tokens", api: provider.OpenAIResponses, caps: respText, fixture: "responses_incomplete.sse",
			events: []llm.Event{textDelta(0, "Cut"), toolCall(1, "call_x", "base_tool", `{"query":"x"}`)},
			final: final(llm.StopLength, &llm.Usage{Input: 10, Output: 16},
				llm.Text("Cut"), callPart("call_x", "base_tool", `{"query":"x"}`))},
		{name: "responses error event", api: provider.OpenAIResponses, caps: respText, fixture: "responses_error_event.sse",
			events:  []llm.Event{textDelta(0, "Partial")},
			wantErr: []string{"openai-responses", "server_error", "The server had an error while processing your request."}},
		{name: "responses failed", api: provider.OpenAIResponses, caps: respText, fixture: "responses_failed.sse",
			wantErr: []string{"openai-responses", "rate_limit_exceeded", "Rate limit reached for gpt-5.6-sol."}},
		{name: "responses cut before completion", api: provider.OpenAIResponses, caps: respText, fixture: "responses_truncated.sse",
			events:  []llm.Event{textDelta(0, "Hello")},
			wantErr: []string{"openai-responses", "before response.completed"}},

		{name: "chat text", api: provider.OpenAIChat, caps: chatText, fixture: "chat_text.sse",
			events: []llm.Event{textDelta(0, "Hello"), textDelta(0, ", world.")},
			final:  final(llm.StopEnd, &llm.Usage{Input: 20, Output: 4}, llm.Text("Hello, world."))},
		{name: "chat reasoning_content", api: provider.OpenAIChat, caps: chatText, fixture: "chat_reasoning.sse",
			events: []llm.Event{thinkingDelta(0, "Thinking "), thinkingDelta(0, "hard."), textDelta(1, "It is 4.")},
			final: final(llm.StopEnd, &llm.Usage{Input: 30, Output: 12},
				llm.Part{Type: llm.PartThinking, Text: "Thinking hard."}, llm.Text("It is 4."))},
		{name: "chat reasoning field", api: provider.OpenAIChat, caps: chatText, fixture: "chat_reasoning_field.sse",
			events: []llm.Event{thinkingDelta(0, "Hmm."), textDelta(1, "Yes.")},
			final: final(llm.StopEnd, &llm.Usage{Input: 8, Output: 3},
				llm.Part{Type: llm.PartThinking, Text: "Hmm."}, llm.Text("Yes."))},
		{name: "chat tool calls, cache read and write", api: provider.OpenAIChat, caps: chatSystemTools, fixture: "chat_tool_calls.sse",
			events: []llm.Event{textDelta(0, "Let me look."), toolCall(1, "call_a", "base_tool", `{"query":"cats"}`),
				toolCall(2, "call_b", "late_tool", `{"path":"/tmp"}`)},
			final: final(llm.StopToolUse, &llm.Usage{Input: 36, CacheRead: 1920, CacheWrite: 50, Output: 300},
				llm.Text("Let me look."), callPart("call_a", "base_tool", `{"query":"cats"}`), callPart("call_b", "late_tool", `{"path":"/tmp"}`))},
		{name: "chat whole tool calls at one index", api: provider.OpenAIChat, caps: chatText, fixture: "chat_tool_calls_whole.sse",
			events: []llm.Event{toolCall(0, "call_1", "base_tool", `{"query":"a"}`), toolCall(1, "call_2", "base_tool", `{"query":"b"}`)},
			final: final(llm.StopToolUse, &llm.Usage{Input: 40, Output: 20},
				callPart("call_1", "base_tool", `{"query":"a"}`), callPart("call_2", "base_tool", `{"query":"b"}`))},
		{name: "chat bridge call unwrapped", api: provider.OpenAIChat, caps: chatBridge, fixture: "chat_bridge.sse",
			events: []llm.Event{toolCall(0, "call_b1", "late_tool", `{"path":"/tmp/x"}`)},
			final: final(llm.StopToolUse, &llm.Usage{Input: 20, CacheRead: 100, Output: 30},
				callPart("call_b1", "late_tool", `{"path":"/tmp/x"}`))},
		{name: "chat length", api: provider.OpenAIChat, caps: chatText, fixture: "chat_length.sse",
			events: []llm.Event{textDelta(0, "Cut")},
			final:  final(llm.StopLength, &llm.Usage{Input: 10, Output: 16}, llm.Text("Cut"))},
		{name: "chat content filter", api: provider.OpenAIChat, caps: chatText, fixture: "chat_content_filter.sse",
			events: []llm.Event{textDelta(0, "I")},
			final: func() *llm.Message {
				m := final(llm.StopError, &llm.Usage{Input: 10, Output: 1}, llm.Text("I"))
				m.ErrorMessage = "the answer was stopped by the content filter"
				return m
			}()},
		{name: "chat without usage", api: provider.OpenAIChat, caps: chatText, fixture: "chat_no_usage.sse",
			events: []llm.Event{textDelta(0, "Hi")},
			final:  final(llm.StopEnd, nil, llm.Text("Hi"))},
		{name: "chat error mid-stream", api: provider.OpenAIChat, caps: chatText, fixture: "chat_error.sse",
			events:  []llm.Event{textDelta(0, "Partial")},
			wantErr: []string{"openai-chat", "server_error", "The server had an error while processing your request."}},
		{name: "chat cut before finish", api: provider.OpenAIChat, caps: chatText, fixture: "chat_truncated.sse",
			events:  []llm.Event{textDelta(0, "Hel")},
			wantErr: []string{"openai-chat", "without a finish_reason"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, reply{sse: tc.fixture})
			a := newAdapter(t, tc.api, model, tc.caps, srv.URL)
			evs, err := collect(a, &llm.Request{Messages: []llm.Message{head("p", baseTool), user("hi")}})
			if len(evs) == 0 || evs[0].Type != llm.EventStart {
				t.Fatalf("events = %v (err %v), want EventStart first", evs, err)
			}
			evs = append([]llm.Event(nil), evs[1:]...)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("stream succeeded, want an error containing %q", tc.wantErr)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				equal(t, "events before the error", evs, tc.events)
				return
			}
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			if len(evs) == 0 || evs[len(evs)-1].Type != llm.EventDone {
				t.Fatalf("events = %v, want EventDone last", evs)
			}
			done := evs[len(evs)-1]
			equal(t, "events", evs[:len(evs)-1], tc.events)
			equal(t, "final message", done.Message, tc.final)
			checkIndexes(t, evs[:len(evs)-1], done.Message)
		})
	}
}

// checkIndexes checks that each event's Index names the part of the final
// message it concerns.
func checkIndexes(t *testing.T, evs []llm.Event, m *llm.Message) {
	t.Helper()
	want := map[llm.EventType]llm.PartType{
		llm.EventTextDelta: llm.PartText, llm.EventThinkingDelta: llm.PartThinking, llm.EventToolCall: llm.PartToolCall,
	}
	for _, ev := range evs {
		if ev.Index >= len(m.Content) || m.Content[ev.Index].Type != want[ev.Type] {
			t.Errorf("event %s at index %d does not match the final message's parts", ev.Type, ev.Index)
		}
	}
}

// TestHTTPErrors checks that an error status fails the stream with the
// status, the code and the server's message, without retrying.
func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   []string
		code   string
	}{
		{"rate limit", 429, `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			[]string{"HTTP 429", "rate_limit_exceeded", "Rate limit reached for requests", "retry"}, "rate_limit_exceeded"},
		{"bad request", 400, `{"error":{"message":"Invalid 'input[2].content': string too long.","type":"invalid_request_error","param":"input[2].content","code":"string_above_max_length"}}`,
			[]string{"HTTP 400", "string_above_max_length", "string too long", "input[2].content"}, "string_above_max_length"},
		{"string error (Ollama)", 404, `{"error":"model \"llama9\" not found, try pulling it first"}`,
			[]string{"HTTP 404", `model "llama9" not found`, "base URL"}, ""},
		{"plain text", 502, `Bad Gateway`, []string{"HTTP 502", "Bad Gateway"}, ""},
	}
	for _, api := range []provider.API{provider.OpenAIResponses, provider.OpenAIChat} {
		for _, tt := range tests {
			t.Run(string(api)+" "+tt.name, func(t *testing.T) {
				srv := newServer(t, reply{status: tt.status, body: tt.body})
				a := newAdapter(t, api, "m", provider.Capabilities{Tools: llm.ToolsNone}, srv.URL)
				evs, err := collect(a, &llm.Request{Messages: []llm.Message{user("hi")}})
				if len(evs) != 0 {
					t.Errorf("events before the error: %v", evs)
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) {
					t.Fatalf("error = %v (%T), want an *APIError", err, err)
				}
				equal(t, "status", apiErr.StatusCode, tt.status)
				equal(t, "code", apiErr.Code, tt.code)
				for _, s := range append(tt.want, string(api)) {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				if n := len(srv.requests()); n != 1 {
					t.Errorf("the server got %d requests, want 1 (no retries)", n)
				}
			})
		}
	}
}

// TestStopEarly checks that stopping the range cancels the request and
// that a cancelled context ends the stream with its error.
func TestStopEarly(t *testing.T) {
	for _, tt := range []struct {
		api     provider.API
		fixture string
	}{
		{provider.OpenAIResponses, "responses_truncated.sse"},
		{provider.OpenAIChat, "chat_truncated.sse"},
	} {
		t.Run(string(tt.api)+" break", func(t *testing.T) {
			gone := make(chan struct{})
			srv := newServer(t, reply{sse: tt.fixture, block: true, gone: gone})
			a := newAdapter(t, tt.api, "m", provider.Capabilities{Tools: llm.ToolsNone}, srv.URL)
			for ev, err := range a.Stream(context.Background(), &llm.Request{Messages: []llm.Message{user("hi")}}) {
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				if ev.Type == llm.EventTextDelta {
					break
				}
			}
			select {
			case <-gone:
			case <-time.After(5 * time.Second):
				t.Fatal("the server still holds the request after the caller stopped ranging")
			}
		})
		t.Run(string(tt.api)+" cancel", func(t *testing.T) {
			gone := make(chan struct{})
			srv := newServer(t, reply{sse: tt.fixture, block: true, gone: gone})
			a := newAdapter(t, tt.api, "m", provider.Capabilities{Tools: llm.ToolsNone}, srv.URL)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var last error
			for ev, err := range a.Stream(ctx, &llm.Request{Messages: []llm.Message{user("hi")}}) {
				if err != nil {
					last = err
					break
				}
				if ev.Type == llm.EventTextDelta {
					cancel()
				}
			}
			if !errors.Is(last, context.Canceled) {
				t.Errorf("error after cancel = %v, want context.Canceled", last)
			}
			<-gone
		})
	}
}

// TestResponsesItemDoneTwice checks that a function call the server
// closes twice (found by FuzzResponsesStream) is completed once, with the
// first call, so the events and the final message agree.
func TestResponsesItemDoneTwice(t *testing.T) {
	sse := "data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"base_tool\",\"arguments\":\"{\\\"query\\\":\\\"a\\\"}\"}}\n\n" +
		"data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"call_id\":\"c2\",\"name\":\"other\",\"arguments\":\"{}\"}}\n\n" +
		"data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n"
	retries := 0
	m, err := NewResponses(Config{APIKey: "k", BaseURL: "http://api.invalid/v1", Model: "test-model", Capabilities: respText,
		MaxRetries: &retries, HTTPClient: &http.Client{Transport: answerWith{http.StatusOK, []byte(sse)}}})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(m, &llm.Request{Messages: []llm.Message{head("p", baseTool), user("hi")}})
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	want := []llm.Event{{Type: llm.EventStart}, toolCall(0, "c1", "base_tool", `{"query":"a"}`)}
	equal(t, "events", evs[:len(evs)-1], want)
	equal(t, "final calls", evs[len(evs)-1].Message.ToolCalls(), []llm.ToolCall{*want[1].ToolCall})
}

// TestNegativeUsageCountsAsZero checks that a server's negative token
// counts do not reach the transcript: the metrics log refuses records
// with negative counts, so such an answer would leave an unreadable line.
func TestNegativeUsageCountsAsZero(t *testing.T) {
	for _, c := range []struct {
		api provider.API
		sse string
	}{
		{provider.OpenAIChat, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]," +
			"\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":-3,\"prompt_tokens_details\":{\"cached_tokens\":-5,\"cache_write_tokens\":-1}}}\n\ndata: [DONE]\n\n"},
		{provider.OpenAIResponses, "data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"," +
			"\"usage\":{\"input_tokens\":10,\"output_tokens\":-3,\"input_tokens_details\":{\"cached_tokens\":-5,\"cache_write_tokens\":-1}}}}\n\n"},
	} {
		retries := 0
		cfg := Config{APIKey: "k", BaseURL: "http://api.invalid/v1", Model: "test-model", Capabilities: respText,
			MaxRetries: &retries, HTTPClient: &http.Client{Transport: answerWith{http.StatusOK, []byte(c.sse)}}}
		var m llm.Model
		var err error
		if c.api == provider.OpenAIChat {
			cfg.Capabilities = chatText
			m, err = NewChat(cfg)
		} else {
			m, err = NewResponses(cfg)
		}
		if err != nil {
			t.Fatal(err)
		}
		evs, err := collect(m, &llm.Request{Messages: []llm.Message{head("p", baseTool), user("hi")}})
		if err != nil {
			t.Fatalf("%s: %v", c.api, err)
		}
		equal(t, string(c.api)+" usage", evs[len(evs)-1].Message.Usage, &llm.Usage{Input: 10})
	}
}
