package emulator_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/emulator"
)

// Pieces of the request Codex CLI 0.169.0 sends, shortened.
const (
	cxMeta     = `"client_metadata":{"x-codex-installation-id":"f12c0269","x-codex-turn-metadata":"{\"session_id\":\"s\",\"turn_id\":\"t\"}","turn_id":"t"}`
	cxPatch    = `{"type":"custom","name":"apply_patch","description":"Edit files. This is a FREEFORM tool.","format":{"type":"grammar","syntax":"lark","definition":"start: begin_patch hunk+ end_patch"}}`
	cxSearch   = `{"type":"tool_search","execution":"client","description":"# Tool discovery","parameters":{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"number"}},"required":["query"]}}`
	cxWeb      = `{"type":"web_search","external_web_access":false,"search_content_types":["text","image"]}`
	cxNSTools  = `[{"type":"namespace","name":"mcp__toolshelf","description":"Find tools.","tools":[{"type":"function","name":"tool_search","strict":false,"defer_loading":true,"parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}]}]`
	cxSearched = `{"type":"tool_search_call","call_id":"call_1","execution":"client","arguments":{"query":"toolshelf","limit":8},"status":"completed"},` +
		`{"type":"tool_search_output","call_id":"call_1","execution":"client","status":"completed","tools":` + cxNSTools + `}`
	cxCalled = `{"type":"function_call","call_id":"call_2","namespace":"mcp__toolshelf","name":"tool_search","arguments":"{\"query\":\"read a file\"}"},` +
		`{"type":"function_call_output","call_id":"call_2","output":"1 tool found"}`
)

// cxBody is a Responses request as Codex sends it, with input items and
// extra top-level fields.
func cxBody(extra string, items ...string) string {
	return `{"model":"gpt-5.5","stream":true,"store":false,"parallel_tool_calls":true,"tool_choice":"auto",` +
		`"tools":[` + oaiFn + `,` + cxPatch + `,` + cxSearch + `,` + cxWeb + `],` +
		`"input":[` + strings.Join(append([]string{oaiUserMsg}, items...), ",") + `],` + extra + cxMeta + `}`
}

// What current Responses clients send is accepted: Codex's
// client_metadata, custom and web_search tools, namespaces (with a custom
// tool inside), its client-side tool search and calls by namespace.
func TestResponsesCodexRequests(t *testing.T) {
	ts := oaiServer(t, emulator.Config{})
	for _, c := range []struct{ name, body string }{
		{"Codex's first request", cxBody("")},
		{"after its tool search", cxBody("", cxSearched)},
		{"after a call by namespace", cxBody("", cxSearched, cxCalled)},
		{"a namespace with a custom tool", strings.Replace(cxBody(""), `"tools":[`,
			`"tools":[{"type":"namespace","name":"edit","description":"Editing.","tools":[`+cxPatch+`]},`, 1)},
		{"a custom tool with a text format", strings.Replace(cxBody(""), cxPatch,
			`{"type":"custom","name":"apply_patch","format":{"type":"text"}}`, 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if status, body := oaiPost(t, ts.URL+oaiResponses, "test", c.body); status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
		})
	}
}

// Their malformed forms are refused in the API's words, and an unknown
// field still is.
func TestResponsesCodexRequestErrors(t *testing.T) {
	ts := oaiServer(t, emulator.Config{})
	for _, c := range []struct{ name, body, param, message string }{
		{"an unknown top-level field", strings.Replace(cxBody(""), `"client_metadata"`, `"client_metadat"`, 1),
			"client_metadat", "Unknown parameter: 'client_metadat'."},
		{"client_metadata not an object", strings.Replace(cxBody(""), cxMeta, `"client_metadata":"codex"`, 1),
			"client_metadata", "Invalid type for 'client_metadata'"},
		{"a client_metadata value not a string", strings.Replace(cxBody(""), cxMeta, `"client_metadata":{"turn_id":7}`, 1),
			"client_metadata.turn_id", "Invalid type for 'client_metadata.turn_id'"},
		{"a custom tool's unknown field", strings.Replace(cxBody(""), `"name":"apply_patch",`, `"name":"apply_patch","parameters":{},`, 1),
			"tools[1].parameters", "Unknown parameter: 'tools[1].parameters'."},
		{"a grammar without its definition", strings.Replace(cxBody(""), `,"definition":"start: begin_patch hunk+ end_patch"`, ``, 1),
			"tools[1].format.definition", "Missing required parameter: 'tools[1].format.definition'."},
		{"a grammar of an unknown syntax", strings.Replace(cxBody(""), `"syntax":"lark"`, `"syntax":"ebnf"`, 1),
			"tools[1].format.syntax", "Invalid value: 'ebnf'."},
		{"web_search's unknown field", strings.Replace(cxBody(""), `"external_web_access":false`, `"external_web_access":false,"domains":[]`, 1),
			"tools[3].domains", "Unknown parameter: 'tools[3].domains'."},
		{"web_search's unknown content type", strings.Replace(cxBody(""), `["text","image"]`, `["text","video"]`, 1),
			"tools[3].search_content_types[1]", "Invalid value: 'video'."},
		{"a custom tool named twice", strings.Replace(cxBody(""), cxWeb, cxPatch, 1),
			"tools[3].name", "duplicate tool name 'apply_patch'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := oaiPost(t, ts.URL+oaiResponses, "test", c.body)
			var e oaiErrorBody
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("error body %s: %v", body, err)
			}
			if status != http.StatusBadRequest || e.Error.Type != "invalid_request_error" || oaiDeref(e.Error.Param) != c.param ||
				!strings.Contains(e.Error.Message, c.message) {
				t.Errorf("got %d %s param %v %q, want 400 invalid_request_error param %q with %q",
					status, e.Error.Type, oaiDeref(e.Error.Param), e.Error.Message, c.param, c.message)
			}
		})
	}
}

