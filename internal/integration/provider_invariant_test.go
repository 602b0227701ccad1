package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/provider/anthropic"
	"github.com/toolshelf/toolshelf/provider/gemini"
	"github.com/toolshelf/toolshelf/provider/openai"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// This file is the prefix-invariant test: a scripted 30-request session
// (8 tools loaded by tool_search, 2 removed by the runtime, 2 section
// updates) runs through the real agent loop and the real adapters against
// a local server that answers in each API's wire format and keeps every
// request body. For each pair of consecutive requests it checks that
// everything but the conversation (tools, system, model, settings) is
// byte-identical and that the earlier conversation is a prefix of the
// later one, cache markers aside (they are not part of a provider's cache
// key, and the last one moves forward every request).

// reply is what the scripted model says next: text, or one tool call.
type reply struct {
	text string
	tool string // a real tool name; the server wraps it in call_tool for the bridge
	args string
}

// step is one user prompt of the script, what the runtime does before it,
// and the model's replies to it.
type step struct {
	remove   string       // a tool the runtime deactivates before the prompt
	sections llm.Sections // sections set before the prompt
	replies  []reply
}

func load(name string) step {
	return step{replies: []reply{
		{tool: toolsearch.Name, args: fmt.Sprintf(`{"query":"select:%s"}`, name)},
		{tool: name, args: `{"text":"hello"}`},
		{text: "used " + name},
	}}
}

// script returns the session: 8 loads, 2 removals, 2 section updates and a
// call of a loaded tool; 30 requests in all.
func script() []step {
	return []step{
		load("notes_create"),
		load("calendar_list"),
		{sections: llm.Sections{llm.Set("docs", "Docs live in /docs.")}, replies: []reply{{text: "noted"}}},
		load("mail_send"),
		{remove: "notes_create", replies: []reply{{text: "ok"}}},
		load("files_read"),
		{replies: []reply{{tool: "calendar_list", args: `{"text":"today"}`}, {text: "listed"}}},
		load("issues_open"),
		{sections: llm.Sections{llm.Delete("docs")}, replies: []reply{{text: "forgotten"}}},
		load("chat_post"),
		{remove: "mail_send", replies: []reply{{text: "ok"}}},
		load("weather_get"),
		load("maps_route"),
	}
}

var shelfTools = []string{"notes_create", "calendar_list", "mail_send", "files_read", "issues_open",
	"chat_post", "weather_get", "maps_route", "unused_one", "unused_two"}

