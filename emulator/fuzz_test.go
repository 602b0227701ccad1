package emulator

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/tokens"
)

// requestFuzz describes one API for the request fuzzers.
type requestFuzz struct {
	api        API
	path       string
	errorShape func(body []byte) bool
	// templates are small valid requests with one @@ where an input goes:
	// template 0 is the input itself (a whole body).
	templates []string
	// parts name the array members of a request and the template their
	// elements go into (templates["key"]), the top-level members going
	// into template top.
	parts map[string]int
	top   int
	// fill is a valid piece for each template (fill[0] unused), and tool a
	// tool definition with %s for its schema.
	fill  []string
	tool  string
	seeds []string // globs of request bodies
}

// checker is a server for the request fuzzers and what it observed.
type checker struct {
	rf      requestFuzz
	counter *tokens.Counter
}

// check sends body as the body of a POST to the API's path, through the
// whole server (decoding, validation, token counting, cache, the Echo
// responder, the reply), and checks what comes back:
//
//   - the status is 200 or a 4xx: no body is the server's fault;
//   - an error is the API's error object (errorShape) with a message, and
//     the record the server observed has the same status;
//   - a 200 is one JSON object, or server-sent events whose data are JSON
//     objects (or Chat's [DONE]) when the request asked for a stream;
//   - decoding the body again gives the same verdict: the same error (no
//     map order in messages) or none for a 200.
func (c *checker) check(t *testing.T, body []byte, beta bool) {
	t.Helper()
	var records []Record
	clock := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	s, err := New(Config{Counter: c.counter, Now: clock, ContextWindow: -1, Observe: func(r Record) { records = append(records, r) }})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, c.rf.path, bytes.NewReader(body))
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
		if !strings.HasPrefix(ct, "application/json") || !c.rf.errorShape(got) {
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
	_, apiErr := s.codecs[c.rf.api].decode(req.Header, body)
	switch {
	case apiErr == nil && res.StatusCode != http.StatusOK:
		t.Fatalf("the codec accepts the body, but the server answered %d: %s", res.StatusCode, got)
	case apiErr != nil && (apiErr.Status != res.StatusCode || errorMessage(got) != apiErr.Message):
		t.Fatalf("decoding again gives %d %q, but the server answered %d: %s", apiErr.Status, apiErr.Message, res.StatusCode, got)
	}
}

// bodies returns the compacted request bodies of the API's seed files.
func (rf requestFuzz) bodies(tb testing.TB) [][]byte {
	var out [][]byte
	for _, pattern := range rf.seeds {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			tb.Fatalf("no seed bodies %s (%v)", pattern, err)
		}
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				tb.Fatal(err)
			}
			var b bytes.Buffer
			if err := json.Compact(&b, data); err != nil {
				tb.Fatalf("%s: %v", name, err)
			}
			out = append(out, b.Bytes())
		}
	}
	return out
}

// newChecker returns a checker for the API.
func newChecker(tb testing.TB, rf requestFuzz) *checker {
	counter, err := tokens.Default()
	if err != nil {
		tb.Fatal(err)
	}
	return &checker{rf: rf, counter: counter}
}

