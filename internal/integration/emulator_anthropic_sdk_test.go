package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
	adapter "github.com/toolshelf/toolshelf/provider/anthropic"
)

// anthLongPrompt is a system prompt well over claude-opus-5-5's cache
// minimum (512 tokens).
var anthLongPrompt = func() string {
	var b strings.Builder
	for i := range 120 {
		fmt.Fprintf(&b, "Rule %d: read the file before you answer, and name the file you read. ", i+1)
	}
	return b.String()
}()

// anthRecorder keeps the server's records.
type anthRecorder struct {
	mu   sync.Mutex
	recs []emulator.Record
}

func (r *anthRecorder) add(rec emulator.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
}

func (r *anthRecorder) last(t *testing.T) emulator.Record {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.recs) == 0 {
		t.Fatal("no request recorded")
	}
	return r.recs[len(r.recs)-1]
}

// anthTestServer serves an emulator with cfg until the test ends.
func anthTestServer(t *testing.T, cfg emulator.Config) *httptest.Server {
	t.Helper()
	s, err := emulator.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// anthScaffolding is the emulator's stand-in for Anthropic's hidden
// instructions (its unexported anthScaffolding, copied: a change there
// fails TestAnthropicAdapterEndToEnd until this copy follows).
const anthScaffolding = "[Anthropic's hidden instructions for deferred tools and mid-conversation tool changes] " +
	"Some tools are not listed above: they are loaded on demand. System messages later in the conversation may " +
	"add tools, with their full definitions, or remove them; from that point on only call the tools that are " +
	"currently available, and never call a tool that was removed."

func anthSDKClient(url string) sdk.Client {
	return sdk.NewClient(option.WithBaseURL(url), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
}

// anthCheckUsage compares the SDK's usage with the server's record.
func anthCheckUsage(t *testing.T, u sdk.Usage, rec emulator.Record) {
	t.Helper()
	got := [4]int64{u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens}
	want := [4]int64{int64(rec.Uncached), int64(rec.CacheRead), int64(rec.CacheWrite), int64(rec.Output)}
	if got != want {
		t.Errorf("usage (input, read, write, output) = %v, want %v", got, want)
	}
	if u.CacheCreation.Ephemeral5mInputTokens+u.CacheCreation.Ephemeral1hInputTokens != u.CacheCreationInputTokens {
		t.Errorf("cache_creation %+v does not add up to %d", u.CacheCreation, u.CacheCreationInputTokens)
	}
}

func TestAnthropicSDKRoundTrip(t *testing.T) {
	t.Parallel()
	reply := emulator.Reply{Thinking: "The user wants the weather.", Text: "Let me check the weather for you, it takes a moment.",
		Calls: []emulator.Call{{Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris", "days": 3}`)}}}
	var rec anthRecorder
	srv := anthTestServer(t, emulator.Config{Responder: emulator.NewScripted(reply, reply, emulator.Reply{Text: "unused"}), Observe: rec.add})
	client := anthSDKClient(srv.URL)
	params := sdk.MessageNewParams{
		Model:     "claude-opus-5-5",
		MaxTokens: 1024,
		System:    []sdk.TextBlockParam{{Text: anthLongPrompt, CacheControl: sdk.NewCacheControlEphemeralParam()}},
		Tools: []sdk.ToolUnionParam{{OfTool: &sdk.ToolParam{Name: "get_weather", Description: sdk.String("Weather by city."),
			InputSchema: sdk.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.ContentBlockParamUnion{
			OfText: &sdk.TextBlockParam{Text: "What is the weather in Paris?", CacheControl: sdk.NewCacheControlEphemeralParam()}})},
	}
	wantContent := func(t *testing.T, m *sdk.Message, seq int) {
		t.Helper()
		if len(m.Content) != 3 {
			t.Fatalf("content = %s", m.RawJSON())
		}
		th, tx, tu := m.Content[0], m.Content[1], m.Content[2]
		if th.Type != "thinking" || th.Thinking != reply.Thinking || th.Signature == "" {
			t.Errorf("thinking block = %+v", th)
		}
		if tx.Type != "text" || tx.Text != reply.Text {
			t.Errorf("text block = %q %q", tx.Type, tx.Text)
		}
		if tu.Type != "tool_use" || tu.Name != "get_weather" || tu.ID != "toolu_emu_1_1" {
			t.Errorf("tool_use block = %+v", tu)
		}
		var args map[string]any
		if err := json.Unmarshal(tu.Input, &args); err != nil || args["city"] != "Paris" || args["days"] != float64(3) {
			t.Errorf("tool input = %s (%v)", tu.Input, err)
		}
		if m.StopReason != sdk.StopReasonToolUse || m.Model != "claude-opus-5-5" || m.ID != fmt.Sprintf("msg_emu_%d", seq) {
			t.Errorf("stop %q model %q id %q", m.StopReason, m.Model, m.ID)
		}
	}

	// A streaming call writes the cache.
	stream := client.Messages.NewStreaming(t.Context(), params)
	var msg sdk.Message
	events := map[string]int{}
	for stream.Next() {
		ev := stream.Current()
		events[ev.Type]++
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("accumulate %s: %v", ev.Type, err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	_ = stream.Close()
	wantContent(t, &msg, 1)
	if events["message_start"] != 1 || events["content_block_start"] != 3 || events["content_block_stop"] != 3 ||
		events["message_delta"] != 1 || events["message_stop"] != 1 || events["content_block_delta"] < 6 {
		t.Errorf("events = %v", events)
	}
	first := rec.last(t)
	if first.CacheWrite == 0 || first.CacheRead != 0 || first.CacheWrite != first.Input {
		t.Errorf("first request: %+v, want the whole prompt written", first)
	}
	anthCheckUsage(t, msg.Usage, first)
	if msg.Usage.CacheCreation.Ephemeral5mInputTokens != int64(first.CacheWrite) {
		t.Errorf("cache_creation = %+v", msg.Usage.CacheCreation)
	}

	// The same prefix without streaming reads it back.
	got, err := client.Messages.New(t.Context(), params)
	if err != nil {
		t.Fatalf("Messages.New: %v", err)
	}
	wantContent(t, got, 2)
	second := rec.last(t)
	if second.CacheRead != first.CacheWrite || second.CacheWrite != 0 {
		t.Errorf("second request: %+v, want a read of %d", second, first.CacheWrite)
	}
	anthCheckUsage(t, got.Usage, second)

	// max_tokens 0 pre-warms: nothing generated, the cache is touched.
	params.MaxTokens = 0
	warm, err := client.Messages.New(t.Context(), params)
	if err != nil {
		t.Fatalf("pre-warm: %v", err)
	}
	if len(warm.Content) != 0 || warm.StopReason != sdk.StopReasonMaxTokens || warm.Usage.OutputTokens != 0 ||
		warm.Usage.CacheReadInputTokens != int64(first.CacheWrite) {
		t.Errorf("pre-warm answer = %s", warm.RawJSON())
	}
}

// The SDK turns the emulator's error shape into an *sdk.Error, details
// included.
func TestAnthropicSDKError(t *testing.T) {
	t.Parallel()
	srv := anthTestServer(t, emulator.Config{})
	client := anthSDKClient(srv.URL)
	call := sdk.NewAssistantMessage(sdk.NewToolUseBlock("toolu_1", map[string]any{}, "base"))
	base := sdk.ToolUnionParam{OfTool: &sdk.ToolParam{Name: "base", InputSchema: sdk.ToolInputSchemaParam{Properties: map[string]any{}}}}
	cases := []struct {
		name    string
		msgs    []sdk.MessageParam
		message string
		code    string
	}{
		{"unanswered tool_use", []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hi")), call},
			"`tool_use` ids were found without `tool_result` blocks", ""},
		{"unresolved tool_reference", []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hi")), call,
			sdk.NewUserMessage(sdk.ContentBlockParamUnion{OfToolResult: &sdk.ToolResultBlockParam{ToolUseID: "toolu_1",
				Content: []sdk.ToolResultBlockParamContentUnion{{OfToolReference: &sdk.ToolReferenceBlockParam{ToolName: "ghost"}}}}})},
			"tool_reference 'ghost'", "tool_reference_unresolved"},
	}
	for _, c := range cases {
		_, err := client.Messages.New(t.Context(), sdk.MessageNewParams{Model: "claude-opus-5-5", MaxTokens: 10,
			Tools: []sdk.ToolUnionParam{base}, Messages: c.msgs})
		var apiErr *sdk.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("%s: error = %v (%T), want *sdk.Error", c.name, err, err)
		}
		if apiErr.StatusCode != 400 || string(apiErr.Type()) != "invalid_request_error" || apiErr.RequestID == "" ||
			!strings.Contains(apiErr.Message, c.message) || string(apiErr.ErrorCode()) != c.code {
			t.Errorf("%s: error = %v (code %q)", c.name, apiErr, apiErr.ErrorCode())
		}
	}
}

// toolshelf's own adapter, end to end: a streamed tool call and text,
// the changes class's deferred placeholder from the first request, and
// a cache read on the second identical request.
func TestAnthropicAdapterEndToEnd(t *testing.T) {
	t.Parallel()
	reply := emulator.Reply{Text: "Checking the weather now.", Calls: []emulator.Call{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}}
	var rec anthRecorder
	var exchanges []*emulator.Exchange
	var mu sync.Mutex
	script := emulator.NewScripted(reply, reply)
	srv := anthTestServer(t, emulator.Config{Observe: rec.add, Responder: emulator.ResponderFunc(func(ctx context.Context, ex *emulator.Exchange) (*emulator.Reply, error) {
		mu.Lock()
		exchanges = append(exchanges, ex)
		mu.Unlock()
		return script.Respond(ctx, ex)
	})})
	zero := 0
	m, err := adapter.New(adapter.Config{APIKey: "test-key", BaseURL: srv.URL, Model: "claude-opus-5-5", MaxRetries: &zero})
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text(anthLongPrompt)}, ToolsAdded: []llm.Tool{{Name: "get_weather",
			Description: "Weather by city.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}}},
		llm.UserText("What is the weather in Paris?", 1),
	}}
	run := func(seq int) llm.Usage {
		t.Helper()
		var text strings.Builder
		var events []llm.EventType
		var call *llm.ToolCall
		var done *llm.Message
		for ev, err := range m.Stream(t.Context(), req) {
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			events = append(events, ev.Type)
			switch ev.Type {
			case llm.EventTextDelta:
				text.WriteString(ev.Delta)
			case llm.EventToolCall:
				call = ev.ToolCall
			case llm.EventDone:
				done = ev.Message
			}
		}
		if events[0] != llm.EventStart || events[len(events)-1] != llm.EventDone {
			t.Errorf("events = %v", events)
		}
		if text.String() != reply.Text {
			t.Errorf("text = %q", text.String())
		}
		wantCall := &llm.ToolCall{ID: "toolu_emu_1_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}
		if diff := cmp.Diff(wantCall, call); diff != "" {
			t.Errorf("tool call (-want +got):\n%s", diff)
		}
		if done == nil || done.StopReason != llm.StopToolUse || done.Usage == nil || len(done.Content) != 2 {
			t.Fatalf("done = %+v", done)
		}
		r := rec.last(t)
		want := llm.Usage{Input: r.Uncached, Output: r.Output, CacheRead: r.CacheRead, CacheWrite: r.CacheWrite}
		if *done.Usage != want {
			t.Errorf("usage = %+v, want %+v", *done.Usage, want)
		}
		return *done.Usage
	}
	u1 := run(1)
	if u1.CacheWrite == 0 || u1.CacheRead != 0 {
		t.Errorf("first request usage = %+v, want a cache write", u1)
	}
	u2 := run(2)
	if u2.CacheRead != u1.CacheWrite || u2.CacheWrite != 0 || u2.TotalInput() != u1.TotalInput() {
		t.Errorf("second request usage = %+v, want a read of %d", u2, u1.CacheWrite)
	}
	// The placeholder is deferred: the scaffolding renders, the model
	// sees only the real tool.
	ex := exchanges[0]
	if len(ex.Tools) != 1 || ex.Tools[0].Name != "get_weather" {
		t.Errorf("tools = %+v", ex.Tools)
	}
	if !slices.ContainsFunc(ex.Segments, func(s emulator.Segment) bool { return s.Text == anthScaffolding }) {
		t.Errorf("no scaffolding segment in %d segments", len(ex.Segments))
	}
}
