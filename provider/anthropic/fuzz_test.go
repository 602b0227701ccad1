package anthropic

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
)

// answerWith is an http.RoundTripper that answers every request with one
// status and body, without a network.
type answerWith struct {
	status int
	body   []byte
}

func (a answerWith) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	h := http.Header{"Content-Type": {"text/event-stream"}, "Request-Id": {"req_fuzz"}}
	if a.status != http.StatusOK {
		h.Set("Content-Type", "application/json")
	}
	return &http.Response{StatusCode: a.status, Status: http.StatusText(a.status), Header: h, Request: r,
		Body: io.NopCloser(bytes.NewReader(a.body)), ContentLength: int64(len(a.body))}, nil
}

// fuzzStatuses are the statuses FuzzStream answers with, by the input's
// status byte.
var fuzzStatuses = []int{http.StatusOK, http.StatusOK, http.StatusBadRequest, http.StatusTooManyRequests, 529}

// FuzzStream feeds arbitrary bytes to the adapter as the API's answer, a
// stream of server-sent events (or an error body), through the SDK's
// decoder and the adapter's assembler, in the changes and the bridge
// class. Streaming must not panic, must keep the llm.Model contract
// (llmtest.CheckStream) and must answer an error status with an *APIError
// of that status.
func FuzzStream(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "sse", "*"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no stream fixtures (%v)", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		status := uint8(0)
		if filepath.Ext(name) == ".json" {
			status = 2
		}
		f.Add(data, status, false)
		f.Add(data, status, true)
	}
	for _, s := range []string{
		"", "\n\n", "data: {}\n\n", "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
		"data: {\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"\",\"name\":\"call_tool\"}}\n\n" +
			"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"name\\\":\\\"call_tool\\\",\\\"arguments\\\":\\\"{}\\\"}\"}}\n\n" +
			"data: {\"type\":\"content_block_stop\",\"index\":0}\n\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"refusal\"},\"usage\":{\"output_tokens\":-5}}\n\ndata: {\"type\":\"message_stop\"}\n\n",
		"data: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1e30}}}\n\n",
		": comment\nretry: 10\nid: 1\ndata: {\"type\":\"ping\"}\r\n\r\n",
	} {
		f.Add([]byte(s), uint8(0), true)
	}
	f.Add([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`), uint8(3), false)
	f.Add([]byte(`not json`), uint8(4), false)

	zero := 0
	stream := func(t *testing.T, body []byte, status int, bridge bool) ([]llm.Event, error) {
		caps, msgs := changesCaps, nativeUpdate[:2]
		if bridge {
			caps, msgs = bridgeCaps, bridgeLoaded
		}
		m, err := New(Config{Model: testModel, APIKey: "k", BaseURL: "http://api.invalid", Capabilities: caps, MaxRetries: &zero,
			HTTPClient: &http.Client{Transport: answerWith{status, body}}})
		if err != nil {
			t.Fatal(err)
		}
		return collect(m.Stream(t.Context(), &llm.Request{Messages: msgs}))
	}
	f.Fuzz(func(t *testing.T, body []byte, statusByte uint8, bridge bool) {
		status := fuzzStatuses[int(statusByte)%len(fuzzStatuses)]
		events, err := stream(t, body, status, bridge)
		if cerr := llmtest.CheckStream(events, err); cerr != nil {
			t.Fatalf("the stream breaks the contract: %v\nevents %+v\nerror %v", cerr, events, err)
		}
		if status != http.StatusOK {
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != status || len(events) > 0 {
				t.Fatalf("status %d: events %+v, error %v (%T), want an *APIError of that status", status, events, err, err)
			}
		}
	})
}
