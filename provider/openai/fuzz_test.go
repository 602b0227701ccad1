package openai

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/provider"
)

// fuzzStatuses are the statuses the stream fuzzers answer with, by the
// input's status byte.
var fuzzStatuses = []int{http.StatusOK, http.StatusOK, http.StatusBadRequest, http.StatusTooManyRequests, http.StatusInternalServerError}

// fuzzStream is the body of the stream fuzzers: it feeds arbitrary bytes
// to an adapter of api as the server's answer (server-sent events, or an
// error body), in the text or the bridge class. Streaming must not panic,
// must keep the llm.Model contract (llmtest.CheckStream), and must answer
// an error status with an *APIError of that status.
func fuzzStream(f *testing.F, api provider.API, prefix string, textCaps, bridgeCaps provider.Capabilities, seeds ...string) {
	files, err := filepath.Glob(filepath.Join("testdata", "sse", prefix+"_*.sse"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no %s stream fixtures (%v)", prefix, err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint8(0), false)
		f.Add(data, uint8(0), true)
	}
	for _, s := range seeds {
		f.Add([]byte(s), uint8(0), true)
	}
	f.Add([]byte(""), uint8(0), false)
	f.Add([]byte("data: [DONE]\n\n"), uint8(0), false)
	f.Add([]byte(`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`), uint8(3), false)
	f.Add([]byte(`{"error":{"message":"Invalid 'input[3]'","type":"invalid_request_error","param":"input[3]","code":null}}`), uint8(2), false)
	f.Add([]byte(`<html>bad gateway</html>`), uint8(4), false)

	zero := 0
	stream := func(t *testing.T, body []byte, status int, bridge bool) ([]llm.Event, error) {
		caps, msgs := textCaps, []llm.Message{head("p", baseTool), user("hi")}
		if bridge {
			caps = bridgeCaps
			msgs = append(msgs, systemUpdate("", []llm.Tool{lateTool}))
		}
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
		return collect(m, &llm.Request{Messages: msgs})
	}
	f.Fuzz(func(t *testing.T, body []byte, statusByte uint8, bridge bool) {
		status := fuzzStatuses[int(statusByte)%len(fuzzStatuses)]
		events, err := stream(t, body, status, bridge)
		if cerr := llmtest.CheckStream(events, err); cerr != nil {
			t.Fatalf("the stream breaks the contract: %v\nevents %+v\nerror %v", cerr, events, err)
		}
		if status != http.StatusOK {
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.API != api || len(events) > 0 {
				t.Fatalf("status %d: events %+v, error %v (%T), want an *APIError of that status", status, events, err, err)
			}
		}
	})
}

// FuzzResponsesStream fuzzes the Responses stream decoder; see fuzzStream.
func FuzzResponsesStream(f *testing.F) {
	fuzzStream(f, provider.OpenAIResponses, "responses", respText, respBridge,
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
	fuzzStream(f, provider.OpenAIChat, "chat", chatText, chatBridge,
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"call_tool\",\"arguments\":\"{\\\"name\\\":\\\"\\\"}\"}},"+
			"{\"index\":0,\"id\":\"b\",\"function\":{\"arguments\":\"{\"}},{\"index\":-3,\"function\":{\"name\":\"n\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n"+
			"data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"other choice\"}}],\"usage\":{\"prompt_tokens\":1,\"prompt_tokens_details\":{\"cached_tokens\":5}}}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hm\",\"reasoning\":5,\"refusal\":\"no\"},\"finish_reason\":\"content_filter\"}]}\n\n",
		"data: {\"error\":{\"message\":\"boom\",\"code\":\"server_error\"}}\n\n",
	)
}
