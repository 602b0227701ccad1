package emulator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/tokens"
)

// fuzzRequest is the body of the request fuzzers: it sends arbitrary bytes
// as the body of a POST to path, through the whole server (decoding,
// validation, token counting, cache, the Echo responder, the reply), and
// checks what comes back:
//
//   - the status is 200 or a 4xx: no body is the server's fault;
//   - an error is the API's error object (shape checks errorShape) with a
//     message, and the record the server observed has the same status;
//   - a 200 is one JSON object, or server-sent events whose data are JSON
//     objects (or Chat's [DONE]) when the request asked for a stream;
//   - decoding the body again gives the same verdict: the same error (no
//     map order in messages) or none for a 200.
func fuzzRequest(f *testing.F, api API, path string, errorShape func(body []byte) bool, seedFiles ...string) {
	for _, pattern := range seedFiles {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			f.Fatalf("no seed bodies %s (%v)", pattern, err)
		}
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			// Compact: shorter inputs mutate and minimize faster.
			var b bytes.Buffer
			if err := json.Compact(&b, data); err != nil {
				f.Fatalf("%s: %v", name, err)
			}
			f.Add(b.Bytes(), true)
			f.Add(b.Bytes(), false)
		}
	}
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `{"model":""}`, `{"model":"m","stream":"yes"}`, `{"model":"m"} {}`, `{"model":"m",}`,
		`{"model":"m","max_tokens":-1,"messages":[],"input":[],"tools":[{}]}`,
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"input":"hi","stream":true}`,
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"\ud800"}]}],"unknown_a":1,"unknown_b":2}`,
		`{"model":"m","max_tokens":1,"tools":[{"name":"t","description":"d","input_schema":{"type":"object","properties":{"p":{"type":"string","pattern":"(((("}}},` +
			`"parameters":{"$ref":"#/nope"},"type":"function"}],"messages":[{"role":"user","content":"x"}],"input":"x"}`,
	} {
		f.Add([]byte(s), true)
	}
	counter, err := tokens.Default()
	if err != nil {
		f.Fatal(err)
	}
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	f.Fuzz(func(t *testing.T, body []byte, beta bool) {
		var records []Record
		s, err := New(Config{Counter: counter, Now: clock, ContextWindow: -1, Observe: func(r Record) { records = append(records, r) }})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("X-Api-Key", "k")
		req.Header.Set("Authorization", "Bearer k")
		req.Header.Set("Anthropic-Version", "2023-06-01")
		if beta {
			req.Header.Set("Anthropic-Beta", anthBetaInlineTools)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		res := w.Result()
		got := w.Body.Bytes()
		if len(records) != 1 || records[0].Status != res.StatusCode {
			t.Fatalf("status %d, records %+v: want one record of that status", res.StatusCode, records)
		}
		switch ct := res.Header.Get("Content-Type"); {
		case res.StatusCode >= 400 && res.StatusCode < 500:
			if !strings.HasPrefix(ct, "application/json") || !errorShape(got) {
				t.Fatalf("status %d answered with %s %s, not the API's error object", res.StatusCode, ct, got)
			}
		case res.StatusCode != http.StatusOK:
			t.Fatalf("status %d for a request body: %s", res.StatusCode, got)
		case strings.HasPrefix(ct, "text/event-stream"):
			checkEvents(t, got)
		default:
			var v map[string]any
			if err := json.Unmarshal(got, &v); err != nil || v == nil {
				t.Fatalf("a 200 that is not one JSON object (%v): %s", err, got)
			}
		}

		// The codec's verdict on the body, again, is the server's answer.
		_, apiErr := s.codecs[api].decode(req.Header, body)
		switch {
		case apiErr == nil && res.StatusCode != http.StatusOK:
			t.Fatalf("the codec accepts the body, but the server answered %d: %s", res.StatusCode, got)
		case apiErr != nil && (apiErr.Status != res.StatusCode || errorMessage(got) != apiErr.Message):
			t.Fatalf("decoding again gives %d %q, but the server answered %d: %s", apiErr.Status, apiErr.Message, res.StatusCode, got)
		}
	})
}

// checkEvents checks a stream of server-sent events: every data line is a
// JSON object, or [DONE].
func checkEvents(t *testing.T, stream []byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(nil, len(stream)+1)
	n := 0
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		n++
		var v map[string]any
		if err := json.Unmarshal([]byte(data), &v); err != nil || v == nil {
			t.Fatalf("event data that is not a JSON object (%v): %s", err, data)
		}
	}
	if n == 0 {
		t.Fatalf("a stream without events: %q", stream)
	}
}

// errorMessage returns the message of either API's error object.
func errorMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error.Message
}

// anthropicErrorShape reports whether body is Anthropic's error object:
// {"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}.
func anthropicErrorShape(body []byte) bool {
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		RequestID string `json:"request_id"`
	}
	return json.Unmarshal(body, &e) == nil && e.Type == "error" && e.Error.Type != "" && e.Error.Message != "" && e.RequestID != ""
}

// openAIErrorShape reports whether body is OpenAI's error object:
// {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}.
func openAIErrorShape(body []byte) bool {
	var e struct {
		Error map[string]json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return false
	}
	var message, typ string
	_, param := e.Error["param"]
	_, code := e.Error["code"]
	return json.Unmarshal(e.Error["message"], &message) == nil && message != "" &&
		json.Unmarshal(e.Error["type"], &typ) == nil && typ != "" && param && code
}

// FuzzMessagesRequest fuzzes Anthropic Messages request bodies; see
// fuzzRequest. The input's flag sends the inline tools beta header.
func FuzzMessagesRequest(f *testing.F) {
	fuzzRequest(f, AnthropicMessages, "/v1/messages", anthropicErrorShape,
		filepath.Join("testdata", "anthropic", "*.json"),
		filepath.Join("..", "provider", "anthropic", "testdata", "golden", "*.json"))
}

// FuzzResponsesRequest fuzzes OpenAI Responses request bodies; see
// fuzzRequest.
func FuzzResponsesRequest(f *testing.F) {
	fuzzRequest(f, OpenAIResponses, "/v1/responses", openAIErrorShape,
		filepath.Join("testdata", "openai", "responses_*.json"),
		filepath.Join("..", "provider", "openai", "testdata", "golden", "responses_*.json"))
}

// FuzzChatRequest fuzzes OpenAI Chat Completions request bodies; see
// fuzzRequest.
func FuzzChatRequest(f *testing.F) {
	fuzzRequest(f, OpenAIChat, "/v1/chat/completions", openAIErrorShape,
		filepath.Join("testdata", "openai", "chat_*.json"),
		filepath.Join("..", "provider", "openai", "testdata", "golden", "chat_*.json"))
}
