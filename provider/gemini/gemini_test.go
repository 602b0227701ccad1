package gemini

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// server answers with canned server-sent events and keeps the bodies.
type server struct {
	mu     sync.Mutex
	bodies []string
	paths  []string
	events [][]string
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(b))
	s.paths = append(s.paths, r.URL.String())
	evs := s.events[0]
	s.events = s.events[1:]
	s.mu.Unlock()
	if strings.HasPrefix(evs[0], "error:") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, strings.TrimPrefix(evs[0], "error:"))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range evs {
		_, _ = io.WriteString(w, "data: "+e+"\r\n\r\n")
	}
}

var weather = llm.Tool{Name: "get_weather", Description: "Weather of a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

func run(t *testing.T, m *Model, msgs []llm.Message) (*llm.Message, []llm.Event, error) {
	t.Helper()
	var evs []llm.Event
	for ev, err := range m.Stream(t.Context(), &llm.Request{Messages: msgs}) {
		if err != nil {
			return nil, evs, err
		}
		evs = append(evs, ev)
		if ev.Type == llm.EventDone {
			return ev.Message, evs, nil
		}
	}
	t.Fatal("no done event")
	return nil, nil, nil
}

func TestStreamCallsAndReplaysSignatures(t *testing.T) {
	s := &server{events: [][]string{
		{
			`{"candidates":[{"content":{"parts":[{"text":"thinking...","thought":true}],"role":"model"},"index":0}]}`,
			`{"candidates":[{"content":{"parts":[{"text":"Let me "},{"text":"look."}],"role":"model"},"index":0}]}`,
			`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"c2lnMQ=="}],"role":"model"},"finishReason":"STOP","index":0}],` +
				`"usageMetadata":{"promptTokenCount":1200,"cachedContentTokenCount":1024,"candidatesTokenCount":9,"thoughtsTokenCount":3,"totalTokenCount":1212}}`,
		},
		{`{"candidates":[{"content":{"parts":[{"text":"Sunny."}],"role":"model"},"finishReason":"MAX_TOKENS","index":0}]}`},
		{`error:{"error":{"code":400,"message":"Invalid JSON payload received. Unknown name \"x\": Cannot find field.","status":"INVALID_ARGUMENT"}}`},
	}}
	hs := httptest.NewServer(s)
	defer hs.Close()
	none := 0
	m, err := New(Config{APIKey: "k", BaseURL: hs.URL, Model: "gemini-3.5-flash", MaxRetries: &none})
	if err != nil {
		t.Fatal(err)
	}
	if c := m.Capabilities(); c.Tools != llm.ToolsNone {
		t.Errorf("default class %q, want none", c.Tools)
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("Be brief.")}, ToolsAdded: []llm.Tool{weather}},
		llm.UserText("Weather in Paris?", 1)}
	want, err := m.RequestBody(&llm.Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	done, evs, err := run(t, m, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if s.bodies[0] != string(want) {
		t.Errorf("RequestBody differs from what Stream sent:\n%s\n%s", want, s.bodies[0])
	}
	if !strings.Contains(s.paths[0], "/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse") {
		t.Errorf("path %s", s.paths[0])
	}
	for _, w := range []string{`"systemInstruction":{"parts":[{"text":"Be brief."}]`, `"parametersJsonSchema":{`, `"functionDeclarations":[{`} {
		if !strings.Contains(s.bodies[0], w) {
			t.Errorf("body has no %s: %s", w, s.bodies[0])
		}
	}
	if done.StopReason != llm.StopToolUse || llm.ContentText(done.Content, "") != "Let me look." {
		t.Errorf("answer %+v", done)
	}
	if u := *done.Usage; u != (llm.Usage{Input: 176, CacheRead: 1024, Output: 12}) {
		t.Errorf("usage %+v", u)
	}
	calls := done.ToolCalls()
	if len(calls) != 1 || calls[0].Name != "get_weather" || string(calls[0].Arguments) != `{"city":"Paris"}` ||
		!strings.HasPrefix(calls[0].ID, generatedIDPrefix) {
		t.Fatalf("calls %+v", calls)
	}
	if evs[0].Type != llm.EventStart || evs[1].Type != llm.EventThinkingDelta {
		t.Errorf("events %+v", evs[:2])
	}
	msgs = append(msgs, *done, llm.Message{Role: llm.RoleToolResult, ToolCallID: calls[0].ID, ToolName: "get_weather",
		Content: []llm.Part{llm.Text("sunny")}})
	done, _, err = run(t, m, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if done.StopReason != llm.StopLength {
		t.Errorf("stop %q, want length", done.StopReason)
	}
	// The signature goes back on the call it came with; the generated id
	// is not sent; thoughts are not replayed.
	for _, w := range []string{`{"functionCall":{"args":{"city":"Paris"},"name":"get_weather"},"thoughtSignature":"c2lnMQ=="}`,
		`{"functionResponse":{"name":"get_weather","response":{"output":"sunny"}}}`} {
		if !strings.Contains(s.bodies[1], w) {
			t.Errorf("second body has no %s:\n%s", w, s.bodies[1])
		}
	}
	if strings.Contains(s.bodies[1], "thinking...") || strings.Contains(s.bodies[1], generatedIDPrefix) {
		t.Errorf("second body replays a thought or a generated id:\n%s", s.bodies[1])
	}
	_, _, err = run(t, m, msgs)
	var ae *APIError
	if !errorsAs(err, &ae) || ae.StatusCode != 400 || ae.Status != "INVALID_ARGUMENT" || !strings.Contains(err.Error(), "Unknown name") {
		t.Errorf("error %v", err)
	}
}

func TestBridgeSendsUpdatesAsUserText(t *testing.T) {
	m, err := New(Config{APIKey: "k", Model: "gemini-3.5-flash", Capabilities: provider.Capabilities{Tools: llm.ToolsBridge}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("Be brief.")}},
		llm.UserText("hi", 1),
		{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{weather}}}
	body, err := m.RequestBody(&llm.Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	s := string(body)
	if !strings.Contains(s, `"name":"call_tool"`) || !strings.Contains(s, `system-update`) || strings.Contains(s, `"name":"get_weather","parameters`) {
		t.Errorf("bridge body:\n%s", s)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{{}, {Model: "gemini-3.5-flash", MaxTokens: -1},
		{Model: "gemini-3.5-flash", Capabilities: provider.Capabilities{Tools: llm.ToolsChanges, MidConversationText: true}}} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func errorsAs(err error, target **APIError) bool { return errors.As(err, target) }
