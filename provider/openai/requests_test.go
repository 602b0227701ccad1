package openai

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// promoteOnceTranscript removes a tool (which promotes the current set to
// the top level once), then, later, adds one.
func promoteOnceTranscript() []llm.Message {
	return []llm.Message{
		head("base prompt", baseTool, oldTool),
		user("first"),
		systemUpdate("guidance one", nil, "old_tool"),
		assistant("test-model", llm.Text("ok")),
		user("second"),
		systemUpdate("guidance two", []llm.Tool{lateTool}),
		user("third"),
	}
}

// listKey is the field that holds the conversation in a body.
func listKey(api provider.API) string {
	if api == provider.OpenAIChat {
		return "messages"
	}
	return "input"
}

// TestRequestsExtendEachOther checks the cache property of consecutive
// requests: the later body keeps the earlier one's tools and conversation
// as a prefix, and only appends.
func TestRequestsExtendEachOther(t *testing.T) {
	tests := []struct {
		name     string
		api      provider.API
		caps     provider.Capabilities
		msgs     []llm.Message
		before   int // the earlier request's transcript length
		tools    []string
		appended []string
	}{
		{"responses promote once", provider.OpenAIResponses, respAdditionalTools, promoteOnceTranscript(), 5,
			[]string{"base_tool"}, []string{"additional_tools", "developer", "user"}},
		{"responses promote once, tool search", provider.OpenAIResponses, respToolSearch, promoteOnceTranscript(), 5,
			[]string{"base_tool"}, []string{"tool_search_call", "tool_search_output", "developer", "user"}},
		{"chat promote once", provider.OpenAIChat, chatSystemTools, promoteOnceTranscript(), 5,
			[]string{"base_tool"}, []string{"system:tools", "system", "user"}},
		{"responses bridge", provider.OpenAIResponses, respBridge, bridgeTranscript(), 2,
			[]string{"base_tool", "call_tool"}, []string{"developer", "function_call", "function_call_output", "user"}},
		{"responses bridge as user", provider.OpenAIResponses, respBridgeAsUser, bridgeTranscript(), 2,
			[]string{"base_tool", "call_tool"}, []string{"user", "function_call", "function_call_output", "user"}},
		{"chat bridge", provider.OpenAIChat, chatBridge, bridgeTranscript(), 2,
			[]string{"base_tool", "call_tool"}, []string{"system", "assistant", "tool", "user"}},
		{"chat bridge as user", provider.OpenAIChat, chatBridgeAsUser, bridgeTranscript(), 2,
			[]string{"base_tool", "call_tool"}, []string{"user", "assistant", "tool", "user"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdapter(t, tt.api, "test-model", tt.caps, "http://127.0.0.1:1")
			first, err := a.RequestBody(&llm.Request{Messages: tt.msgs[:tt.before]})
			if err != nil {
				t.Fatal(err)
			}
			second, err := a.RequestBody(&llm.Request{Messages: tt.msgs})
			if err != nil {
				t.Fatal(err)
			}
			b1, b2 := decode(t, first), decode(t, second)
			equal(t, "tools before", toolNames(b1["tools"]), tt.tools)
			equal(t, "tools after", toolNames(b2["tools"]), tt.tools)
			l1, l2 := b1[listKey(tt.api)].([]any), b2[listKey(tt.api)].([]any)
			if len(l2) < len(l1) {
				t.Fatalf("the later request has %d items, fewer than the earlier's %d", len(l2), len(l1))
			}
			equal(t, "prefix", l2[:len(l1)], l1)
			equal(t, "appended", labels(l2[len(l1):]), tt.appended)
		})
	}
}

// TestPromoteOnceGolden records the later request of the promote-once
// transcript for both APIs.
func TestPromoteOnceGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		api  provider.API
		caps provider.Capabilities
	}{
		{"responses_promote_once", provider.OpenAIResponses, respAdditionalTools},
		{"chat_promote_once", provider.OpenAIChat, chatSystemTools},
	} {
		a := newAdapter(t, tt.api, "test-model", tt.caps, "http://127.0.0.1:1")
		body, err := a.RequestBody(&llm.Request{Messages: promoteOnceTranscript()})
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, tt.name, body)
	}
}

// TestSentBodyIsRequestBody checks, at the server, that Stream sends
// exactly the bytes RequestBody returns, to the API's path.
func TestSentBodyIsRequestBody(t *testing.T) {
	for _, tt := range []struct {
		api     provider.API
		caps    provider.Capabilities
		fixture string
		path    string
	}{
		{provider.OpenAIResponses, respToolSearch, "responses_text.sse", "/v1/responses"},
		{provider.OpenAIChat, chatSystemTools, "chat_text.sse", "/v1/chat/completions"},
	} {
		t.Run(string(tt.api), func(t *testing.T) {
			srv := newServer(t, reply{sse: tt.fixture})
			a := newAdapter(t, tt.api, "test-model", tt.caps, srv.URL+"/v1")
			req := &llm.Request{Messages: append(promoteOnceTranscript(), conversation()[1:]...), MaxTokens: 64}
			if _, err := collect(a, req); err != nil {
				t.Fatalf("stream: %v", err)
			}
			want, err := a.RequestBody(req)
			if err != nil {
				t.Fatal(err)
			}
			got := srv.requests()
			if len(got) != 1 {
				t.Fatalf("server got %d requests, want 1", len(got))
			}
			if string(got[0]) != string(want) {
				t.Errorf("sent body differs from RequestBody:\n sent %s\n want %s", got[0], want)
			}
			if diffs := jsonDiff("", decodeAny(t, want), decodeAny(t, got[0])); len(diffs) > 0 {
				t.Errorf("sent body differs semantically:\n  %s", strings.Join(diffs, "\n  "))
			}
			equal(t, "path", srv.paths[0], tt.path)
		})
	}
}