// fuzzRequest is the body of the request fuzzers: the input, with the
// template it names (an index into rf.templates: 0 is the input as a whole
// body), goes through checker.check; beta sends the inline tools beta
// header (Anthropic). The seeds are the pieces of real request bodies (the
// emulator's test bodies, the adapters' golden requests) in the templates
// they fit: each message, content block, system block and tool, and the
// other top-level members, short enough for the engine to minimize new
// inputs quickly (it takes time quadratic in their length); the whole
// bodies go through the checks in TestRequestBodies.
func fuzzRequest(f *testing.F, rf requestFuzz) {
	seen := map[string]bool{}
	add := func(frag []byte, template int) {
		if key := string(frag) + "\x00" + string(rune(template)); !seen[key] {
			seen[key] = true
			f.Add(frag, uint8(template), true)
		}
	}
	for _, body := range rf.bodies(f) {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(body, &top); err != nil {
			f.Fatal(err)
		}
		for _, key := range slices.Sorted(maps.Keys(top)) {
			val := top[key]
			template, isPart := rf.parts[key]
			var elems []json.RawMessage
			if !isPart || json.Unmarshal(val, &elems) != nil {
				member, _ := json.Marshal(key)
				add(append(append(member, ':'), val...), rf.top)
				continue
			}
			for _, e := range elems {
				add(e, template)
				// Anthropic's content blocks go into a user message.
				var m struct{ Content []json.RawMessage }
				if template, ok := rf.parts["content"]; ok && json.Unmarshal(e, &m) == nil {
					for _, block := range m.Content {
						add(block, template)
					}
				}
			}
		}
	}
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `{"model":""}`, `{"model":"m","stream":"yes"}`, `{"model":"m"} {}`, `{"model":"m",}`,
		`{"model":"m","max_tokens":-1,"messages":[],"input":[],"tools":[{}]}`,
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"input":"hi","stream":true}`,
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"\ud800"}]}],"unknown_a":1,"unknown_b":2}`,
	} {
		add([]byte(s), 0)
	}
	add([]byte(`"stream":true`), rf.top)
	add([]byte(`"unknown_a":1,"unknown_b":2`), rf.top)
	for i, piece := range rf.fill[1:] {
		add([]byte(piece), i+1)
	}
	for _, schema := range []string{`{"type":"object","properties":{"p":{"type":"string","pattern":"(((("}}}`, `{"$ref":"#/nope"}`,
		`{"type":"array"}`, `{"$ref":"https://example.com/s.json"}`, `{"type":"object","properties":{"a":{"$ref":"#"}}}`} {
		add(fmt.Appendf(nil, rf.tool, schema), rf.parts["tools"])
	}
	c := newChecker(f, rf)
	f.Fuzz(func(t *testing.T, frag []byte, template uint8, beta bool) {
		body := frag
		if i := int(template) % len(rf.templates); i > 0 {
			body = []byte(strings.Replace(rf.templates[i], "@@", string(frag), 1))
		}
		c.check(t, body, beta)
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

var (
	messagesFuzz = requestFuzz{
		api: AnthropicMessages, path: "/v1/messages", errorShape: anthropicErrorShape,
		templates: []string{"",
			`{"model":"claude-opus-5-5","max_tokens":64,"messages":[@@]}`,
			`{"model":"claude-opus-5-5","max_tokens":64,"messages":[{"role":"user","content":[@@]}]}`,
			`{"model":"claude-opus-5-5","max_tokens":64,"tools":[@@],"messages":[{"role":"user","content":"hi"}]}`,
			`{"model":"claude-opus-5-5","max_tokens":64,"system":[@@],"messages":[{"role":"user","content":"hi"}]}`,
			`{"model":"claude-opus-5-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}],@@}`,
		},
		parts: map[string]int{"messages": 1, "content": 2, "tools": 3, "system": 4}, top: 5,
		fill: []string{"", `{"role":"user","content":"hi"}`, `{"type":"text","text":"hi"}`,
			`{"name":"t","description":"d","input_schema":{"type":"object"}}`, `{"type":"text","text":"be brief"}`, `"temperature":0.5`},
		tool:  `{"name":"t","description":"d","input_schema":%s}`,
		seeds: []string{filepath.Join("testdata", "anthropic", "*.json"), filepath.Join("..", "provider", "anthropic", "testdata", "golden", "*.json")},
	}
	responsesFuzz = requestFuzz{
		api: OpenAIResponses, path: "/v1/responses", errorShape: openAIErrorShape,
		templates: []string{"",
			`{"model":"gpt-5.6-sol","input":[@@]}`,
			`{"model":"gpt-5.6-sol","tools":[@@],"input":"hi"}`,
			`{"model":"gpt-5.6-sol","input":"hi",@@}`,
		},
		parts: map[string]int{"input": 1, "tools": 2}, top: 3,
		fill:  []string{"", `{"role":"user","content":"hi"}`, `{"type":"function","name":"t","description":"d","parameters":{"type":"object"}}`, `"temperature":0.5`},
		tool:  `{"type":"function","name":"t","description":"d","parameters":%s}`,
		seeds: []string{filepath.Join("testdata", "openai", "responses_*.json"), filepath.Join("..", "provider", "openai", "testdata", "golden", "responses_*.json")},
	}
	chatFuzz = requestFuzz{
		api: OpenAIChat, path: "/v1/chat/completions", errorShape: openAIErrorShape,
		templates: []string{"",
			`{"model":"gpt-5.6-sol","messages":[@@]}`,
			`{"model":"gpt-5.6-sol","tools":[@@],"messages":[{"role":"user","content":"hi"}]}`,
			`{"model":"gpt-5.6-sol","messages":[{"role":"user","content":"hi"}],@@}`,
		},
		parts: map[string]int{"messages": 1, "tools": 2}, top: 3,
		fill:  []string{"", `{"role":"user","content":"hi"}`, `{"type":"function","function":{"name":"t","description":"d","parameters":{"type":"object"}}}`, `"temperature":0.5`},
		tool:  `{"type":"function","function":{"name":"t","description":"d","parameters":%s}}`,
		seeds: []string{filepath.Join("testdata", "openai", "chat_*.json"), filepath.Join("..", "provider", "openai", "testdata", "golden", "chat_*.json")},
	}
)

// TestRequestBodies runs the request fuzzers' checks over their seed
// bodies whole (the fuzzers start from their pieces), with and without the
// beta header, and checks that each template makes a valid request.
func TestRequestBodies(t *testing.T) {
	for _, rf := range []requestFuzz{messagesFuzz, responsesFuzz, chatFuzz} {
		c := newChecker(t, rf)
		for _, body := range rf.bodies(t) {
			c.check(t, body, true)
			c.check(t, body, false)
		}
		s, err := New(Config{Counter: c.counter})
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{"Anthropic-Version": {"2023-06-01"}}
		for i := 1; i < len(rf.templates); i++ {
			body := strings.Replace(rf.templates[i], "@@", rf.fill[i], 1)
			if _, apiErr := s.codecs[rf.api].decode(h, []byte(body)); apiErr != nil {
				t.Errorf("%s template %d: %s: %v", rf.api, i, body, apiErr)
			}
		}
	}
}

// FuzzMessagesRequest fuzzes Anthropic Messages request bodies; see
// fuzzRequest.
func FuzzMessagesRequest(f *testing.F) { fuzzRequest(f, messagesFuzz) }

// FuzzResponsesRequest fuzzes OpenAI Responses request bodies; see
// fuzzRequest.
func FuzzResponsesRequest(f *testing.F) { fuzzRequest(f, responsesFuzz) }

// FuzzChatRequest fuzzes OpenAI Chat Completions request bodies; see
// fuzzRequest.
func FuzzChatRequest(f *testing.F) { fuzzRequest(f, chatFuzz) }
