package integration

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/provider/gemini"
)

// geminiAdapter returns toolshelf's Gemini adapter on a server; zero caps
// mean the default table's.
func geminiAdapter(t *testing.T, baseURL, model string, caps provider.Capabilities) *gemini.Model {
	t.Helper()
	m, err := gemini.New(gemini.Config{APIKey: "test", BaseURL: baseURL, Model: model, Capabilities: caps, MaxRetries: noRetries()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGeminiAdapterEndToEnd runs a conversation with a tool call through
// the Gemini adapter and the emulator's Gemini API: every request is
// valid, the call and the answer come back as the transcript records
// them, and the second request reads the first one's prefix from the
// implicit cache.
func TestGeminiAdapterEndToEnd(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var records []emulator.Record
	em, err := emulator.New(emulator.Config{
		Responder: emulator.NewScripted(
			emulator.Reply{Text: "Let me look.", Calls: []emulator.Call{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
			emulator.Reply{Text: "Sunny in Paris."},
		),
		KeepBodies: true,
		Observe:    func(r emulator.Record) { mu.Lock(); records = append(records, r); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(em)
	defer hs.Close()
	m := geminiAdapter(t, hs.URL, "gemini-3.5-flash", provider.Capabilities{})
	long := strings.Repeat("You answer questions about the weather, briefly and politely. ", 120)
	msgs := []llm.Message{oaiHead(long, oaiWeatherTool), llm.UserText("Weather in Paris?", 1)}
	types, _, done := oaiRun(t, m, msgs)
	if done.StopReason != llm.StopToolUse {
		t.Fatalf("stop reason %q, want toolUse (events %v)", done.StopReason, types)
	}
	calls := done.ToolCalls()
	if len(calls) != 1 || calls[0].Name != "get_weather" || string(calls[0].Arguments) != `{"city":"Paris"}` || calls[0].ID == "" {
		t.Fatalf("calls %+v", calls)
	}
	if got := llm.ContentText(done.Content, ""); got != "Let me look." {
		t.Errorf("text %q", got)
	}
	msgs = append(msgs, *done, llm.Message{Role: llm.RoleToolResult, ToolCallID: calls[0].ID, ToolName: "get_weather",
		Content: []llm.Part{llm.Text("sunny, 24°C")}})
	_, _, done = oaiRun(t, m, msgs)
	if got := llm.ContentText(done.Content, ""); got != "Sunny in Paris." || done.StopReason != llm.StopEnd {
		t.Errorf("second answer %q (%s)", got, done.StopReason)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(records) != 2 {
		t.Fatalf("%d requests", len(records))
	}
	for _, r := range records {
		if r.Status != http.StatusOK || r.API != emulator.Gemini || !r.Stream || r.Model != "gemini-3.5-flash" {
			t.Errorf("request %d: %d %s %s stream=%v: %s\n%s", r.Seq, r.Status, r.API, r.Model, r.Stream, r.Error, r.Body)
		}
	}
	u := done.Usage
	if u == nil || u.CacheRead == 0 || u.CacheRead != records[1].CacheRead || u.TotalInput() != records[1].Input {
		t.Errorf("usage %+v, record %+v", u, records[1])
	}
	body := string(records[1].Body)
	for _, want := range []string{`"systemInstruction"`, `"parametersJsonSchema"`, `"functionCall"`, `"functionResponse"`, `"role":"model"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the second body has no %s:\n%s", want, body)
		}
	}
}
