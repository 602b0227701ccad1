package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/toolshelf/toolshelf/emulator"
)

// oaiServer serves an emulator with cfg until the test ends.
func oaiServer(t *testing.T, cfg emulator.Config) *httptest.Server {
	t.Helper()
	s, err := emulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// oaiClient is an SDK client for the emulator, retries off.
func oaiClient(ts *httptest.Server) openai.Client {
	return openai.NewClient(option.WithBaseURL(ts.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0))
}

// oaiLongText is a deterministic text of several thousand tokens.
func oaiLongText(words int) string {
	var b strings.Builder
	b.WriteString("You are a careful assistant. Reference material follows.\n")
	for i := range words {
		fmt.Fprintf(&b, "item%d is filed under shelf %d; ", i, i%37)
	}
	return b.String()
}

// oaiFixedClock keeps cache entries alive for the whole test.
func oaiFixedClock() time.Time { return time.Unix(1_800_000_000, 0) }

var oaiWeatherSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"city": map[string]any{"type": "string"}},
	"required":   []any{"city"},
}

// oaiReplies are the replies the SDK tests script, in order.
var (
	oaiTextReply     = emulator.Reply{Text: "Hello from the emulator, in several small pieces of text."}
	oaiThinkingReply = emulator.Reply{Thinking: "The user greets me; greet back.", Text: "Hi there, nice to meet you."}
	oaiCallsReply    = emulator.Reply{Text: "Checking both.", Calls: []emulator.Call{
		{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Tokyo, with a long name to split"}`)},
	}}
	oaiOneCallReply = emulator.Reply{Calls: []emulator.Call{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}}
)

// oaiCall is a tool call as a test checks it.
type oaiCall struct{ ID, Name, Arguments string }

// oaiResult is what a test reads back from one SDK call.
type oaiResult struct {
	text, thinking    string
	calls             []oaiCall
	input, cached     int64
	cacheWrite, total int64
}

func TestResponsesSDK(t *testing.T) {
	t.Parallel()
	ts := oaiServer(t, emulator.Config{Now: oaiFixedClock,
		Responder: emulator.NewScripted(oaiTextReply, oaiOneCallReply, oaiThinkingReply, oaiCallsReply)})
	client := oaiClient(ts)
	params := responses.ResponseNewParams{
		Model:          "gpt-5.6-sol",
		Instructions:   openai.String(oaiLongText(400)),
		Input:          responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the weather?")},
		Tools:          []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather", oaiWeatherSchema, false)},
		PromptCacheKey: openai.String("sdk"),
	}
	cases := []struct {
		name   string
		stream bool
		want   emulator.Reply
		seq    int
	}{
		{"text", false, oaiTextReply, 1},
		{"tool call", false, oaiOneCallReply, 2},
		{"streamed thinking and text", true, oaiThinkingReply, 3},
		{"streamed text and tool calls", true, oaiCallsReply, 4},
	}
	var firstInput int64
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got oaiResult
			if c.stream {
				got = oaiResponsesStream(t, client, params)
			} else {
				resp, err := client.Responses.New(t.Context(), params)
				if err != nil {
					t.Fatal(err)
				}
				if resp.ID != fmt.Sprintf("resp_emu_%d", c.seq) || resp.Status != "completed" || resp.Model != "gpt-5.6-sol" {
					t.Errorf("response id %q, status %q, model %q", resp.ID, resp.Status, resp.Model)
				}
				got = oaiResponsesResult(resp)
			}
			oaiCheckReply(t, got, c.want)
			// The same prompt every time: the first request writes its whole
			// prefix (the implicit breakpoint at the user message), the
			// others read exactly that.
			if i == 0 {
				firstInput = got.input
				if got.cached != 0 || got.cacheWrite != got.input || got.input < 2000 {
					t.Errorf("first request: input %d, cached %d, written %d", got.input, got.cached, got.cacheWrite)
				}
			} else if got.input != firstInput || got.cached != firstInput || got.cacheWrite != 0 {
				t.Errorf("input %d, cached %d, written %d; want %d, %d, 0", got.input, got.cached, got.cacheWrite, firstInput, firstInput)
			}
		})
	}
}

// oaiCheckReply compares what came back with the scripted reply.
func oaiCheckReply(t *testing.T, got oaiResult, want emulator.Reply) {
	t.Helper()
	if got.text != want.Text || got.thinking != want.Thinking {
		t.Errorf("text %q, thinking %q; want %q, %q", got.text, got.thinking, want.Text, want.Thinking)
	}
	var calls []oaiCall
	for i, c := range want.Calls {
		// The conversation holds no assistant turn yet: ids from 1.
		calls = append(calls, oaiCall{ID: fmt.Sprintf("call_emu_1_%d", i), Name: c.Name, Arguments: string(c.Arguments)})
	}
	if fmt.Sprint(got.calls) != fmt.Sprint(calls) {
		t.Errorf("calls %v, want %v", got.calls, calls)
	}
	if got.input > 0 && got.total <= got.input {
		t.Errorf("total tokens %d, input %d", got.total, got.input)
	}
}

