package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

func textDelta(i int, s string) llm.Event {
	return llm.Event{Type: llm.EventTextDelta, Index: i, Delta: s}
}

func thinkingDelta(i int, s string) llm.Event {
	return llm.Event{Type: llm.EventThinkingDelta, Index: i, Delta: s}
}

func toolCallEvent(i int, id, name, args string) llm.Event {
	return llm.Event{Type: llm.EventToolCall, Index: i, ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}}
}

func done(stop llm.StopReason, usage llm.Usage, parts ...llm.Part) llm.Event {
	return llm.Event{Type: llm.EventDone, Message: &llm.Message{
		Role: llm.RoleAssistant, Content: parts, StopReason: stop, Usage: &usage, Model: testModel,
	}}
}

var start = llm.Event{Type: llm.EventStart}

func TestStreamFixtures(t *testing.T) {
	refusal := done(llm.StopError, llm.Usage{Input: 30, Output: 4}, llm.Text("I can"))
	refusal.Message.ErrorMessage = `the model refused to answer (stop_reason "refusal"): The request asks for malware.`
	const signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds="
	const redacted = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabA="
	cases := []struct {
		fixture string
		caps    provider.Capabilities
		msgs    []llm.Message
		events  []llm.Event
	}{
		{
			fixture: "text.sse",
			events: []llm.Event{start, textDelta(0, "Hello"), textDelta(0, ", world."),
				done(llm.StopEnd, llm.Usage{Input: 25, Output: 6}, llm.Text("Hello, world."))},
		},
		{
			fixture: "thinking.sse",
			events: []llm.Event{start, thinkingDelta(0, "The user wants "), thinkingDelta(0, "a short answer."), textDelta(1, "Yes."),
				done(llm.StopEnd, llm.Usage{Input: 40, Output: 31},
					llm.Part{Type: llm.PartThinking, Text: "The user wants a short answer.", Signature: signature},
					llm.Text("Yes."))},
		},
		{
			fixture: "redacted_thinking.sse",
			events: []llm.Event{start, textDelta(1, "Done."),
				done(llm.StopEnd, llm.Usage{Input: 20, Output: 9},
					llm.Part{Type: llm.PartThinking, Redacted: true, Signature: redacted},
					llm.Text("Done."))},
		},
		{
			fixture: "tool_call.sse",
			events: []llm.Event{start, textDelta(0, "Let me look."),
				toolCallEvent(1, "toolu_01A09q90qw90lq917835lq9", "base_tool", `{"q": "weather in Paris"}`),
				toolCallEvent(2, "toolu_01B", "bare_tool", `{}`),
				done(llm.StopToolUse, llm.Usage{Input: 120, Output: 48}, llm.Text("Let me look."),
					callPart("toolu_01A09q90qw90lq917835lq9", "base_tool", `{"q": "weather in Paris"}`),
					callPart("toolu_01B", "bare_tool", `{}`))},
		},
		{
			fixture: "usage_cache.sse",
			events: []llm.Event{start, textDelta(0, "Cached."),
				done(llm.StopEnd, llm.Usage{Input: 50, CacheRead: 1800, CacheWrite: 248, Output: 503}, llm.Text("Cached."))},
		},
		{
			fixture: "bridge_call.sse", caps: bridgeCaps, msgs: bridgeLoaded,
			events: []llm.Event{start,
				toolCallEvent(0, "toolu_01BR", "late_tool", `{"path": "a.txt"}`),
				done(llm.StopToolUse, llm.Usage{Input: 300, Output: 30}, callPart("toolu_01BR", "late_tool", `{"path": "a.txt"}`))},
		},
		{
			// Outside the bridge class a call_tool call is left alone.
			fixture: "bridge_call.sse", caps: changesCaps,
			events: []llm.Event{start,
				toolCallEvent(0, "toolu_01BR", "call_tool", `{"name": "late_tool", "arguments": {"path": "a.txt"}}`),
				done(llm.StopToolUse, llm.Usage{Input: 300, Output: 30},
					callPart("toolu_01BR", "call_tool", `{"name": "late_tool", "arguments": {"path": "a.txt"}}`))},
		},
		{
			fixture: "refusal.sse",
			events:  []llm.Event{start, textDelta(0, "I can"), refusal},
		},
		{
			// A server tool block has no part; indexes follow the message's
			// content.
			fixture: "max_tokens.sse",
			events: []llm.Event{start, textDelta(0, "A long"),
				done(llm.StopLength, llm.Usage{Input: 12, Output: 2}, llm.Text("A long"))},
		},
	}
	for _, c := range cases {
		name := strings.TrimSuffix(c.fixture, ".sse")
		if c.caps.Tools != "" {
			name += "_" + string(c.caps.Tools)
		}
		t.Run(name, func(t *testing.T) {
			api := newFakeAPI(t, 200, "text/event-stream", fixture(t, c.fixture), nil)
			caps := c.caps
			if caps.Tools == "" {
				caps = changesCaps
			}
			msgs := c.msgs
			if msgs == nil {
				msgs = nativeUpdate[:2]
			}
			m := newModel(t, api.config(Config{Capabilities: caps}))
			events, err := collect(m.Stream(t.Context(), &llm.Request{Messages: msgs}))
			if err != nil {
				t.Fatalf("stream error: %v", err)
			}
			if diff := cmp.Diff(c.events, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamErrors(t *testing.T) {
	cases := []struct {
		name        string
		status      int
		contentType string
		body        string
		header      map[string]string
		events      []llm.Event
		want        APIError
		mid         bool
		temporary   bool
		text        []string
	}{
		{
			name: "http 400", status: 400, contentType: "application/json", body: "http_400.json",
			header: map[string]string{"request-id": "req_011CSHoEeqs5C35K2UUqR7Fy"},
			want: APIError{StatusCode: 400, Type: "invalid_request_error", RequestID: "req_011CSHoEeqs5C35K2UUqR7Fy",
				Message: "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
			text: []string{"HTTP 400", "invalid_request_error", "unexpected `tool_use_id`", "req_011CSHoEeqs5C35K2UUqR7Fy"},
		},
		{
			name: "overloaded mid-stream", status: 200, contentType: "text/event-stream", body: "overloaded_midstream.sse",
			events:    []llm.Event{start, textDelta(0, "Partial")},
			want:      APIError{StatusCode: 200, Type: "overloaded_error", Message: "Overloaded"},
			mid:       true,
			temporary: true,
			text:      []string{"during the stream", "overloaded_error", "Overloaded", "retry later"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			api := newFakeAPI(t, c.status, c.contentType, fixture(t, c.body), c.header)
			m := newModel(t, api.config(Config{Capabilities: changesCaps}))
			events, err := collect(m.Stream(t.Context(), &llm.Request{Messages: nativeUpdate[:2]}))
			if diff := cmp.Diff(c.events, events); diff != "" {
				t.Errorf("events before the error (-want +got):\n%s", diff)
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error = %v (%T), want an *APIError", err, err)
			}
			if *apiErr != c.want {
				t.Errorf("error = %+v, want %+v", *apiErr, c.want)
			}
			if apiErr.DuringStream() != c.mid || apiErr.Temporary() != c.temporary {
				t.Errorf("mid %v, temporary %v; want %v, %v", apiErr.DuringStream(), apiErr.Temporary(), c.mid, c.temporary)
			}
			if !containsAll(err.Error(), c.text) {
				t.Errorf("error text %q lacks one of %q", err, c.text)
			}
			if n := len(api.captured()); n != 1 {
				t.Errorf("%d requests, want 1 (retries are off)", n)
			}
		})
	}
}

func TestStreamTruncated(t *testing.T) {
	api := newFakeAPI(t, 200, "text/event-stream", fixture(t, "truncated.sse"), nil)
	m := newModel(t, api.config(Config{Capabilities: changesCaps}))
	events, err := collect(m.Stream(t.Context(), &llm.Request{Messages: nativeUpdate[:2]}))
	if !errors.Is(err, errIncomplete) {
		t.Errorf("error = %v, want %v", err, errIncomplete)
	}
	if diff := cmp.Diff([]llm.Event{start, textDelta(0, "Cut")}, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// hangingAPI sends message_start and a text delta, then holds the stream
// open until the client goes away, which it reports on gone.
func hangingAPI(t *testing.T) (*httptest.Server, <-chan struct{}) {
	t.Helper()
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse := string(fixture(t, "text.sse"))
		head := sse[:strings.Index(sse, "event: content_block_delta")]
		head += "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n"
		_, _ = w.Write([]byte(head))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(gone)
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	return srv, gone
}

func TestStreamStopEarlyCancelsTheRequest(t *testing.T) {
	srv, gone := hangingAPI(t)
	zero := 0
	m := newModel(t, Config{Capabilities: changesCaps, BaseURL: srv.URL, APIKey: "k", MaxRetries: &zero, HTTPClient: srv.Client()})
	var got []llm.Event
	for ev, err := range m.Stream(t.Context(), &llm.Request{Messages: nativeUpdate[:2]}) {
		if err != nil {
			t.Fatalf("error: %v", err)
		}
		got = append(got, ev)
		if ev.Type == llm.EventTextDelta {
			break
		}
	}
	if diff := cmp.Diff([]llm.Event{start, textDelta(0, "Hel")}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server still holds the request after the range stopped")
	}
}

func TestStreamContextCancelled(t *testing.T) {
	srv, gone := hangingAPI(t)
	zero := 0
	m := newModel(t, Config{Capabilities: changesCaps, BaseURL: srv.URL, APIKey: "k", MaxRetries: &zero, HTTPClient: srv.Client()})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var final error
	for ev, err := range m.Stream(ctx, &llm.Request{Messages: nativeUpdate[:2]}) {
		if err != nil {
			final = err
			break
		}
		if ev.Type == llm.EventTextDelta {
			cancel()
		}
	}
	if final != context.Canceled {
		t.Errorf("error = %v, want ctx.Err() (%v)", final, context.Canceled)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server still holds the request after cancellation")
	}

	// A context cancelled before the call sends nothing and says so.
	api := newFakeAPI(t, 200, "text/event-stream", fixture(t, "text.sse"), nil)
	m = newModel(t, api.config(Config{Capabilities: changesCaps}))
	dead, kill := context.WithCancel(t.Context())
	kill()
	if _, err := collect(m.Stream(dead, &llm.Request{Messages: nativeUpdate[:2]})); err != context.Canceled {
		t.Errorf("error = %v, want %v", err, context.Canceled)
	}
}