// A script's call can name a namespace, and a call of type tool_search is
// a client-side tool_search_call item, streamed and not.
func TestResponsesScriptedNamespaceAndSearch(t *testing.T) {
	search := emulator.Call{Type: emulator.CallToolSearch, Arguments: json.RawMessage(`{"query":"toolshelf","limit":8}`)}
	called := emulator.Call{Namespace: "mcp__toolshelf", Name: "tool_search", Arguments: json.RawMessage(`{"query":"read a file"}`)}
	for _, stream := range []bool{false, true} {
		ts := oaiServer(t, emulator.Config{Responder: emulator.NewScripted(
			emulator.Reply{Calls: []emulator.Call{search}}, emulator.Reply{Calls: []emulator.Call{called}})})
		var items []map[string]any
		for _, body := range []string{cxBody(""), cxBody("", cxSearched)} {
			if !stream {
				body = strings.Replace(body, `"stream":true`, `"stream":false`, 1)
			}
			status, raw := oaiPost(t, ts.URL+oaiResponses, "test", body)
			if status != http.StatusOK {
				t.Fatalf("stream %v: status %d: %s", stream, status, raw)
			}
			items = append(items, responsesOutput(t, raw, stream)...)
		}
		if len(items) != 2 {
			t.Fatalf("stream %v: output items %v, want 2", stream, items)
		}
		s, f := items[0], items[1]
		if s["type"] != "tool_search_call" || s["execution"] != "client" || s["status"] != "completed" || s["call_id"] == "" ||
			!jsonEqual(t, s["arguments"], `{"query":"toolshelf","limit":8}`) {
			t.Errorf("stream %v: the search item %v, want a client tool_search_call with the script's arguments", stream, s)
		}
		if f["type"] != "function_call" || f["namespace"] != "mcp__toolshelf" || f["name"] != "tool_search" || f["arguments"] != `{"query":"read a file"}` {
			t.Errorf("stream %v: the call item %v, want function_call mcp__toolshelf / tool_search", stream, f)
		}
	}
}

// responsesOutput returns a Response's output items: from the body, or
// from the output_item.done events of a stream.
func responsesOutput(t *testing.T, raw []byte, stream bool) []map[string]any {
	t.Helper()
	if !stream {
		var r struct {
			Output []map[string]any `json:"output"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		return r.Output
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type string         `json:"type"`
			Item map[string]any `json:"item"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		if ev.Type == "response.output_item.done" {
			out = append(out, ev.Item)
		}
	}
	return out
}

// jsonEqual reports whether v marshals to the same JSON as want.
func jsonEqual(t *testing.T, v any, want string) bool {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	a, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(w)
	return bytes.Equal(a, b)
}

// A script's call type is function (the default) or tool_search; a
// tool_search call needs no name.
func TestReadScriptCallTypes(t *testing.T) {
	for _, c := range []struct{ line, err string }{
		{`{"tool_calls":[{"type":"tool_search","arguments":{"query":"q"}}]}`, ""},
		{`{"tool_calls":[{"type":"function","name":"f","namespace":"ns"}]}`, ""},
		{`{"tool_calls":[{"type":"web_search","name":"f"}]}`, `tool call 1 has type "web_search": want "function" (the default) or "tool_search"`},
		{`{"tool_calls":[{"namespace":"ns"}]}`, "tool call 1 has no name"},
	} {
		path := filepath.Join(t.TempDir(), "script.jsonl")
		if err := os.WriteFile(path, []byte(c.line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := emulator.ReadScript(path)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: error %v, want %q", c.line, err, c.err)
		}
	}
}

// A namespace or a tool_search call in a reply on another API is the
// responder's failure, not a malformed answer.
func TestResponsesOnlyCalls(t *testing.T) {
	for _, call := range []emulator.Call{
		{Type: emulator.CallToolSearch, Arguments: json.RawMessage(`{"query":"q"}`)},
		{Namespace: "mcp__toolshelf", Name: "tool_search", Arguments: json.RawMessage(`{}`)},
	} {
		ts := oaiServer(t, emulator.Config{Responder: emulator.NewScripted(emulator.Reply{Calls: []emulator.Call{call}})})
		status, body := oaiPost(t, ts.URL+oaiChat, "test", `{"model":"gpt-5.5","messages":[`+oaiUserMsg+`]}`)
		if status != http.StatusInternalServerError || !strings.Contains(string(body), "only the OpenAI Responses API carries") {
			t.Errorf("%+v on Chat Completions: %d %s, want 500 naming the Responses API", call, status, body)
		}
	}
}
