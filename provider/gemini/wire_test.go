package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

var update = flag.Bool("update", false, "rewrite the golden bodies in testdata")

// bodyCase is a request rendered against a golden body.
type bodyCase struct {
	name string
	caps provider.Capabilities
	max  int
	req  func() llm.Request // a fresh request each call
}

func bodyCases() []bodyCase {
	search := func() llm.Tool {
		return llm.Tool{Name: "search", Description: "Find <things> & stuff.",
			Parameters: json.RawMessage(`{"type":"object", "properties":{"q":{"type":"string"},"n":{"type":"integer","maximum":10}},"required":["q"]}`)}
	}
	full := func() []llm.Message {
		return []llm.Message{
			{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("Be brief. <b>&</b>")}, ToolsAdded: []llm.Tool{search(), {Name: "ping", Description: "Ping."}}},
			llm.UserText("Weather in Paris?", 1),
			{Role: llm.RoleAssistant, Model: "gemini-3.5-flash", Content: []llm.Part{
				{Type: llm.PartThinking, Text: "hmm", Signature: "c2lnMQ=="},
				llm.Text("Let me <look>."),
				{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "call_1", Name: "search", Arguments: json.RawMessage(`{"q":"x","n":3,"a":[1.5,true,null,{"z":1,"b":2}]}`)}},
				{Type: llm.PartThinking, Redacted: true, Signature: "c2lnMg=="},
				{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: generatedIDPrefix + "abc", Name: "ping", Arguments: json.RawMessage(`not json`)}},
			}},
			{Role: llm.RoleToolResult, ToolCallID: "call_1", ToolName: "search", Content: []llm.Part{llm.Text("found\n<it>")}},
			{Role: llm.RoleToolResult, ToolCallID: generatedIDPrefix + "abc", ToolName: "ping", IsError: true,
				Content: []llm.Part{{Type: llm.PartImage, MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0, 1, 2}}}},
			{Role: llm.RoleUser, Content: []llm.Part{llm.Text("look: "), {Type: llm.PartImage, MIMEType: "image/jpeg", Data: []byte("jpegdata")}}},
			{Role: llm.RoleAssistant, Model: "other-model", Content: []llm.Part{{Type: llm.PartThinking, Text: "x", Signature: "c2lnMw=="}, llm.Text("ok \u2028 é")}},
			llm.UserText("again", 2),
		}
	}
	return []bodyCase{
		{name: "full", max: 100, req: func() llm.Request { return llm.Request{Messages: full()} }},
		{name: "text", req: func() llm.Request {
			return llm.Request{Messages: []llm.Message{llm.UserText("just text", 1)}, MaxTokens: 7}
		}},
		{name: "bridge", caps: provider.Capabilities{Tools: llm.ToolsBridge}, req: func() llm.Request {
			return llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("Be brief.")}},
				llm.UserText("hi", 1), {Role: llm.RoleSystem, ToolsAdded: []llm.Tool{weather, search()}}, llm.UserText("more", 2)}}
		}},
	}
}

