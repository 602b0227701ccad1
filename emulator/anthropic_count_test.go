package emulator

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// anthCount posts body to count_tokens as Claude Code does (?beta=true,
// its betas) and returns the status and the decoded answer.
func anthCount(t *testing.T, srv *httptest.Server, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/messages/count_tokens?beta=true", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("x-api-key", "test-key")
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("anthropic-beta", "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,token-counting-2024-11-01")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("status %d, not JSON: %s", resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// POST /v1/messages/count_tokens counts the prompt a Messages request with
// the same fields would have, without answering it: the responder is not
// asked and the prompt cache is not touched.
func TestAnthropicCountTokens(t *testing.T) {
	var mu sync.Mutex
	var recs []Record
	script := NewScripted(Reply{Text: "one"}, Reply{Text: "two"})
	srv := anthTestServer(t, Config{Responder: script, Observe: func(r Record) {
		mu.Lock()
		defer mu.Unlock()
		recs = append(recs, r)
	}})
	const prompt = `"system":[{"type":"text","text":"You are careful.","cache_control":{"type":"ephemeral"}}],` +
		`"tools":[{"name":"read_file","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}],` +
		`"thinking":{"type":"enabled","budget_tokens":2048},` +
		`"messages":[{"role":"user","content":"` + "Summarise the repository's layout in a few lines. " + `"}]`

	status, got := anthCount(t, srv, `{"model":"claude-opus-5-5",`+prompt+`}`)
	if status != http.StatusOK {
		t.Fatalf("count_tokens: %d %v", status, got)
	}
	if script.Left() != 2 {
		t.Errorf("count_tokens asked the responder: %d replies left", script.Left())
	}
	resp := anthSend(t, srv, anthRequest{body: `{"model":"claude-opus-5-5","max_tokens":4096,` + prompt + `}`})
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("messages: %d %s", resp.StatusCode, raw)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(recs) != 2 {
		t.Fatalf("records %+v", recs)
	}
	count, msg := recs[0], recs[1]
	if n, _ := got["input_tokens"].(float64); int(n) != msg.Input || msg.Input == 0 || len(got) != 1 {
		t.Errorf("count_tokens answered %v; the same prompt as a request counts %d input tokens", got, msg.Input)
	}
	if !count.CountTokens || count.Input != msg.Input || count.ToolTokens != msg.ToolTokens || count.Model != "claude-opus-5-5" || count.Status != 200 {
		t.Errorf("count_tokens' record %+v, want the request's counts %+v", count, msg)
	}
	if msg.CountTokens || msg.CacheRead != 0 || msg.Ideal != 0 {
		t.Errorf("the request after count_tokens: %+v, want no cache entry from the count", msg)
	}
}

// count_tokens takes the prompt's fields only, validated as for Messages.
func TestAnthropicCountTokensInvalid(t *testing.T) {
	srv := anthTestServer(t, Config{})
	for _, c := range []struct {
		name, body, message string
	}{
		{"max_tokens", `{"model":"claude-opus-5-5","max_tokens":5,"messages":[` + anthHi + `]}`, "max_tokens: Extra inputs are not permitted"},
		{"stream", `{"model":"claude-opus-5-5","stream":true,"messages":[` + anthHi + `]}`, "stream: Extra inputs are not permitted"},
		{"temperature", `{"model":"claude-opus-5-5","temperature":0.5,"messages":[` + anthHi + `]}`, "temperature: Extra inputs are not permitted"},
		{"no messages", `{"model":"claude-opus-5-5"}`, "messages: Field required"},
		{"no model", `{"messages":[` + anthHi + `]}`, "model: Field required"},
		{"a small thinking budget", `{"model":"claude-opus-5-5","thinking":{"type":"enabled","budget_tokens":10},"messages":[` + anthHi + `]}`,
			"thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"},
		{"a bad tool", `{"model":"claude-opus-5-5","tools":[{"name":"a b","input_schema":{"type":"object"}}],"messages":[` + anthHi + `]}`,
			"tools.0.custom.name: String should match pattern"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, got := anthCount(t, srv, c.body)
			e, _ := got["error"].(map[string]any)
			if msg, _ := e["message"].(string); status != http.StatusBadRequest || e["type"] != "invalid_request_error" || !strings.Contains(msg, c.message) {
				t.Errorf("got %d %v, want 400 with %q", status, got, c.message)
			}
		})
	}
}
