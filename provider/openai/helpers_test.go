package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

var update = flag.Bool("update", false, "rewrite the golden request bodies in testdata/golden")

// Tools of the reference's transcript tests. The schemas' keys are not in
// sorted order, so a body that sorts them fails the byte checks.
var (
	baseTool = llm.Tool{Name: "base_tool", Description: "Base tool.",
		Parameters: json.RawMessage(`{"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["query"]}`)}
	lateTool = llm.Tool{Name: "late_tool", Description: "Late tool.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"A <path> & more"}},"required":["path"]}`)}
	oldTool = llm.Tool{Name: "old_tool", Description: "Old tool.",
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
)

// Wire forms of the tools' schemas, compacted with key order kept.
const (
	baseSchema = `{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}`
	lateSchema = `{"type":"object","properties":{"path":{"type":"string","description":"A <path> & more"}},"required":["path"]}`
)

func head(prompt string, tools ...llm.Tool) llm.Message {
	m := llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.Text(prompt)}}
	for _, t := range tools {
		m.ToolsAdded = append(m.ToolsAdded, t.Clone())
	}
	return m
}

func systemUpdate(text string, added []llm.Tool, removed ...string) llm.Message {
	m := llm.Message{Role: llm.RoleSystem, ToolsAdded: added, Timestamp: 5}
	if text != "" {
		m.Content = []llm.Part{llm.Text(text)}
	}
	for _, r := range removed {
		m.ToolsRemoved = append(m.ToolsRemoved, llm.ToolRef{Name: r})
	}
	return m
}

func user(text string) llm.Message { return llm.UserText(text, 1) }

func assistant(model string, parts ...llm.Part) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant, Content: parts, Model: model, StopReason: llm.StopEnd}
	for _, p := range parts {
		if p.Type == llm.PartToolCall {
			m.StopReason = llm.StopToolUse
		}
	}
	return m
}

func call(id, name, args string) llm.Part {
	return llm.Part{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}}
}

func result(id, name string, parts ...llm.Part) llm.Message {
	return llm.Message{Role: llm.RoleToolResult, ToolCallID: id, ToolName: name, Content: parts}
}

// piTranscript is the reference's transcript tests' shape: a head with
// base_tool, a user message, then an update that says "updated guidance"
// and adds late_tool.
func piTranscript() []llm.Message {
	return []llm.Message{
		head("base prompt", baseTool),
		user("hello"),
		systemUpdate("updated guidance", []llm.Tool{lateTool}),
	}
}

// adapter is what the tests need of both adapters.
type adapter interface {
	llm.Model
	RequestBody(*llm.Request) ([]byte, error)
	Capabilities() provider.Capabilities
}

// newAdapter returns a Responses or Chat adapter with retries off.
func newAdapter(t *testing.T, api provider.API, model string, caps provider.Capabilities, baseURL string) adapter {
	t.Helper()
	retries := 0
	cfg := Config{APIKey: "test-key", BaseURL: baseURL, Model: model, Capabilities: caps, MaxRetries: &retries}
	var (
		a   adapter
		err error
	)
	switch api {
	case provider.OpenAIResponses:
		a, err = NewResponses(cfg)
	case provider.OpenAIChat:
		a, err = NewChat(cfg)
	default:
		t.Fatalf("unknown API %q", api)
	}
	if err != nil {
		t.Fatalf("new %s adapter: %v", api, err)
	}
	return a
}

// server is an httptest server that records request bodies and answers
// each with a fixture.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	paths  []string
}

// reply is how the server answers: an SSE fixture file, or an error status
// with a JSON body.
type reply struct {
	sse    string // file under testdata/sse
	status int
	body   string
	// block makes the handler send the fixture, then wait until the client
	// goes away and report it on gone.
	block bool
	gone  chan struct{}
}

func newServer(t *testing.T, r reply) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.paths = append(s.paths, req.URL.Path)
		s.mu.Unlock()
		if r.status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("x-should-retry", "false")
			w.WriteHeader(r.status)
			_, _ = io.WriteString(w, r.body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if r.sse != "" {
			_, _ = w.Write(readFile(t, filepath.Join("testdata", "sse", r.sse)))
		}
		w.(http.Flusher).Flush()
		if r.block {
			<-req.Context().Done()
			close(r.gone)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// requests returns the bodies received so far.
func (s *server) requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bodies)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return b
}