func oaiResponsesResult(resp *responses.Response) oaiResult {
	r := oaiResult{text: resp.OutputText(), input: resp.Usage.InputTokens, cached: resp.Usage.InputTokensDetails.CachedTokens,
		cacheWrite: resp.Usage.InputTokensDetails.CacheWriteTokens, total: resp.Usage.TotalTokens}
	for _, item := range resp.Output {
		switch item.Type {
		case "function_call":
			fc := item.AsFunctionCall()
			r.calls = append(r.calls, oaiCall{ID: fc.CallID, Name: fc.Name, Arguments: fc.Arguments})
		case "reasoning":
			for _, s := range item.AsReasoning().Summary {
				r.thinking += s.Text
			}
		}
	}
	return r
}

// oaiResponsesStream streams a response, checks the event sequence and
// rebuilds the reply from the deltas.
func oaiResponsesStream(t *testing.T, client openai.Client, params responses.ResponseNewParams) oaiResult {
	t.Helper()
	stream := client.Responses.NewStreaming(t.Context(), params)
	defer stream.Close()
	var (
		r        oaiResult
		types    []string
		args     = map[string]*strings.Builder{}
		order    []string
		done     = map[string]string{}
		complete *responses.Response
	)
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber != int64(len(types)) {
			t.Errorf("event %d (%s) has sequence_number %d", len(types), ev.Type, ev.SequenceNumber)
		}
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			r.text += ev.Delta
		case "response.reasoning_summary_text.delta":
			r.thinking += ev.Delta
		case "response.output_item.added":
			if ev.Item.Type == "function_call" {
				args[ev.Item.ID] = &strings.Builder{}
				order = append(order, ev.Item.ID)
			}
		case "response.function_call_arguments.delta":
			args[ev.ItemID].WriteString(ev.Delta)
		case "response.function_call_arguments.done":
			done[ev.ItemID] = ev.Arguments
		case "response.output_item.done":
			if ev.Item.Type == "function_call" {
				fc := ev.Item.AsFunctionCall()
				r.calls = append(r.calls, oaiCall{ID: fc.CallID, Name: fc.Name, Arguments: args[fc.ID].String()})
			}
		case "response.completed":
			resp := ev.Response
			complete = &resp
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(types) < 2 || types[0] != "response.created" || types[1] != "response.in_progress" || types[len(types)-1] != "response.completed" {
		t.Errorf("event types %v", types)
	}
	for _, id := range order {
		if done[id] != args[id].String() {
			t.Errorf("item %s: arguments.done %q, deltas %q", id, done[id], args[id].String())
		}
	}
	if complete == nil {
		t.Fatal("no response.completed")
	}
	final := oaiResponsesResult(complete)
	if final.text != r.text || final.thinking != r.thinking || fmt.Sprint(final.calls) != fmt.Sprint(r.calls) {
		t.Errorf("completed response %+v differs from the deltas %+v", final, r)
	}
	return final
}

func TestChatSDK(t *testing.T) {
	t.Parallel()
	ts := oaiServer(t, emulator.Config{Now: oaiFixedClock,
		Responder: emulator.NewScripted(oaiTextReply, oaiOneCallReply, oaiThinkingReply, oaiCallsReply)})
	client := oaiClient(ts)
	params := openai.ChatCompletionNewParams{
		Model: "gpt-5.2",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(oaiLongText(400)),
			openai.UserMessage("What is the weather?"),
		},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Parameters: oaiWeatherSchema})},
	}
	cases := []struct {
		name         string
		stream       bool
		includeUsage bool
		want         emulator.Reply
		seq          int
	}{
		{"text", false, false, oaiTextReply, 1},
		{"tool call", false, false, oaiOneCallReply, 2},
		{"streamed text with usage", true, true, oaiThinkingReply, 3},
		{"streamed tool calls without usage", true, false, oaiCallsReply, 4},
	}
	var firstInput int64
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got oaiResult
			if c.stream {
				p := params
				if c.includeUsage {
					p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
				}
				got = oaiChatStream(t, client, p, c.includeUsage)
			} else {
				resp, err := client.Chat.Completions.New(t.Context(), params)
				if err != nil {
					t.Fatal(err)
				}
				if resp.ID != fmt.Sprintf("chatcmpl-emu-%d", c.seq) || resp.Object != "chat.completion" {
					t.Errorf("id %q, object %q", resp.ID, resp.Object)
				}
				got = oaiChatResult(t, resp, c.want)
			}
			// Chat replies carry thinking as reasoning_content.
			oaiCheckReply(t, got, c.want)
			if c.stream && !c.includeUsage {
				return
			}
			// gpt-5.2 caches automatically: the repeated prompt reads its
			// longest stored prefix, rounded down to 128-token steps.
			if i == 0 {
				firstInput = got.input
				if got.cached != 0 || got.cacheWrite != 0 || got.input < 2000 {
					t.Errorf("first request: input %d, cached %d, written %d", got.input, got.cached, got.cacheWrite)
				}
				return
			}
			want := 1024 + (firstInput-1024)/128*128
			if got.input != firstInput || got.cached != want || got.cacheWrite != 0 {
				t.Errorf("input %d, cached %d, written %d; want %d, %d, 0", got.input, got.cached, got.cacheWrite, firstInput, want)
			}
		})
	}
}

