package anthropic

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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

// streamSkeleton is what FuzzStream puts around an input when asked: the
// start and the end of a successful answer, so that a short input (an
// event or two) can make a whole stream.
var streamSkeleton = [2]string{
	"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_fuzz\",\"type\":\"message\",\"role\":\"assistant\"," +
		"\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
}

// checkStream streams body, answered with status, and checks it: the
// llm.Model contract (llmtest.CheckStream), and an *APIError of that
// status for an error status.
func checkStream(t *testing.T, body []byte, status int, bridge bool) {
	t.Helper()
	caps, msgs := changesCaps, nativeUpdate[:2]
	if bridge {
		caps, msgs = bridgeCaps, bridgeLoaded
	}
	zero := 0
	m, err := New(Config{Model: testModel, APIKey: "k", BaseURL: "http://api.invalid", Capabilities: caps, MaxRetries: &zero,
		HTTPClient: &http.Client{Transport: answerWith{status, body}}})
	if err != nil {
		t.Fatal(err)
	}
	events, err := collect(m.Stream(t.Context(), &llm.Request{Messages: msgs}))
	if cerr := llmtest.CheckStream(events, err); cerr != nil {
		t.Fatalf("the stream breaks the contract: %v\nevents %+v\nerror %v", cerr, events, err)
	}
	if status != http.StatusOK {
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != status || len(events) > 0 {
			t.Fatalf("status %d: events %+v, error %v (%T), want an *APIError of that status", status, events, err, err)
		}
	}
}

// streamFixtures returns the recorded answers under testdata/sse and
// whether each is an error body rather than a stream.
func streamFixtures(tb testing.TB) (bodies [][]byte, errorBody []bool) {
	files, err := filepath.Glob(filepath.Join("testdata", "sse", "*"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no stream fixtures (%v)", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		bodies, errorBody = append(bodies, data), append(errorBody, filepath.Ext(name) == ".json")
	}
	return bodies, errorBody
}

// TestStreamFixturesKeepTheContract runs the whole recorded answers
// through FuzzStream's checks, in both classes; the fuzzer starts from
// their events one at a time.
func TestStreamFixturesKeepTheContract(t *testing.T) {
	bodies, errorBody := streamFixtures(t)
	for i, body := range bodies {
		status := http.StatusOK
		if errorBody[i] {
			status = http.StatusBadRequest
		}
		checkStream(t, body, status, false)
		checkStream(t, body, status, true)
	}
}

// FuzzStream feeds arbitrary bytes to the adapter as the API's answer, a
// stream of server-sent events (or an error body), through the SDK's
// decoder and the adapter's assembler, with a success or an error status,
// in the changes or the bridge class (flags bit 0), and inside
// streamSkeleton (flags bit 1); see checkStream. The seeds are the events
// of the recorded answers, one at a time inside the skeleton: the engine
// minimizes each input that finds new code in time quadratic in its
// length, and whole answers would take it the minute.
func FuzzStream(f *testing.F) {
	bodies, errorBody := streamFixtures(f)
	seen := map[string]bool{}
	for i, body := range bodies {
		if errorBody[i] {
			f.Add(body, uint8(2), uint8(0))
			continue
		}
		for _, ev := range strings.SplitAfter(string(body), "\n\n") {
			if strings.TrimSpace(ev) == "" || seen[ev] {
				continue
			}
			seen[ev] = true
			f.Add([]byte(ev), uint8(0), uint8(2))
			f.Add([]byte(ev), uint8(0), uint8(3))
		}
	}
	for _, s := range []string{
		"", "\n\n", "data: {}\n\n", "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":-1,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"call_tool\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"name\\\":\\\"x\\\"}\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"refusal\"},\"usage\":{\"output_tokens\":-5}}\n\n",
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1e30}}}\n\n",
		": comment\nretry: 10\nid: 1\nevent: ping\ndata: {\"type\":\"ping\"}\r\n\r\n",
	} {
		f.Add([]byte(s), uint8(0), uint8(2))
		f.Add([]byte(s), uint8(0), uint8(1))
	}
	f.Add([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`), uint8(3), uint8(0))
	f.Add([]byte(`not json`), uint8(4), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, statusByte, flags uint8) {
		status := fuzzStatuses[int(statusByte)%len(fuzzStatuses)]
		if flags&2 != 0 {
			body = []byte(streamSkeleton[0] + string(body) + streamSkeleton[1])
		}
		checkStream(t, body, status, flags&1 != 0)
	})
}

// TestToolUseWithoutAnID: a server that sends a tool_use block without an
// id still yields a valid message (the transcript and the next request
// need an id per call), with an id of its own per call.
func TestToolUseWithoutAnID(t *testing.T) {
	block := func(i int) string {
		return fmt.Sprintf("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"tool_use\",\"id\":\"\",\"name\":\"t\",\"input\":{}}}\n\n"+
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%d}\n\n", i, i)
	}
	body := streamSkeleton[0] + block(0) + block(1) + streamSkeleton[1]
	zero := 0
	m, err := New(Config{Model: testModel, APIKey: "k", BaseURL: "http://api.invalid", Capabilities: changesCaps, MaxRetries: &zero,
		HTTPClient: &http.Client{Transport: answerWith{http.StatusOK, []byte(body)}}})
	if err != nil {
		t.Fatal(err)
	}
	events, err := collect(m.Stream(t.Context(), &llm.Request{Messages: nativeUpdate[:2]}))
	if err != nil {
		t.Fatal(err)
	}
	final := events[len(events)-1].Message
	if err := final.Validate(); err != nil {
		t.Fatalf("the message is not valid: %v", err)
	}
	calls := final.ToolCalls()
	if len(calls) != 2 || calls[0].ID == "" || calls[0].ID == calls[1].ID {
		t.Errorf("calls %+v: want two with ids of their own", calls)
	}
}
