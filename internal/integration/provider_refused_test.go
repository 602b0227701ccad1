package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/emulator"
	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
	"github.com/toolshelf/toolshelf/provider/anthropic"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
	"github.com/toolshelf/toolshelf/transcript"
)

// This file checks the tool-definition check against the emulator, which
// validates tool schemas the way Anthropic does and is written
// independently of package tool, and shows that a session poisoned by a
// tool saved before the check existed works again.

// emulatorServer serves an emulator that keeps request bodies.
type emulatorServer struct {
	*httptest.Server
	mu   sync.Mutex
	recs []emulator.Record
}

func newEmulator(t *testing.T, r emulator.Responder) *emulatorServer {
	t.Helper()
	es := &emulatorServer{}
	em, err := emulator.New(emulator.Config{Responder: r, KeepBodies: true, Observe: func(rec emulator.Record) {
		es.mu.Lock()
		es.recs = append(es.recs, rec)
		es.mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	es.Server = httptest.NewServer(em)
	t.Cleanup(es.Close)
	return es
}

func (es *emulatorServer) records() []emulator.Record {
	es.mu.Lock()
	defer es.mu.Unlock()
	return append([]emulator.Record(nil), es.recs...)
}

// sendTool posts a Messages request declaring one tool with the given
// description and input schema and returns the status and body.
func (es *emulatorServer) sendTool(t *testing.T, desc string, schema json.RawMessage) (int, string) {
	t.Helper()
	body := fmt.Sprintf(`{"model":"claude-opus-5-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"probe","description":%s,"input_schema":%s}]}`,
		adapt.JSON(desc), schema)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, es.URL+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("x-api-key", "test-key")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := es.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// poisoned are definitions the emulator refuses, each with the error it
// answers with.
var poisoned = []struct {
	name, desc, schema, emulatorSays string
}{
	{"pattern", "Match.", `{"type":"object","properties":{"q":{"type":"string","pattern":"(((("}}}`, "JSON schema is invalid"},
	{"pattern property", "Match.", `{"type":"object","patternProperties":{"((((":{}}}`, "JSON schema is invalid"},
	{"dangling ref", "Point.", `{"type":"object","properties":{"a":{"$ref":"#/$defs/gone"}}}`, "JSON schema is invalid"},
	{"dangling anchor", "Point.", `{"type":"object","properties":{"a":{"$ref":"#gone"}}}`, "JSON schema is invalid"},
	{"remote ref", "Point.", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`, "JSON schema is invalid"},
	{"bad type", "Type.", `{"type":"object","properties":{"a":{"type":"strin"}}}`, "JSON schema is invalid"},
	{"bad required", "Require.", `{"type":"object","required":"a"}`, "JSON schema is invalid"},
	{"array root", "Array.", `{"type":"array"}`, "Input should be 'object'"},
	{"no root type", "Untyped.", `{"properties":{}}`, "Field required"},
	{"megabyte description", strings.Repeat("Talk. ", 1<<18), `{"type":"object"}`, "prompt is too long"},
	{"megabyte schema", "Wide.", wideSchema(1000), "prompt is too long"},
}

// wideSchema returns an object schema of n properties with descriptions
// of about a kilobyte each. (The emulator compiles schemas with
// santhosh-tekuri/jsonschema, whose compile time grows with the square of
// the number of subschemas: 40,000 properties take it seconds.)
func wideSchema(n int) string {
	props := make([]string, n)
	for i := range props {
		props[i] = fmt.Sprintf(`"parameter_number_%d":{"type":"string","description":%q}`, i, strings.Repeat(fmt.Sprintf("value %d of many; ", i), 60))
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
}

// TestCheckAgreesWithTheEmulator checks that every definition the emulator
// refuses is refused by tool.CheckDefinition, and that the check is
// stricter only where it says so: references that loop in place, and
// relative references, which the emulator resolves against its own base.
func TestCheckAgreesWithTheEmulator(t *testing.T) {
	t.Parallel()
	es := newEmulator(t, emulator.Echo{})
	for _, p := range poisoned {
		t.Run(p.name, func(t *testing.T) {
			status, body := es.sendTool(t, p.desc, json.RawMessage(p.schema))
			if status != http.StatusBadRequest || !strings.Contains(body, p.emulatorSays) {
				t.Fatalf("emulator: %d %.300s, want 400 saying %q", status, body, p.emulatorSays)
			}
			if err := tool.CheckDefinition(p.desc, json.RawMessage(p.schema)); err == nil {
				t.Errorf("CheckDefinition accepts what the emulator refuses (%.300s)", body)
			}
		})
	}
	stricter := []string{
		`{"type":"object","$ref":"#"}`,
		`{"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"other.json"}}}`,
	}
	for _, s := range stricter {
		if status, body := es.sendTool(t, "Loop.", json.RawMessage(s)); status != http.StatusOK {
			t.Errorf("the emulator now refuses %s (%d %.200s): move it to the poisoned list", s, status, body)
		}
		if tool.CheckDefinition("Loop.", json.RawMessage(s)) == nil {
			t.Errorf("CheckDefinition accepts %s", s)
		}
	}
	// Both accept every tool of the built-in catalog (a sample of each
	// server's file: the first tool and the largest schema).
	files, err := filepath.Glob("../../catalog/builtin/mcp/*.json")
	if err != nil || len(files) < 50 {
		t.Fatalf("catalog files: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		largest := 0
		for i, tl := range doc.Tools {
			if len(tl.InputSchema) > len(doc.Tools[largest].InputSchema) {
				largest = i
			}
		}
		for _, i := range []int{0, largest} {
			tl := doc.Tools[i]
			var top map[string]json.RawMessage
			if json.Unmarshal(tl.InputSchema, &top) != nil || top["type"] == nil {
				continue // catalog.Parse adds the type; the emulator would say "Field required"
			}
			var b bytes.Buffer
			if err := json.Compact(&b, tl.InputSchema); err != nil {
				t.Fatal(err)
			}
			if status, body := es.sendTool(t, tl.Description, b.Bytes()); status != http.StatusOK {
				t.Errorf("%s %s: emulator %d %.200s", filepath.Base(f), tl.Name, status, body)
			}
			if err := tool.CheckDefinition(tl.Description, b.Bytes()); err != nil {
				t.Errorf("%s %s: %v", filepath.Base(f), tl.Name, err)
			}
		}
	}
}

// poisonedTranscript is a session saved before the check existed: the
// model loaded mcp__shaky__regex, whose pattern is not a regular
// expression, with tool_search, and every request since failed with 400.
func poisonedTranscript(ts llm.Tool, bad llm.Tool) []llm.Message {
	search := llm.ToolCall{ID: "toolu_1", Name: toolsearch.Name, Arguments: json.RawMessage(`{"query":"select:mcp__shaky__regex"}`)}
	return []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("You are a helpful agent.")}, ToolsAdded: []llm.Tool{ts}, Timestamp: 1},
		llm.UserText("find a tool that matches patterns", 2),
		{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, ToolCall: &search}}, StopReason: llm.StopToolUse, Timestamp: 3},
		{Role: llm.RoleToolResult, ToolCallID: "toolu_1", ToolName: toolsearch.Name,
			Content: []llm.Part{llm.Text("Loaded 1 tool. They are available from your next call:\n- mcp__shaky__regex: Match a pattern.")}, Timestamp: 4},
		{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{bad}, Timestamp: 5},
		{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: `400 invalid_request_error: tools.1.custom.input_schema: JSON schema is invalid`, Timestamp: 6},
		llm.UserText("try again", 7),
		{Role: llm.RoleAssistant, StopReason: llm.StopError, ErrorMessage: `400 invalid_request_error: tools.1.custom.input_schema: JSON schema is invalid`, Timestamp: 8},
	}
}

// TestPoisonedSessionWorksAgain resumes a transcript that declares a tool
// providers reject. The transcript as it was saved gets the emulator's
// 400; through the agent and the real Anthropic adapter the resumed
// session gets 200s: the agent withdraws the declaration (the tool stays
// pending, but its server's definition is refused again), and the plan
// sends the old declaration as a stand-in, so requests stay byte-stable.
func TestPoisonedSessionWorksAgain(t *testing.T) {
	t.Parallel()
	reg := tool.NewRegistry()
	ranker, err := search.NewBM25F(nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := toolsearch.New(reg, ranker).Tool()
	if err := reg.Register(ts); err != nil {
		t.Fatal(err)
	}
	bad := tool.Tool{Name: "mcp__shaky__regex", Description: "Match a pattern.", Exposure: tool.Deferred,
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","pattern":"(((("}}}`)}
	msgs := poisonedTranscript(ts.Declaration(), bad.Declaration())

	es := newEmulator(t, emulator.NewScripted(emulator.Reply{Text: "Back in business."}, emulator.Reply{Text: "Still fine."},
		emulator.Reply{Text: "As saved."}))
	// What the old toolshelf sent: the declaration as the transcript has it.
	if status, body := es.sendTool(t, bad.Description, bad.Parameters); status != http.StatusBadRequest ||
		!strings.Contains(body, "JSON schema is invalid") {
		t.Fatalf("the emulator accepts the poisoned declaration: %d %.300s", status, body)
	}

	// The resume: the transcript's tools are restored, the poisoned one
	// waits as a pending name, and its server lists it again.
	var names []string
	for _, d := range transcript.CurrentTools(msgs) {
		names = append(names, d.Name)
	}
	reg.Restore(names...)
	if err := reg.Register(bad); err == nil || !errors.Is(err, tool.ErrSchema) {
		t.Fatalf("registering the poisoned tool: %v, want a refusal", err)
	}
	if pending := reg.Pending(); len(pending) != 1 || pending[0] != bad.Name {
		t.Fatalf("pending %v", pending)
	}
	zero := 0
	model, err := anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: es.URL, Model: "claude-opus-5-5", MaxRetries: &zero})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: model, Tools: reg, Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	for i, prompt := range []string{"and now?", "once more"} {
		for _, err := range a.Run(context.Background(), llm.UserText(prompt, int64(10+i))) {
			if err != nil {
				t.Fatalf("run %d: %v", i+1, err)
			}
		}
	}
	recs := es.records()
	if len(recs) != 3 { // the probe and two requests
		t.Fatalf("%d requests reached the emulator, want 3", len(recs))
	}
	first, second := recs[1], recs[2]
	for _, r := range []emulator.Record{first, second} {
		if r.Status != http.StatusOK {
			t.Fatalf("request %d: %d %s", r.Seq, r.Status, r.Error)
		}
		if bytes.Contains(r.Body, []byte("((((")) {
			t.Errorf("request %d still sends the poisoned schema", r.Seq)
		}
	}
	// The agent withdrew the tool, in one update, once.
	var removals []string
	for _, m := range a.Messages()[len(msgs):] {
		for _, r := range m.ToolsRemoved {
			removals = append(removals, r.Name)
		}
		for _, d := range m.ToolsAdded {
			t.Errorf("the resumed session declared %s", d.Name)
		}
	}
	if len(removals) != 1 || removals[0] != bad.Name {
		t.Errorf("removals %v, want %s once", removals, bad.Name)
	}
	// Byte-stable: everything but the conversation is identical, and the
	// first request's conversation is a prefix of the second's.
	var b1, b2 map[string]json.RawMessage
	if err := json.Unmarshal(first.Body, &b1); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(second.Body, &b2); err != nil {
		t.Fatal(err)
	}
	for k, v := range b1 {
		if k != "messages" && !bytes.Equal(v, b2[k]) {
			t.Errorf("%s changed between the requests:\n%s\n%s", k, v, b2[k])
		}
	}
	var m1, m2 []json.RawMessage
	_ = json.Unmarshal(withoutCacheControl(b1["messages"]), &m1)
	_ = json.Unmarshal(withoutCacheControl(b2["messages"]), &m2)
	if len(m2) <= len(m1) {
		t.Fatalf("the second request has %d messages, the first %d", len(m2), len(m1))
	}
	for i := range m1 {
		if !bytes.Equal(m1[i], m2[i]) {
			t.Errorf("message %d changed:\n%s\n%s", i, m1[i], m2[i])
		}
	}
	stand := provider.Refused(bad.Declaration())
	if !bytes.Contains(first.Body, []byte(stand.Description)) {
		t.Errorf("the first request does not declare the stand-in:\n%s", first.Body)
	}

	// The plan alone, without the agent's removal, also makes the saved
	// transcript sendable.
	var done *llm.Message
	for ev, err := range model.Stream(context.Background(), &llm.Request{Messages: msgs}) {
		if err != nil {
			t.Fatalf("the saved transcript as it is: %v", err)
		}
		if ev.Type == llm.EventDone {
			done = ev.Message
		}
	}
	if done == nil || llm.ContentText(done.Content, "") != "As saved." {
		t.Errorf("the saved transcript as it is: answer %+v", done)
	}
	if recs := es.records(); len(recs) != 4 || recs[3].Status != http.StatusOK {
		t.Errorf("the saved transcript as it is: %d records, last %+v", len(recs), recs[len(recs)-1].Status)
	}
}

// withoutCacheControl drops cache markers, which move forward every
// request and are not part of the cached prefix.
func withoutCacheControl(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(`,"cache_control":{"type":"ephemeral"}`), nil)
}