// TestRequestBodyIsByteStable renders each case with two adapters and
// compares the bytes with each other and with the golden body: the body
// is the same bytes for the same request (the implicit cache keys on the
// prefix), field order fixed, call arguments sorted, tool schemas in their
// own key order.
func TestRequestBodyIsByteStable(t *testing.T) {
	for _, tc := range bodyCases() {
		t.Run(tc.name, func(t *testing.T) {
			var bodies [][]byte
			for range 2 {
				m, err := New(Config{APIKey: "k", Model: "gemini-3.5-flash", Capabilities: tc.caps, MaxTokens: tc.max})
				if err != nil {
					t.Fatal(err)
				}
				for range 2 {
					req := tc.req()
					b, err := m.RequestBody(&req)
					if err != nil {
						t.Fatal(err)
					}
					bodies = append(bodies, b)
				}
			}
			for _, b := range bodies[1:] {
				if !bytes.Equal(b, bodies[0]) {
					t.Fatalf("two renderings differ:\n%s\n%s", bodies[0], b)
				}
			}
			path := filepath.Join("testdata", tc.name+".json")
			if *update {
				if err := os.WriteFile(path, bodies[0], 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(bodies[0], want) {
				t.Errorf("body differs from %s (go test -update rewrites it):\n got %s\nwant %s", path, bodies[0], want)
			}
		})
	}
}

// newTestModel returns an adapter on the server, with a backoff that
// records the retries it is asked for and waits for none.
func newTestModel(t *testing.T, url string, retries *int) (*Model, *[]int) {
	t.Helper()
	m, err := New(Config{APIKey: "key-1", BaseURL: url, Model: "gemini-3.5-flash", MaxRetries: retries})
	if err != nil {
		t.Fatal(err)
	}
	var waits []int
	m.backoff = func(n int) time.Duration { waits = append(waits, n); return 0 }
	return m, &waits
}

// answers is a handler that gives each request the next status and body,
// and keeps what it was sent.
type answers struct {
	mu      sync.Mutex
	replies []reply
	bodies  []string
	keys    []string
}

type reply struct {
	status int
	body   string
}

func (a *answers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.bodies = append(a.bodies, string(b))
	a.keys = append(a.keys, r.Header.Get("x-goog-api-key"))
	rp := a.replies[0]
	a.replies = a.replies[1:]
	a.mu.Unlock()
	if rp.status != http.StatusOK {
		w.WriteHeader(rp.status)
		_, _ = io.WriteString(w, rp.body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, rp.body)
}

const okStream = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi.\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}]}\r\n\r\n"

func ptr(n int) *int { return &n }

// stream runs a request and returns its final message or error.
func stream(ctx context.Context, m *Model) (*llm.Message, error) {
	for ev, err := range m.Stream(ctx, &llm.Request{Messages: []llm.Message{llm.UserText("hi", 1)}}) {
		if err != nil {
			return nil, err
		}
		if ev.Type == llm.EventDone {
			return ev.Message, nil
		}
	}
	return nil, errors.New("no done event")
}

func TestErrorStatuses(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	for _, tc := range []struct {
		status int
		body   string
		want   APIError
		text   []string
	}{
		{400, `{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT"}}`,
			APIError{StatusCode: 400, Status: "INVALID_ARGUMENT", Message: "Invalid JSON payload received."},
			[]string{"gemini: HTTP 400 Bad Request (INVALID_ARGUMENT): Invalid JSON payload received."}},
		{403, `{"error":{"code":403,"message":"API key not valid.","status":"PERMISSION_DENIED"}}`,
			APIError{StatusCode: 403, Status: "PERMISSION_DENIED", Message: "API key not valid."},
			[]string{"HTTP 403 Forbidden", "check the API key"}},
		{404, "no such page\n", APIError{StatusCode: 404, Message: "no such page"}, []string{"HTTP 404 Not Found: no such page", "check the model id"}},
		{429, `{"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED"}}`,
			APIError{StatusCode: 429, Status: "RESOURCE_EXHAUSTED", Message: "Quota exceeded."}, []string{"rate limited"}},
		{502, long, APIError{StatusCode: 502, Message: long[:500] + "…"}, []string{"HTTP 502 Bad Gateway: xxx"}},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			a := &answers{replies: []reply{{tc.status, tc.body}}}
			hs := httptest.NewServer(a)
			defer hs.Close()
			m, waits := newTestModel(t, hs.URL, nil) // no retries: one attempt, whatever the status
			_, err := stream(t.Context(), m)
			var ae *APIError
			if !errors.As(err, &ae) || *ae != tc.want {
				t.Fatalf("error %#v, want %#v", err, tc.want)
			}
			for _, s := range tc.text {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if len(a.bodies) != 1 || len(*waits) != 0 {
				t.Errorf("%d requests, waits %v: want one request", len(a.bodies), *waits)
			}
			if a.keys[0] != "key-1" {
				t.Errorf("x-goog-api-key %q", a.keys[0])
			}
		})
	}
}