// TestInvalidToolName checks that a name the API refuses fails the
// request before anything is sent.
func TestInvalidToolName(t *testing.T) {
	bad := llm.Tool{Name: "bad.name", Parameters: json.RawMessage(`{"type":"object"}`)}
	for _, tt := range []struct {
		api  provider.API
		caps provider.Capabilities
		msgs []llm.Message
	}{
		{provider.OpenAIResponses, respText, []llm.Message{head("p", bad), user("hi")}},
		{provider.OpenAIResponses, respAdditionalTools, []llm.Message{head("p", baseTool), user("hi"), systemUpdate("", []llm.Tool{bad})}},
		{provider.OpenAIChat, chatNone, []llm.Message{head("p", bad), user("hi")}},
		{provider.OpenAIChat, chatSystemTools, []llm.Message{head("p", baseTool), user("hi"), systemUpdate("", []llm.Tool{bad})}},
	} {
		srv := newServer(t, reply{sse: "chat_text.sse"})
		a := newAdapter(t, tt.api, "test-model", tt.caps, srv.URL)
		evs, err := collect(a, &llm.Request{Messages: tt.msgs})
		if err == nil || !strings.Contains(err.Error(), `"bad.name"`) {
			t.Errorf("%s: stream error = %v, want one naming the tool", tt.api, err)
		}
		if len(evs) != 0 {
			t.Errorf("%s: got events %v before the error, want none", tt.api, evs)
		}
		if n := len(srv.requests()); n != 0 {
			t.Errorf("%s: the server got %d requests, want none", tt.api, n)
		}
		if _, err := a.RequestBody(&llm.Request{Messages: tt.msgs}); err == nil {
			t.Errorf("%s: RequestBody accepted an invalid tool name", tt.api)
		}
	}
}

// TestConfig checks the constructors' validation and defaults.
func TestConfig(t *testing.T) {
	negative := -1
	tests := []struct {
		name    string
		api     provider.API
		cfg     Config
		wantErr string
		want    provider.Capabilities
	}{
		{"missing model", provider.OpenAIResponses, Config{}, "Config.Model is empty", provider.Capabilities{}},
		{"negative retries", provider.OpenAIChat, Config{Model: "m", MaxRetries: &negative}, "MaxRetries", provider.Capabilities{}},
		{"negative max tokens", provider.OpenAIChat, Config{Model: "m", MaxTokens: -5}, "MaxTokens", provider.Capabilities{}},
		{"changes on responses", provider.OpenAIResponses,
			Config{Model: "m", Capabilities: provider.Capabilities{Tools: llm.ToolsChanges, MidConversationText: true}}, "not available", provider.Capabilities{}},
		{"chat anchor on responses", provider.OpenAIResponses,
			Config{Model: "m", Capabilities: provider.Capabilities{Tools: llm.ToolsAdditions, MidConversationText: true, Anchor: provider.AnchorSystemTools}},
			"anchor", provider.Capabilities{}},
		{"default table, responses", provider.OpenAIResponses, Config{Model: "gpt-5.6-sol"}, "",
			provider.DefaultTable().Lookup(provider.OpenAIResponses, "gpt-5.6-sol")},
		{"default table, chat", provider.OpenAIChat, Config{Model: "kimi-k2"}, "",
			provider.DefaultTable().Lookup(provider.OpenAIChat, "kimi-k2")},
		{"explicit", provider.OpenAIChat, Config{Model: "llama3.2", Capabilities: chatText}, "", chatText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				caps provider.Capabilities
				err  error
			)
			if tt.api == provider.OpenAIChat {
				var m *Chat
				if m, err = NewChat(tt.cfg); err == nil {
					caps = m.Capabilities()
				}
			} else {
				var m *Responses
				if m, err = NewResponses(tt.cfg); err == nil {
					caps = m.Capabilities()
				}
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "capabilities", caps, tt.want)
		})
	}
	if tt := provider.DefaultTable().Lookup(provider.OpenAIResponses, "gpt-5.6-sol"); tt.Tools != llm.ToolsAdditions {
		t.Errorf("the default table gives gpt-5.6-sol class %q; this test expects additions", tt.Tools)
	}
}

// TestNilRequest checks that a nil request is an error, not a panic.
func TestNilRequest(t *testing.T) {
	for _, api := range []provider.API{provider.OpenAIResponses, provider.OpenAIChat} {
		a := newAdapter(t, api, "m", provider.Capabilities{Tools: llm.ToolsNone}, "http://127.0.0.1:1")
		if _, err := a.RequestBody(nil); err == nil {
			t.Errorf("%s: RequestBody(nil) succeeded", api)
		}
		var errs int
		for _, err := range a.Stream(context.Background(), nil) {
			if err == nil {
				t.Errorf("%s: Stream(nil) yielded an event", api)
			}
			errs++
		}
		if errs != 1 {
			t.Errorf("%s: Stream(nil) yielded %d errors, want one", api, errs)
		}
	}
}