func oaiChatResult(t *testing.T, resp *openai.ChatCompletion, want emulator.Reply) oaiResult {
	t.Helper()
	if len(resp.Choices) != 1 {
		t.Fatalf("%d choices", len(resp.Choices))
	}
	ch := resp.Choices[0]
	finish := "stop"
	if len(want.Calls) > 0 {
		finish = "tool_calls"
	}
	if ch.FinishReason != finish {
		t.Errorf("finish_reason %q, want %q", ch.FinishReason, finish)
	}
	r := oaiResult{text: ch.Message.Content, input: resp.Usage.PromptTokens, cached: resp.Usage.PromptTokensDetails.CachedTokens,
		cacheWrite: resp.Usage.PromptTokensDetails.CacheWriteTokens, total: resp.Usage.TotalTokens}
	if raw := ch.Message.JSON.ExtraFields["reasoning_content"].Raw(); raw != "" {
		if err := json.Unmarshal([]byte(raw), &r.thinking); err != nil {
			t.Error(err)
		}
	}
	for _, tc := range ch.Message.ToolCalls {
		r.calls = append(r.calls, oaiCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return r
}

func oaiChatStream(t *testing.T, client openai.Client, params openai.ChatCompletionNewParams, includeUsage bool) oaiResult {
	t.Helper()
	stream := client.Chat.Completions.NewStreaming(t.Context(), params)
	defer stream.Close()
	var (
		acc      openai.ChatCompletionAccumulator
		thinking string
		usage    int
		finished []oaiCall
	)
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			t.Fatalf("the accumulator refused chunk %s", chunk.RawJSON())
		}
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, oaiCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		}
		if chunk.JSON.Usage.Valid() && chunk.Usage.TotalTokens > 0 {
			usage++
			if len(chunk.Choices) != 0 {
				t.Errorf("usage chunk with %d choices", len(chunk.Choices))
			}
		}
		for _, c := range chunk.Choices {
			if raw := c.Delta.JSON.ExtraFields["reasoning_content"].Raw(); raw != "" {
				var s string
				if err := json.Unmarshal([]byte(raw), &s); err != nil {
					t.Error(err)
				}
				thinking += s
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if want := map[bool]int{true: 1, false: 0}[includeUsage]; usage != want {
		t.Errorf("%d usage chunks, want %d", usage, want)
	}
	resp := acc.ChatCompletion
	r := oaiChatResult(t, &resp, emulator.Reply{Calls: make([]emulator.Call, len(resp.Choices[0].Message.ToolCalls))})
	r.thinking = thinking
	if len(r.calls) > 0 && fmt.Sprint(finished) != fmt.Sprint(r.calls) {
		t.Errorf("finished tool calls %v, accumulated %v", finished, r.calls)
	}
	return r
}

func TestOpenAISDKErrors(t *testing.T) {
	t.Parallel()
	ts := oaiServer(t, emulator.Config{ContextWindow: 50})
	client := oaiClient(ts)
	ctx := context.Background()
	_, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-5.6-sol",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
		Tools: []responses.ToolUnionParam{responses.ToolParamOfFunction("bad.name", nil, false)},
	})
	oaiCheckAPIError(t, err, 400, "invalid_value", "tools[0].name", "string does not match pattern")

	_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    "gpt-5.2",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(oaiLongText(100))},
	})
	oaiCheckAPIError(t, err, 400, "context_length_exceeded", "input", "exceeds the context window")

	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:    "gpt-5.2",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.ToolMessage("orphan", "call_1")},
	})
	for stream.Next() {
		t.Error("an event from a failed request")
	}
	oaiCheckAPIError(t, stream.Err(), 400, "", "messages.[0].role", "must be a response to a preceding message with 'tool_calls'")
}

func oaiCheckAPIError(t *testing.T, err error, status int, code, param, message string) {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v (%T), want *openai.Error", err, err)
	}
	if apiErr.StatusCode != status || apiErr.Code != code || apiErr.Param != param || !strings.Contains(apiErr.Message, message) {
		t.Errorf("status %d, code %q, param %q, message %q; want %d, %q, %q, %q",
			apiErr.StatusCode, apiErr.Code, apiErr.Param, apiErr.Message, status, code, param, message)
	}
}
