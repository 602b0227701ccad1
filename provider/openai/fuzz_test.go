package openai

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/provider"
)

// fuzzStatuses are the statuses the stream fuzzers answer with, by the
// input's status byte.
var fuzzStatuses = []int{http.StatusOK, http.StatusOK, http.StatusBadRequest, http.StatusTooManyRequests, http.StatusInternalServerError}

// checkStream streams body, answered with status, through an adapter of
// api in the text or the bridge class, and checks it: the llm.Model
// contract (llmtest.CheckStream), and an *APIError of that status for an
// error status.
func checkStream(t *testing.T, api provider.API, body []byte, status int, bridge bool) {
	t.Helper()
	caps, msgs := respText, []llm.Message{head("p", baseTool), user("hi")}
	if api == provider.OpenAIChat {
		caps = chatText
	}
	if bridge {
		caps = map[provider.API]provider.Capabilities{provider.OpenAIResponses: respBridge, provider.OpenAIChat: chatBridge}[api]
		msgs = append(msgs, systemUpdate("", []llm.Tool{lateTool}))
	}
	zero := 0
	cfg := Config{APIKey: "k", BaseURL: "http://api.invalid/v1", Model: "test-model", Capabilities: caps, MaxRetries: &zero,
		HTTPClient: &http.Client{Transport: answerWith{status, body}}}
	var m llm.Model
	var err error
	if api == provider.OpenAIResponses {
		m, err = NewResponses(cfg)
	} else {
		m, err = NewChat(cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	events, err := collect(m, &llm.Request{Messages: msgs})
	if cerr := llmtest.CheckStream(events, err); cerr != nil {
		t.Fatalf("the stream breaks the contract: %v\nevents %+v\nerror %v", cerr, events, err)
	}
	if status != http.StatusOK {
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.API != api || len(events) > 0 {
			t.Fatalf("status %d: events %+v, error %v (%T), want an *APIError of that status", status, events, err, err)
		}
	}
}

// streamFixtures returns the recorded streams of an API (the files under
// testdata/sse that start with prefix).
func streamFixtures(tb testing.TB, prefix string) [][]byte {
	files, err := filepath.Glob(filepath.Join("testdata", "sse", prefix+"_*.sse"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no %s stream fixtures (%v)", prefix, err)
	}
	var out [][]byte
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

// TestStreamFixturesKeepTheContract runs the whole recorded streams
// through the stream fuzzers' checks, in both classes; the fuzzers start
// from their events one at a time.
func TestStreamFixturesKeepTheContract(t *testing.T) {
	for api, prefix := range map[provider.API]string{provider.OpenAIResponses: "responses", provider.OpenAIChat: "chat"} {
		for _, body := range streamFixtures(t, prefix) {
			checkStream(t, api, body, http.StatusOK, false)
			checkStream(t, api, body, http.StatusOK, true)
		}
	}
}

// fuzzStream is the body of the stream fuzzers: it feeds arbitrary bytes
// to an adapter of api as the server's answer (server-sent events, or an
// error body), with a success or an error status, in the text or the
// bridge class (flags bit 0), and before end, the end of a successful
// stream (flags bit 1); see checkStream. The seeds are the events of the
// recorded streams, one at a time before end: the engine minimizes each
// input that finds new code in time quadratic in its length, and whole
// streams would take it the minute.
func fuzzStream(f *testing.F, api provider.API, prefix, end string, seeds ...string) {
	seen := map[string]bool{}
	for _, body := range streamFixtures(f, prefix) {
		for _, ev := range strings.SplitAfter(string(body), "\n\n") {
			if strings.TrimSpace(ev) == "" || seen[ev] {
				continue
			}
			seen[ev] = true
			f.Add([]byte(ev), uint8(0), uint8(2))
			f.Add([]byte(ev), uint8(0), uint8(3))
		}
	}
	for _, s := range seeds {
		f.Add([]byte(s), uint8(0), uint8(1))
		f.Add([]byte(s), uint8(0), uint8(2))
	}
	f.Add([]byte(""), uint8(0), uint8(0))
	f.Add([]byte("data: [DONE]\n\n"), uint8(0), uint8(0))
	f.Add([]byte(`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`), uint8(3), uint8(0))
	f.Add([]byte(`{"error":{"message":"Invalid 'input[3]'","type":"invalid_request_error","param":"input[3]","code":null}}`), uint8(2), uint8(0))
	f.Add([]byte(`<html>bad gateway</html>`), uint8(4), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, statusByte, flags uint8) {
		status := fuzzStatuses[int(statusByte)%len(fuzzStatuses)]
		if flags&2 != 0 {
			body = append(body[:len(body):len(body)], end...)
		}
		checkStream(t, api, body, status, flags&1 != 0)
	})
}

// FuzzResponsesStream fuzzes the Responses stream decoder; see fuzzStream.
func FuzzResponsesStream(f *testing.F) {
	fuzzStream(f, provider.OpenAIResponses, "responses",
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_fuzz\",\"status\":\"completed\","+
			"\"usage\":{\"input_tokens\":3,\"output_tokens\":2}}}\n\n",
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n",
		"data: {\"type\":\"response.output_item.done\",\"output_index\":3,\"item\":{\"type\":\"function_call\",\"name\":\"call_tool\",\"arguments\":\"{\\\"name\\\":\\\"late_tool\\\",\\\"arguments\\\":\\\"{\\\\\\\"path\\\\\\\":1}\\\"}\"}}\n\n"+
			"data: {\"type\":\"response.output_item.done\",\"output_index\":3,\"item\":{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"x\"}}\n\n"+
			"data: {\"type\":\"response.reasoning_text.delta\",\"output_index\":-1,\"content_index\":2,\"delta\":\"why\"}\n\n"+
			"data: {\"type\":\"response.output_text.done\",\"output_index\":-1,\"content_index\":0,\"text\":\"late\"}\n\n"+
			"data: {\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"content_filter\"},\"usage\":{\"input_tokens\":1,\"input_tokens_details\":{\"cached_tokens\":9}}}}\n\n",
		"data: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\"}}\n\n",
		"data: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"boom\"}\n\n",
	)
}

// FuzzChatStream fuzzes the Chat Completions stream decoder; see
// fuzzStream.
func FuzzChatStream(f *testing.F) {
	fuzzStream(f, provider.OpenAIChat, "chat",
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"call_tool\",\"arguments\":\"{\\\"name\\\":\\\"\\\"}\"}},"+
			"{\"index\":0,\"id\":\"b\",\"function\":{\"arguments\":\"{\"}},{\"index\":-3,\"function\":{\"name\":\"n\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n"+
			"data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"other choice\"}}],\"usage\":{\"prompt_tokens\":1,\"prompt_tokens_details\":{\"cached_tokens\":5}}}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hm\",\"reasoning\":5,\"refusal\":\"no\"},\"finish_reason\":\"content_filter\"}]}\n\n",
		"data: {\"error\":{\"message\":\"boom\",\"code\":\"server_error\"}}\n\n",
	)
}

// TestCallsWithoutIDs: a server that sends function calls without call
// ids still yields a valid message, with an id of its own per call.
func TestCallsWithoutIDs(t *testing.T) {
	for api, body := range map[provider.API]string{
		provider.OpenAIResponses: "data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"name\":\"t\",\"arguments\":\"{}\"}}\n\n" +
			"data: {\"type\":\"response.output_item.done\",\"output_index\":1,\"item\":{\"type\":\"function_call\",\"name\":\"t\",\"arguments\":\"{}\"}}\n\n" +
			"data: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"completed\",\"usage\":{\"input_tokens\":3,\"output_tokens\":2}}}\n\n",
		provider.OpenAIChat: "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"t\",\"arguments\":\"{}\"}}," +
			"{\"index\":1,\"function\":{\"name\":\"t\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
	} {
		zero := 0
		cfg := Config{APIKey: "k", BaseURL: "http://api.invalid/v1", Model: "test-model", MaxRetries: &zero,
			HTTPClient: &http.Client{Transport: answerWith{http.StatusOK, []byte(body)}}}
		var m llm.Model
		var err error
		if api == provider.OpenAIResponses {
			cfg.Capabilities = respText
			m, err = NewResponses(cfg)
		} else {
			cfg.Capabilities = chatText
			m, err = NewChat(cfg)
		}
		if err != nil {
			t.Fatal(err)
		}
		events, err := collect(m, &llm.Request{Messages: []llm.Message{head("p", baseTool), user("hi")}})
		if err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		final := events[len(events)-1].Message
		if err := final.Validate(); err != nil {
			t.Fatalf("%s: the message is not valid: %v", api, err)
		}
		calls := final.ToolCalls()
		if len(calls) != 2 || calls[0].ID == "" || calls[0].ID == calls[1].ID {
			t.Errorf("%s: calls %+v: want two with ids of their own", api, calls)
		}
	}
}