// collect ranges a stream and returns its events and its error.
func collect(m llm.Model, req *llm.Request) ([]llm.Event, error) {
	var evs []llm.Event
	for ev, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// decode unmarshals a JSON body into generic values.
func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, b)
	}
	return v
}

// checkGolden compares a body with testdata/golden/<name>.json
// semantically (key order and spacing aside), or rewrites the file with
// -update.
func checkGolden(t *testing.T, name string, body []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, body, "", "  "); err != nil {
			t.Fatalf("indent %s: %v", name, err)
		}
		pretty.WriteByte('\n')
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatalf("write golden: %v", err)
		}
		return
	}
	want := readFile(t, path)
	if diffs := jsonDiff("", decodeAny(t, want), decodeAny(t, body)); len(diffs) > 0 {
		t.Errorf("body differs from %s (run go test -update to accept):\n  %s", path, strings.Join(diffs, "\n  "))
	}
}

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, b)
	}
	return v
}

// jsonDiff lists the paths at which two decoded JSON values differ.
func jsonDiff(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		var diffs []string
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			wv, wok := w[k]
			gv, gok := g[k]
			switch {
			case !gok:
				diffs = append(diffs, fmt.Sprintf("%s.%s: missing, want %s", path, k, short(wv)))
			case !wok:
				diffs = append(diffs, fmt.Sprintf("%s.%s: unexpected %s", path, k, short(gv)))
			default:
				diffs = append(diffs, jsonDiff(path+"."+k, wv, gv)...)
			}
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		var diffs []string
		for i := 0; i < max(len(w), len(g)); i++ {
			p := fmt.Sprintf("%s[%d]", path, i)
			switch {
			case i >= len(g):
				diffs = append(diffs, fmt.Sprintf("%s: missing, want %s", p, short(w[i])))
			case i >= len(w):
				diffs = append(diffs, fmt.Sprintf("%s: unexpected %s", p, short(g[i])))
			default:
				diffs = append(diffs, jsonDiff(p, w[i], g[i])...)
			}
		}
		return diffs
	}
	if reflect.DeepEqual(want, got) {
		return nil
	}
	return []string{fmt.Sprintf("%s: got %s, want %s", path, short(got), short(want))}
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// labels describes a list of input items or messages in order: an item's
// type, or "role" for a message, with ":tools" when a message carries
// tools.
func labels(list any) []string {
	var out []string
	for _, x := range list.([]any) {
		m := x.(map[string]any)
		label, _ := m["type"].(string)
		if label == "" || label == "message" {
			label, _ = m["role"].(string)
			if _, ok := m["tools"]; ok {
				label += ":tools"
			}
		}
		out = append(out, label)
	}
	return out
}

// contents returns the content of every message of a role, nil where a
// message has none.
func contents(list any, role string) []any {
	var out []any
	for _, x := range list.([]any) {
		m := x.(map[string]any)
		if m["role"] == role && m["type"] != "additional_tools" {
			out = append(out, m["content"])
		}
	}
	return out
}

// toolNames returns the names of a tools list (Responses or Chat form).
func toolNames(list any) []string {
	var out []string
	if list == nil {
		return nil
	}
	for _, x := range list.([]any) {
		m := x.(map[string]any)
		if f, ok := m["function"].(map[string]any); ok {
			m = f
		}
		out = append(out, m["name"].(string))
	}
	return out
}

// equal fails the test when got and want differ.
func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %#v\nwant %#v", what, got, want)
	}
}

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
	h := http.Header{"Content-Type": {"text/event-stream"}}
	if a.status != http.StatusOK {
		h.Set("Content-Type", "application/json")
	}
	return &http.Response{StatusCode: a.status, Status: http.StatusText(a.status), Header: h, Request: r,
		Body: io.NopCloser(bytes.NewReader(a.body)), ContentLength: int64(len(a.body))}, nil
}
