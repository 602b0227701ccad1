package anthropic

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/llm"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden request bodies under testdata/golden")

// testModel is the model id the tests configure; default capabilities give
// it the changes class.
const testModel = "claude-opus-5-5"

func decl(name, desc, schema string) llm.Tool {
	return llm.Tool{Name: name, Description: desc, Parameters: json.RawMessage(schema)}
}

func head(prompt string, sections llm.Sections, tools ...llm.Tool) llm.Message {
	m := llm.Message{Role: llm.RoleSystem, Sections: sections, ToolsAdded: tools}
	if prompt != "" {
		m.Content = []llm.Part{llm.Text(prompt)}
	}
	return m
}

func update(text string, sections llm.Sections, added []llm.Tool, removed ...string) llm.Message {
	m := llm.Message{Role: llm.RoleSystem, Sections: sections, ToolsAdded: added}
	if text != "" {
		m.Content = []llm.Part{llm.Text(text)}
	}
	for _, r := range removed {
		m.ToolsRemoved = append(m.ToolsRemoved, llm.ToolRef{Name: r})
	}
	return m
}

func user(s string) llm.Message { return llm.UserText(s, 1) }

func assistant(parts ...llm.Part) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Model: testModel, StopReason: llm.StopEnd, Content: parts}
}

func callPart(id, name, args string) llm.Part {
	return llm.Part{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}}
}

func result(id, name string, parts ...llm.Part) llm.Message {
	return llm.Message{Role: llm.RoleToolResult, ToolCallID: id, ToolName: name, Content: parts}
}

func newModel(t *testing.T, cfg Config) *Model {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = testModel
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

// wire is a typed view of a request body for assertions.
type wire struct {
	Model     string        `json:"model"`
	MaxTokens int           `json:"max_tokens"`
	Stream    bool          `json:"stream"`
	System    []wireBlock   `json:"system"`
	Tools     []wireTool    `json:"tools"`
	Messages  []wireMessage `json:"messages"`
}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	DeferLoading bool            `json:"defer_loading"`
	CacheControl *wireCache      `json:"cache_control"`
}

type wireCache struct {
	Type string `json:"type"`
	TTL  string `json:"ttl"`
}

type wireMessage struct {
	Role    string      `json:"role"`
	Content []wireBlock `json:"content"`
}

type wireBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	Thinking     string          `json:"thinking"`
	Signature    string          `json:"signature"`
	Data         string          `json:"data"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	IsError      *bool           `json:"is_error"`
	Content      []wireBlock     `json:"content"`
	CacheControl *wireCache      `json:"cache_control"`
	Source       *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
	Tool *struct {
		Type       string    `json:"type"`
		Name       string    `json:"name"`
		Definition *wireTool `json:"definition"`
	} `json:"tool"`
}

func decodeWire(t *testing.T, body []byte) wire {
	t.Helper()
	var w wire
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, body)
	}
	return w
}

func (w wire) toolNames() []string {
	var out []string
	for _, t := range w.Tools {
		out = append(out, t.Name)
	}
	return out
}

func (w wire) roles() []string {
	var out []string
	for _, m := range w.Messages {
		out = append(out, m.Role)
	}
	return out
}

func (w wire) last() wireMessage {
	if len(w.Messages) == 0 {
		return wireMessage{}
	}
	return w.Messages[len(w.Messages)-1]
}

func blockTypes(m wireMessage) []string {
	var out []string
	for _, b := range m.Content {
		out = append(out, b.Type)
	}
	return out
}

var toolIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// checkWireRules asserts the rules Anthropic enforces on a body that this
// adapter is responsible for (provider-apis §1.5, §1.6): at most four
// breakpoints, none on a deferred tool, at least one tool not deferred,
// system messages after a user turn and before an assistant turn or the
// end, tool_use answered in the next user message, valid ids, no blank
// text.
func checkWireRules(t *testing.T, body []byte) {
	t.Helper()
	var raw any
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	if n := countKey(raw, "cache_control"); n > 4 {
		t.Errorf("%d cache_control markers, the API allows 4", n)
	}
	w := decodeWire(t, body)
	deferred, direct := 0, 0
	for _, tl := range w.Tools {
		if tl.DeferLoading {
			deferred++
			if tl.CacheControl != nil {
				t.Errorf("deferred tool %s carries cache_control", tl.Name)
			}
		} else {
			direct++
		}
	}
	if deferred > 0 && direct == 0 {
		t.Errorf("every tool is deferred")
	}
	for i, m := range w.Messages {
		for _, b := range m.Content {
			if b.Type == "text" && strings.TrimSpace(b.Text) == "" {
				t.Errorf("messages.%d: blank text block", i)
			}
		}
		switch m.Role {
		case "system":
			if i == 0 || w.Messages[i-1].Role != "user" && w.Messages[i-1].Role != "system" {
				t.Errorf("messages.%d: a system message must follow a user turn", i)
			}
			if i+1 < len(w.Messages) && w.Messages[i+1].Role != "assistant" && w.Messages[i+1].Role != "system" {
				t.Errorf("messages.%d: a system message must be last or followed by an assistant turn, not %s", i, w.Messages[i+1].Role)
			}
		case "assistant":
			var ids []string
			for _, b := range m.Content {
				if b.Type == "tool_use" {
					ids = append(ids, b.ID)
					if !toolIDPattern.MatchString(b.ID) || len(b.ID) > 64 {
						t.Errorf("messages.%d: tool_use id %q does not match the API's pattern", i, b.ID)
					}
				}
			}
			if len(ids) == 0 {
				continue
			}
			if i+1 >= len(w.Messages) || w.Messages[i+1].Role != "user" {
				t.Errorf("messages.%d: tool_use ids %v without tool_result in the next message", i, ids)
				continue
			}
			answered := map[string]bool{}
			for _, b := range w.Messages[i+1].Content {
				if b.Type == "tool_result" {
					answered[b.ToolUseID] = true
				}
			}
			for _, id := range ids {
				if !answered[id] {
					t.Errorf("messages.%d: tool_use %s has no tool_result in the next message", i, id)
				}
			}
		}
	}
}

func countKey(v any, key string) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == key {
				n++
			}
			n += countKey(x, key)
		}
	case []any:
		for _, x := range v {
			n += countKey(x, key)
		}
	}
	return n
}

// checkGolden compares a body with testdata/golden/<name>.json as JSON
// values (key order and white space aside), or rewrites the file with
// -update.
func checkGolden(t *testing.T, name string, body []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".json")
	if *updateGolden {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, body, "", "  "); err != nil {
			t.Fatalf("indent: %v", err)
		}
		pretty.WriteByte('\n')
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./provider/anthropic -run %s -update to write it)", err, t.Name())
	}
	if diff := jsonDiff(want, body); diff != "" {
		t.Errorf("request body differs from %s (-golden +got):\n%s", path, diff)
	}
}

// jsonDiff compares two JSON documents as values and returns a readable
// diff, empty when they are equal.
func jsonDiff(want, got []byte) string {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		return "golden is not JSON: " + err.Error()
	}
	if err := json.Unmarshal(got, &g); err != nil {
		return "body is not JSON: " + err.Error()
	}
	return cmp.Diff(w, g)
}

// fakeAPI is an httptest server standing in for the Messages API: it
// records each request and answers with a fixed status and body.
type fakeAPI struct {
	*httptest.Server
	mu       sync.Mutex
	requests []captured
}

type captured struct {
	path, query string
	header      http.Header
	body        []byte
}

func newFakeAPI(t *testing.T, status int, contentType string, answer []byte, header map[string]string) *fakeAPI {
	t.Helper()
	f := &fakeAPI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, captured{path: r.URL.Path, query: r.URL.RawQuery, header: r.Header.Clone(), body: b})
		f.mu.Unlock()
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write(answer)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPI) captured() []captured {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]captured(nil), f.requests...)
}

// config points a Config at a fake API, without retries.
func (f *fakeAPI) config(cfg Config) Config {
	zero := 0
	cfg.BaseURL, cfg.APIKey, cfg.MaxRetries, cfg.HTTPClient = f.URL, "test-key", &zero, f.Client()
	if cfg.Model == "" {
		cfg.Model = testModel
	}
	return cfg
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sse", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// collect ranges over a stream and returns its events and its error.
func collect(seq func(func(llm.Event, error) bool)) ([]llm.Event, error) {
	var events []llm.Event
	for ev, err := range seq {
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	return events, nil
}