func shelf(t *testing.T) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry()
	ranker, err := search.NewBM25F(nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := toolsearch.New(reg, ranker).Tool()
	if err := reg.Register(ts); err != nil {
		t.Fatal(err)
	}
	for _, name := range shelfTools {
		name := name
		err := reg.Register(tool.Tool{
			Name:        name,
			Description: "The " + strings.ReplaceAll(name, "_", " ") + " tool.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"Input."}},"required":["text"]}`),
			Exposure:    tool.Deferred,
			Handler: tool.HandlerFunc(func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
				return tool.TextResult(name + " ran with " + string(args)), nil
			}),
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// server answers every request with the next scripted reply in the wire
// format of the endpoint it was sent to, and keeps the request bodies and
// what the runtime had done before each.
type server struct {
	t       *testing.T
	bridge  bool
	mu      sync.Mutex
	replies []reply
	bodies  [][]byte
	marks   []mark
	// updates counts the system updates in the transcript so far and
	// toolUpdates those that change tools; removed is set when the runtime
	// removes a tool and cleared by the next request.
	updates, toolUpdates atomic.Int64
	removed              atomic.Bool
	// check validates the Gemini bodies as the API does: the emulator's
	// Gemini checks.
	check *emulator.Server
}

// mark is what happened between the previous request and this one.
type mark struct {
	updates, toolUpdates int64
	afterRemoval         bool
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.marks = append(s.marks, mark{s.updates.Load(), s.toolUpdates.Load(), s.removed.Swap(false)})
	n := len(s.bodies)
	if len(s.replies) == 0 {
		s.mu.Unlock()
		s.t.Errorf("request %d: the script has no reply left", n)
		http.Error(w, "script exhausted", 500)
		return
	}
	rep := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()
	if rep.tool != "" && s.bridge && rep.tool != toolsearch.Name {
		rep.args = fmt.Sprintf(`{"name":%q,"arguments":%s}`, rep.tool, rep.args)
		rep.tool = llm.CallToolName
	}
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		s.checkGemini(r, n, body)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	switch {
	case strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
		writeGemini(w, rep)
	case strings.HasSuffix(r.URL.Path, "/messages"):
		writeAnthropic(w, n, rep)
	case strings.HasSuffix(r.URL.Path, "/responses"):
		writeResponses(w, n, rep)
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		writeChat(w, n, rep)
	default:
		http.NotFound(w, r)
	}
}

func sse(w io.Writer, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
}

type obj = map[string]any

func writeAnthropic(w io.Writer, n int, rep reply) {
	usage := obj{"input_tokens": 100, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 1}
	sse(w, "message_start", obj{"type": "message_start", "message": obj{"id": fmt.Sprintf("msg_%d", n), "type": "message",
		"role": "assistant", "model": "m", "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	stop := "end_turn"
	if rep.tool != "" {
		stop = "tool_use"
		sse(w, "content_block_start", obj{"type": "content_block_start", "index": 0,
			"content_block": obj{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", n), "name": rep.tool, "input": obj{}}})
		sse(w, "content_block_delta", obj{"type": "content_block_delta", "index": 0, "delta": obj{"type": "input_json_delta", "partial_json": rep.args}})
	} else {
		sse(w, "content_block_start", obj{"type": "content_block_start", "index": 0, "content_block": obj{"type": "text", "text": ""}})
		sse(w, "content_block_delta", obj{"type": "content_block_delta", "index": 0, "delta": obj{"type": "text_delta", "text": rep.text}})
	}
	sse(w, "content_block_stop", obj{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": stop, "stop_sequence": nil},
		"usage": obj{"input_tokens": 100, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 5}})
	sse(w, "message_stop", obj{"type": "message_stop"})
}

// checkGemini sends a Gemini body to the emulator, which must accept it.
func (s *server) checkGemini(r *http.Request, n int, body []byte) {
	if s.check == nil {
		return
	}
	req := httptest.NewRequest(http.MethodPost, r.URL.String(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	rec := httptest.NewRecorder()
	s.check.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		s.t.Errorf("request %d: the emulator answers %d: %s\n%s", n, rec.Code, rec.Body, body)
	}
}

func writeGemini(w io.Writer, rep reply) {
	part := obj{"text": rep.text}
	if rep.tool != "" {
		var args any
		_ = json.Unmarshal([]byte(rep.args), &args)
		part = obj{"functionCall": obj{"name": rep.tool, "args": args}}
	}
	sse(w, "", obj{"candidates": []any{obj{"content": obj{"parts": []any{part}, "role": "model"}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": obj{"promptTokenCount": 100, "candidatesTokenCount": 5, "totalTokenCount": 105}, "modelVersion": "m"})
}

func writeResponses(w io.Writer, n int, rep reply) {
	seq := 0
	ev := func(typ string, fields obj) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		sse(w, typ, fields)
	}
	resp := func(status string, output []any) obj {
		r := obj{"id": fmt.Sprintf("resp_%d", n), "object": "response", "created_at": 1, "status": status, "model": "m", "output": output}
		if status == "completed" {
			r["usage"] = obj{"input_tokens": 100, "input_tokens_details": obj{"cached_tokens": 0}, "output_tokens": 5,
				"output_tokens_details": obj{"reasoning_tokens": 0}, "total_tokens": 105}
		}
		return r
	}
	ev("response.created", obj{"response": resp("in_progress", []any{})})
	var item obj
	if rep.tool != "" {
		id := fmt.Sprintf("fc_%d", n)
		item = obj{"type": "function_call", "id": id, "call_id": fmt.Sprintf("call_%d", n), "name": rep.tool, "arguments": rep.args, "status": "completed"}
		ev("response.output_item.added", obj{"output_index": 0, "item": obj{"type": "function_call", "id": id,
			"call_id": item["call_id"], "name": rep.tool, "arguments": "", "status": "in_progress"}})
		ev("response.function_call_arguments.delta", obj{"item_id": id, "output_index": 0, "delta": rep.args})
		ev("response.function_call_arguments.done", obj{"item_id": id, "output_index": 0, "arguments": rep.args})
	} else {
		id := fmt.Sprintf("msg_%d", n)
		part := obj{"type": "output_text", "text": rep.text, "annotations": []any{}}
		item = obj{"type": "message", "id": id, "role": "assistant", "status": "completed", "content": []any{part}}
		ev("response.output_item.added", obj{"output_index": 0, "item": obj{"type": "message", "id": id, "role": "assistant",
			"status": "in_progress", "content": []any{}}})
		ev("response.content_part.added", obj{"item_id": id, "output_index": 0, "content_index": 0,
			"part": obj{"type": "output_text", "text": "", "annotations": []any{}}})
		ev("response.output_text.delta", obj{"item_id": id, "output_index": 0, "content_index": 0, "delta": rep.text, "logprobs": []any{}})
		ev("response.output_text.done", obj{"item_id": id, "output_index": 0, "content_index": 0, "text": rep.text, "logprobs": []any{}})
		ev("response.content_part.done", obj{"item_id": id, "output_index": 0, "content_index": 0, "part": part})
	}
	ev("response.output_item.done", obj{"output_index": 0, "item": item})
	ev("response.completed", obj{"response": resp("completed", []any{item})})
}

func writeChat(w io.Writer, n int, rep reply) {
	chunk := func(delta obj, finish any) obj {
		return obj{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": 1, "model": "m",
			"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}, "usage": nil}
	}
	sse(w, "", chunk(obj{"role": "assistant", "content": ""}, nil))
	finish := "stop"
	if rep.tool != "" {
		finish = "tool_calls"
		sse(w, "", chunk(obj{"tool_calls": []any{obj{"index": 0, "id": fmt.Sprintf("call_%d", n), "type": "function",
			"function": obj{"name": rep.tool, "arguments": ""}}}}, nil))
		sse(w, "", chunk(obj{"tool_calls": []any{obj{"index": 0, "function": obj{"arguments": rep.args}}}}, nil))
	} else {
		sse(w, "", chunk(obj{"content": rep.text}, nil))
	}
	sse(w, "", chunk(obj{}, finish))
	sse(w, "", obj{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{}, "usage": obj{"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// run plays the script through the agent and the model, and returns the
// request bodies and marks.
func run(t *testing.T, newModel func(baseURL string) llm.Model, bridge bool) ([][]byte, []mark) {
	t.Helper()
	check, err := emulator.New(emulator.Config{Responder: emulator.Echo{}, ContextWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := &server{t: t, bridge: bridge, check: check}
	for _, st := range script() {
		srv.replies = append(srv.replies, st.replies...)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	reg := shelf(t)
	recorder := agent.RecorderFunc(func(m llm.Message) error {
		if m.Role == llm.RoleSystem {
			srv.updates.Add(1)
			if len(m.ToolsAdded)+len(m.ToolsRemoved) > 0 {
				srv.toolUpdates.Add(1)
			}
		}
		return nil
	})
	a, err := agent.New(agent.Config{Model: newModel(hs.URL), Tools: reg, SystemPrompt: "You are a test agent.",
		Sections: llm.Sections{llm.Set("rules", "Be brief.")}, Recorder: recorder})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, st := range script() {
		if st.remove != "" {
			if got := reg.Deactivate(st.remove); len(got) != 1 {
				t.Fatalf("step %d: %s was not active", i, st.remove)
			}
			srv.removed.Store(true)
		}
		if st.sections != nil {
			a.SetSections(st.sections)
		}
		for _, err := range a.Run(ctx, llm.UserText(fmt.Sprintf("step %d", i), int64(i+1))) {
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
	}
	if len(srv.replies) != 0 {
		t.Fatalf("%d scripted replies were not used", len(srv.replies))
	}
	for _, m := range a.Messages() {
		if m.Role == llm.RoleToolResult && m.IsError {
			t.Errorf("tool %s failed: %s", m.ToolName, llm.ContentText(m.Content, " "))
		}
	}
	return srv.bodies, srv.marks
}

// conversation names the body field that holds the conversation.
func conversation(body map[string]json.RawMessage) string {
	for _, k := range []string{"input", "contents"} {
		if _, ok := body[k]; ok {
			return k
		}
	}
	return "messages"
}

// stripMarkers removes cache markers, which are not part of the cache key.
func stripMarkers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "cache_control")
		delete(x, "prompt_cache_breakpoint")
		for k, e := range x {
			x[k] = stripMarkers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = stripMarkers(e)
		}
	}
	return v
}

// breaks compares consecutive requests and returns, per request number
// (1-based), what stopped it from extending the previous one: "head" when
// a field other than the conversation differs (tools, system, ...), "tools"
// when only that is "tools", "messages" when the conversation is not an
// extension.
func breaks(t *testing.T, bodies [][]byte) map[int][]string {
	t.Helper()
	out := map[int][]string{}
	var prev map[string]json.RawMessage
	var prevConv []any
	for i, b := range bodies {
		var body map[string]json.RawMessage
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		var conv []any
		if err := json.Unmarshal(body[conversation(body)], &conv); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		for j := range conv {
			conv[j] = stripMarkers(conv[j])
		}
		if prev != nil {
			var why []string
			keys := map[string]bool{}
			for k := range prev {
				keys[k] = true
			}
			for k := range body {
				keys[k] = true
			}
			names := make([]string, 0, len(keys))
			for k := range keys {
				names = append(names, k)
			}
			slices.Sort(names)
			for _, k := range names {
				if k != conversation(body) && !bytes.Equal(prev[k], body[k]) {
					why = append(why, k)
				}
			}
			if len(conv) < len(prevConv) {
				why = append(why, "conversation shorter")
			} else {
				for j := range prevConv {
					pj, _ := json.Marshal(prevConv[j])
					cj, _ := json.Marshal(conv[j])
					if !bytes.Equal(pj, cj) {
						why = append(why, fmt.Sprintf("conversation item %d", j))
						break
					}
				}
			}
			if len(why) > 0 {
				out[i+1] = why
			}
		}
		prev, prevConv = body, conv
	}
	return out
}

type adapterCase struct {
	name     string
	newModel func(baseURL string) llm.Model
	class    llm.ToolSupport
}

func noRetries() *int { n := 0; return &n }

func anthropicModel(t *testing.T, model string, caps *provider.Capabilities) func(string) llm.Model {
	return func(baseURL string) llm.Model {
		c := provider.DefaultTable().Lookup(provider.AnthropicMessages, model)
		if caps != nil {
			c = *caps
		}
		m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: baseURL, Model: model, Capabilities: c, MaxRetries: noRetries()})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

func responsesModel(t *testing.T, model string, caps *provider.Capabilities) func(string) llm.Model {
	return func(baseURL string) llm.Model {
		c := provider.DefaultTable().Lookup(provider.OpenAIResponses, model)
		if caps != nil {
			c = *caps
		}
		m, err := openai.NewResponses(openai.Config{APIKey: "test", BaseURL: baseURL + "/v1", Model: model, Capabilities: c, MaxRetries: noRetries()})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

func chatModel(t *testing.T, model string, caps *provider.Capabilities) func(string) llm.Model {
	return func(baseURL string) llm.Model {
		c := provider.DefaultTable().Lookup(provider.OpenAIChat, model)
		if caps != nil {
			c = *caps
		}
		m, err := openai.NewChat(openai.Config{APIKey: "test", BaseURL: baseURL + "/v1", Model: model, Capabilities: c, MaxRetries: noRetries()})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

func geminiModel(t *testing.T, model string, caps *provider.Capabilities) func(string) llm.Model {
	return func(baseURL string) llm.Model {
		c := provider.DefaultTable().Lookup(provider.Gemini, model)
		if caps != nil {
			c = *caps
		}
		m, err := gemini.New(gemini.Config{APIKey: "test", BaseURL: baseURL, Model: model, Capabilities: c, MaxRetries: noRetries()})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

func with(c provider.Capabilities, f func(*provider.Capabilities)) *provider.Capabilities {
	f(&c)
	return &c
}

// invariantCases are the adapters and classes the prefix invariant is
// checked on.
func invariantCases(t *testing.T) []adapterCase {
	table := provider.DefaultTable()
	bridgeOf := func(api provider.API, model string) *provider.Capabilities {
		return with(table.Lookup(api, model), func(c *provider.Capabilities) { c.Tools = llm.ToolsBridge })
	}
	cases := []adapterCase{
		{"anthropic changes", anthropicModel(t, "claude-opus-5-5", nil), llm.ToolsChanges},
		{"anthropic bridge", anthropicModel(t, "claude-opus-5-5", bridgeOf(provider.AnthropicMessages, "claude-opus-5-5")), llm.ToolsBridge},
		{"anthropic bridge without system messages", anthropicModel(t, "claude-sonnet-5", bridgeOf(provider.AnthropicMessages, "claude-sonnet-5")), llm.ToolsBridge},
		{"anthropic text", anthropicModel(t, "claude-opus-5-5", with(table.Lookup(provider.AnthropicMessages, "claude-opus-5-5"),
			func(c *provider.Capabilities) { c.Tools = llm.ToolsText })), llm.ToolsText},
		{"anthropic none", anthropicModel(t, "claude-sonnet-5", nil), llm.ToolsNone},
		{"responses additions (tool_search)", responsesModel(t, "gpt-5.6-sol", nil), llm.ToolsAdditions},
		{"responses additions (additional_tools)", responsesModel(t, "gpt-5.6-sol", with(table.Lookup(provider.OpenAIResponses, "gpt-5.6-sol"),
			func(c *provider.Capabilities) { c.Anchor = provider.AnchorAdditionalTools })), llm.ToolsAdditions},
		{"responses bridge", responsesModel(t, "gpt-5.6-sol", bridgeOf(provider.OpenAIResponses, "gpt-5.6-sol")), llm.ToolsBridge},
		{"responses none", responsesModel(t, "gpt-5.2", nil), llm.ToolsNone},
		{"chat additions (kimi)", chatModel(t, "kimi-k2.5", nil), llm.ToolsAdditions},
		{"chat text", chatModel(t, "qwen3", &provider.Capabilities{Tools: llm.ToolsText, MidConversationText: true}), llm.ToolsText},
		{"chat bridge", chatModel(t, "qwen3", bridgeOf(provider.OpenAIChat, "qwen3")), llm.ToolsBridge},
		{"chat none", chatModel(t, "qwen3", nil), llm.ToolsNone},
		{"gemini bridge", geminiModel(t, "gemini-3.5-flash", bridgeOf(provider.Gemini, "gemini-3.5-flash")), llm.ToolsBridge},
		{"gemini none", geminiModel(t, "gemini-3.5-flash", nil), llm.ToolsNone},
	}
	return cases
}

func TestPrefixInvariant(t *testing.T) {
	t.Parallel()
	for _, c := range invariantCases(t) {
		t.Run(c.name, func(t *testing.T) {
			bodies, marks := run(t, c.newModel, c.class == llm.ToolsBridge)
			if len(bodies) != 30 {
				t.Fatalf("%d requests, want 30", len(bodies))
			}
			got := breaks(t, bodies)
			want := map[int]bool{}
			for i := 1; i < len(marks); i++ {
				changed := marks[i].updates != marks[i-1].updates
				switch c.class {
				case llm.ToolsAdditions:
					// Exactly the request after each removal promotes the
					// current set to the top-level tools.
					if marks[i].afterRemoval {
						want[i+1] = true
					}
				case llm.ToolsText:
					// The whole tool list is sent; it changes with the tools.
					if marks[i].toolUpdates != marks[i-1].toolUpdates {
						want[i+1] = true
					}
				case llm.ToolsNone:
					// Every update rewrites the head.
					if changed {
						want[i+1] = true
					}
				}
			}
			var gotN, wantN []int
			for n := range got {
				gotN = append(gotN, n)
			}
			for n := range want {
				wantN = append(wantN, n)
			}
			slices.Sort(gotN)
			slices.Sort(wantN)
			if !slices.Equal(gotN, wantN) {
				t.Errorf("requests that do not extend the previous one: %v, want %v", gotN, wantN)
				for _, n := range gotN {
					t.Logf("request %d: %v", n, got[n])
				}
			}
			// Where the class breaks, say what broke: the text class keeps
			// the conversation and only rewrites the tool list.
			for n, why := range got {
				if c.class == llm.ToolsText && !slices.Equal(why, []string{"tools"}) {
					t.Errorf("request %d of the text class: %v changed, want only tools", n, why)
				}
			}
			t.Logf("%s: %d requests, prefix rewritten at %v", c.name, len(bodies), gotN)
		})
	}
}

// TestBridgeCallsThroughTheLoop: in the bridge class the model calls
// loaded tools through call_tool; the transcript records the real tool,
// arguments are validated against its schema, and a tool that is not
// loaded is refused with an error that says how to load it.
func TestBridgeCallsThroughTheLoop(t *testing.T) {
	t.Parallel()
	srv := &server{t: t, replies: []reply{
		{tool: llm.CallToolName, args: `{"name":"notes_create","arguments":{"text":"x"}}`}, // not loaded yet
		{tool: toolsearch.Name, args: `{"query":"select:notes_create"}`},
		{tool: llm.CallToolName, args: `{"name":"notes_create","arguments":{"text":5}}`}, // invalid arguments
		{tool: llm.CallToolName, args: `{"name":"notes_create","arguments":{"text":"x"}}`},
		{tool: llm.CallToolName, args: `{"tool":"notes_create"}`}, // not the call_tool shape
		{text: "done"},
	}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	caps := provider.Capabilities{Tools: llm.ToolsBridge}
	m := chatModel(t, "qwen3", &caps)(hs.URL)
	a, err := agent.New(agent.Config{Model: m, Tools: shelf(t), SystemPrompt: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range a.Run(context.Background(), llm.UserText("go", 1)) {
		if err != nil {
			t.Fatal(err)
		}
	}
	var results []string
	for _, msg := range a.Messages() {
		if msg.Role == llm.RoleAssistant {
			for _, c := range msg.ToolCalls() {
				if c.Name == llm.CallToolName && !strings.Contains(string(c.Arguments), `"tool"`) {
					t.Errorf("the transcript records a call_tool call: %s", c.Arguments)
				}
			}
		}
		if msg.Role == llm.RoleToolResult {
			results = append(results, fmt.Sprintf("%s error=%v: %s", msg.ToolName, msg.IsError, llm.ContentText(msg.Content, " ")))
		}
	}
	want := []string{
		`notes_create error=true: Tool "notes_create" is not loaded. Load it with tool_search first.`,
		`tool_search error=false: Loaded 1 tool.`,
		`notes_create error=true: Invalid arguments for tool "notes_create"`,
		`notes_create error=false: notes_create ran with {"text":"x"}`,
		`call_tool error=true: call_tool needs {"name": "<a loaded tool>", "arguments": {...}}`,
	}
	if len(results) != len(want) {
		t.Fatalf("results:\n%s", strings.Join(results, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(results[i], w) {
			t.Errorf("result %d = %q, want prefix %q", i, results[i], w)
		}
	}
	// On the wire the loaded tool's call went back as a call_tool call.
	last := string(srv.bodies[len(srv.bodies)-1])
	if !strings.Contains(last, `"arguments":"{\"name\":\"notes_create\",\"arguments\":{\"text\":\"x\"}}","name":"call_tool"`) ||
		!strings.Contains(last, `"arguments":"{\"tool\":\"notes_create\"}","name":"call_tool"`) {
		t.Errorf("the replayed call is not wrapped:\n%s", last)
	}
}