func TestStatusErrorReadsBounded(t *testing.T) {
	// An endless body: the error is read from its first maxErrorBody bytes.
	res := &http.Response{StatusCode: 500, Body: io.NopCloser(endless{})}
	e := statusError(res)
	if e.StatusCode != 500 || len(e.Message) > 510 || !strings.HasPrefix(e.Message, "zzzz") {
		t.Errorf("error %+v", e)
	}
}

// endless reads as an unending run of z.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'z'
	}
	return len(p), nil
}

func TestRetriesThenSucceeds(t *testing.T) {
	a := &answers{replies: []reply{
		{429, `{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}`},
		{503, `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`},
		{200, okStream},
	}}
	hs := httptest.NewServer(a)
	defer hs.Close()
	m, waits := newTestModel(t, hs.URL, ptr(2))
	done, err := stream(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	if llm.ContentText(done.Content, "") != "Hi." || done.StopReason != llm.StopEnd {
		t.Errorf("answer %+v", done)
	}
	if !slices.Equal(*waits, []int{1, 2}) {
		t.Errorf("backoffs %v, want [1 2]", *waits)
	}
	if len(a.bodies) != 3 || a.bodies[1] != a.bodies[0] || a.bodies[2] != a.bodies[0] || a.bodies[0] == "" {
		t.Errorf("the retries sent other bodies: %q", a.bodies)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	a := &answers{replies: []reply{
		{503, `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`},
		{500, `{"error":{"code":500,"message":"internal","status":"INTERNAL"}}`},
		{200, okStream},
	}}
	hs := httptest.NewServer(a)
	defer hs.Close()
	m, waits := newTestModel(t, hs.URL, ptr(1))
	_, err := stream(t.Context(), m)
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 500 || ae.Message != "internal" {
		t.Fatalf("error %v, want the last attempt's 500", err)
	}
	if len(a.bodies) != 2 || len(*waits) != 1 {
		t.Errorf("%d requests, waits %v: want 2 and [1]", len(a.bodies), *waits)
	}
}

func TestNoRetryOnClientError(t *testing.T) {
	a := &answers{replies: []reply{{400, `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`}, {200, okStream}}}
	hs := httptest.NewServer(a)
	defer hs.Close()
	m, waits := newTestModel(t, hs.URL, ptr(3))
	if _, err := stream(t.Context(), m); err == nil || len(a.bodies) != 1 || len(*waits) != 0 {
		t.Errorf("error %v after %d requests, waits %v: want a 400 after one", err, len(a.bodies), *waits)
	}
}

func TestRetryWaitIsCancelled(t *testing.T) {
	a := &answers{replies: []reply{{503, `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`}, {200, okStream}}}
	hs := httptest.NewServer(a)
	defer hs.Close()
	m, _ := newTestModel(t, hs.URL, ptr(5))
	ctx, cancel := context.WithCancel(t.Context())
	m.backoff = func(int) time.Duration { cancel(); return time.Hour }
	if _, err := stream(ctx, m); !errors.Is(err, context.Canceled) || len(a.bodies) != 1 {
		t.Errorf("error %v after %d requests, want context.Canceled after one", err, len(a.bodies))
	}
}

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		n        int
		min, max time.Duration
	}{{1, time.Second, 2 * time.Second}, {2, 2 * time.Second, 3 * time.Second}, {4, 8 * time.Second, 9 * time.Second},
		{6, 32 * time.Second, 33 * time.Second}, {7, 60 * time.Second, 60 * time.Second}, {1000, 60 * time.Second, 60 * time.Second}} {
		for range 20 {
			if d := backoff(tc.n); d < tc.min || d > tc.max {
				t.Errorf("backoff(%d) = %v, want within [%v, %v]", tc.n, d, tc.min, tc.max)
			}
		}
	}
}

func TestOversizedEventIsRejected(t *testing.T) {
	big := "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"" + strings.Repeat("a", maxEvent) + "\"}]}}]}\n\n"
	// Split over data lines, an event is bounded as a whole.
	split := "data: {\"x\":\"" + strings.Repeat("b", maxEvent/2) + "\n" + "data: " + strings.Repeat("b", maxEvent/2) + "\"}\n\n"
	for name, s := range map[string]string{"line": big, "lines": split} {
		t.Run(name, func(t *testing.T) {
			a := &answers{replies: []reply{{200, s}}}
			hs := httptest.NewServer(a)
			defer hs.Close()
			m, _ := newTestModel(t, hs.URL, nil)
			if _, err := stream(t.Context(), m); !errors.Is(err, errEventTooLarge) {
				t.Errorf("error %v, want errEventTooLarge", err)
			}
		})
	}
}

func TestEvents(t *testing.T) {
	in := ": keep-alive\n\nevent: chunk\nid: 1\ndata: {\"a\":\ndata:1}\n\n\n\ndata: {}\r\n\r\ndata: [last]"
	evs := newEvents(strings.NewReader(in))
	var got []string
	for {
		data, err := evs.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(data))
	}
	if want := []string{"{\"a\":\n1}", "{}", "[last]"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

func TestErrorInsideStream(t *testing.T) {
	for name, body := range map[string]string{
		"event": "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]},\"index\":0}]}\n\n" +
			"data: {\"error\":{\"code\":500,\"message\":\"An internal error has occurred.\",\"status\":\"INTERNAL\"}}\n\n",
		"json": "{\"error\":{\"code\":500,\"message\":\"An internal error has occurred.\",\"status\":\"INTERNAL\"}}\n",
	} {
		t.Run(name, func(t *testing.T) {
			a := &answers{replies: []reply{{200, body}}}
			hs := httptest.NewServer(a)
			defer hs.Close()
			m, _ := newTestModel(t, hs.URL, nil)
			_, err := stream(t.Context(), m)
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != "INTERNAL" || ae.Message != "An internal error has occurred." {
				t.Errorf("error %v", err)
			}
		})
	}
}

func TestCancelDuringStream(t *testing.T) {
	sent := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}]},\"index\":0}]}\n\n")
		w.(http.Flusher).Flush()
		close(sent)
		<-r.Context().Done() // the rest never comes
	}))
	defer hs.Close()
	m, _ := newTestModel(t, hs.URL, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var deltas int
	var last error
	for ev, err := range m.Stream(ctx, &llm.Request{Messages: []llm.Message{llm.UserText("hi", 1)}}) {
		if err != nil {
			last = err
			break
		}
		if ev.Type == llm.EventTextDelta {
			deltas++
			<-sent
			cancel()
		}
	}
	if deltas != 1 || !errors.Is(last, context.Canceled) {
		t.Errorf("%d deltas, error %v: want 1 and context.Canceled", deltas, last)
	}
}

func TestKeyAndBaseURL(t *testing.T) {
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "")
	if _, err := New(Config{Model: "gemini-3.5-flash"}); err == nil || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
		t.Errorf("no key: error %v", err)
	}
	t.Setenv("GEMINI_API_KEY", "from-env")
	m, err := New(Config{Model: "gemini-3.5-flash"})
	if err != nil {
		t.Fatal(err)
	}
	if m.key != "from-env" || m.url != "https://generativelanguage.googleapis.com/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse" {
		t.Errorf("key %q url %q", m.key, m.url)
	}
	t.Setenv("GOOGLE_API_KEY", "google")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "http://proxy.test/gemini/")
	m, err = New(Config{Model: "tunedModels/mine"})
	if err != nil {
		t.Fatal(err)
	}
	if m.key != "google" || m.url != "http://proxy.test/gemini/v1beta/tunedModels/mine:streamGenerateContent?alt=sse" {
		t.Errorf("key %q url %q", m.key, m.url)
	}
	for _, c := range []Config{{Model: "gemini?x=1"}, {Model: "../admin"}, {Model: "gemini-3.5-flash", BaseURL: "localhost:8080"}} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}
