package emulator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// anthTestServer starts the emulator with cfg on an httptest server.
func anthTestServer(t *testing.T, cfg Config) *httptest.Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// anthRequest is a raw Messages request: the body and the headers beyond
// the defaults (x-api-key, anthropic-version, content-type).
type anthRequest struct {
	body      string
	betas     []string // one anthropic-beta header each
	noVersion bool
	noKey     bool
}

func anthSend(t *testing.T, srv *httptest.Server, r anthRequest) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	if !r.noKey {
		req.Header.Set("x-api-key", "test-key")
	}
	if !r.noVersion {
		req.Header.Set("anthropic-version", "2023-06-01")
	}
	for _, b := range r.betas {
		req.Header.Add("anthropic-beta", b)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// anthErrorBody is Anthropic's error shape.
type anthErrorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Details *struct {
			ErrorCode string `json:"error_code"`
		} `json:"details"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

// anthMsgs wraps messages into a request for claude-opus-5-5; extra is
// more top-level fields (with a trailing comma).
func anthMsgs(extra string, msgs ...string) string {
	return fmt.Sprintf(`{"model":"claude-opus-5-5","max_tokens":256,%s"messages":[%s]}`, extra, strings.Join(msgs, ","))
}

const (
	anthHi        = `{"role":"user","content":"hi"}`
	anthOK        = `{"role":"assistant","content":"ok"}`
	anthBaseTool  = `{"name":"base","input_schema":{"type":"object"}}`
	anthDeferTool = `{"name":"deploy","input_schema":{"type":"object","properties":{"env":{"type":"string"}}},"defer_loading":true}`
	anthCC        = `"cache_control":{"type":"ephemeral"}`
	anthCallBase  = `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"base","input":{}}]}`
	anthResult1   = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"done"}]}`
	anthInline    = "inline-tools-2026-09-15"
	anthChanges   = "mid-conversation-tool-changes-2026-07-01"
)

func TestAnthropicCodecInvalidRequests(t *testing.T) {
	tools := func(defs ...string) string { return `"tools":[` + strings.Join(defs, ",") + `],` }
	sysMsg := func(blocks ...string) string {
		return `{"role":"system","content":[` + strings.Join(blocks, ",") + `]}`
	}
	cases := []struct {
		name    string
		req     anthRequest
		status  int
		errType string
		message string
		code    string // error.details.error_code
	}{
		{name: "no api key", req: anthRequest{body: anthMsgs("", anthHi), noKey: true},
			status: 401, errType: "authentication_error", message: "No API key provided"},
		{name: "malformed json", req: anthRequest{body: `{"model": "claude-opus-5-5",`},
			message: "There was an error parsing the body of the request"},
		{name: "trailing data", req: anthRequest{body: anthMsgs("", anthHi) + `{}`},
			message: "error parsing the body"},
		{name: "body not an object", req: anthRequest{body: `[1]`},
			message: "body: Input should be a valid dictionary"},
		{name: "no anthropic-version", req: anthRequest{body: anthMsgs("", anthHi), noVersion: true},
			message: "anthropic-version: header is required"},
		{name: "unknown beta", req: anthRequest{body: anthMsgs("", anthHi), betas: []string{anthInline + ", bogus-2099-01-01"}},
			message: "Unexpected value(s) `bogus-2099-01-01` for the `anthropic-beta` header. Please consult our documentation"},
		{name: "unknown beta in a repeated header", req: anthRequest{body: anthMsgs("", anthHi), betas: []string{anthInline, "nope-1"}},
			message: "Unexpected value(s) `nope-1` for the `anthropic-beta` header"},
		{name: "unknown top-level key", req: anthRequest{body: anthMsgs(`"frobnicate":1,`, anthHi)},
			message: "frobnicate: Extra inputs are not permitted"},
		{name: "missing model", req: anthRequest{body: `{"max_tokens":5,"messages":[` + anthHi + `]}`},
			message: "model: Field required"},
		{name: "model not a string", req: anthRequest{body: `{"model":5,"max_tokens":5,"messages":[` + anthHi + `]}`},
			message: "model: Input should be a valid string"},
		{name: "missing max_tokens", req: anthRequest{body: `{"model":"claude-opus-5-5","messages":[` + anthHi + `]}`},
			message: "max_tokens: Field required"},
		{name: "max_tokens not an integer", req: anthRequest{body: `{"model":"claude-opus-5-5","max_tokens":"5","messages":[` + anthHi + `]}`},
			message: "max_tokens: Input should be a valid integer"},
		{name: "max_tokens 0 with stream", req: anthRequest{body: `{"model":"claude-opus-5-5","max_tokens":0,"stream":true,"messages":[` + anthHi + `]}`},
			message: "max_tokens: Input should be greater than or equal to 1"},
		{name: "missing messages", req: anthRequest{body: `{"model":"claude-opus-5-5","max_tokens":5}`},
			message: "messages: Field required"},
		{name: "empty messages", req: anthRequest{body: anthMsgs("")},
			message: "messages: List should have at least 1 item after validation, not 0"},
		{name: "temperature out of range", req: anthRequest{body: anthMsgs(`"temperature":1.5,`, anthHi)},
			message: "temperature: Input should be less than or equal to 1"},
		{name: "metadata extra key", req: anthRequest{body: anthMsgs(`"metadata":{"user":"x"},`, anthHi)},
			message: "metadata.user: Extra inputs are not permitted"},
		{name: "tool name pattern", req: anthRequest{body: anthMsgs(tools(`{"name":"bad.name","input_schema":{"type":"object"}}`), anthHi)},
			message: "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"},
		{name: "tool name too long", req: anthRequest{body: anthMsgs(tools(`{"name":"`+strings.Repeat("a", 129)+`","input_schema":{"type":"object"}}`), anthHi)},
			message: "tools.0.custom.name: String should have at most 128 characters"},
		{name: "duplicate tool names", req: anthRequest{body: anthMsgs(tools(anthBaseTool, anthBaseTool), anthHi)},
			message: "tools: Tool names must be unique."},
		{name: "tool extra key", req: anthRequest{body: anthMsgs(tools(`{"name":"a","input_schema":{"type":"object"},"parameters":{}}`), anthHi)},
			message: "tools.0.custom.parameters: Extra inputs are not permitted"},
		{name: "tool without input_schema", req: anthRequest{body: anthMsgs(tools(`{"name":"a"}`), anthHi)},
			message: "tools.0.custom.input_schema: Field required"},
		{name: "input_schema type not object", req: anthRequest{body: anthMsgs(tools(`{"name":"a","input_schema":{"type":"array"}}`), anthHi)},
			message: "tools.0.custom.input_schema.type: Input should be 'object'"},
		{name: "input_schema invalid", req: anthRequest{body: anthMsgs(tools(`{"name":"a","input_schema":{"type":"object","properties":{"x":{"type":5}}}}`), anthHi)},
			message: "tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12"},
		{name: "unknown tool type", req: anthRequest{body: anthMsgs(tools(`{"type":"teleporter_20990101","name":"t"}`), anthHi)},
			message: "tools.0: Input tag 'teleporter_20990101' found using 'type' does not match any of the expected tags"},
		{name: "deferred tool with cache_control", req: anthRequest{body: anthMsgs(tools(anthBaseTool, `{"name":"d","input_schema":{"type":"object"},"defer_loading":true,`+anthCC+`}`), anthHi)},
			message: "Tool 'd' cannot have both defer_loading=true and cache_control set. Tools with defer_loading cannot use prompt caching."},
		{name: "all tools deferred", req: anthRequest{body: anthMsgs(tools(anthDeferTool), anthHi)},
			message: "All tools have defer_loading set"},
		{name: "five breakpoints", req: anthRequest{body: anthMsgs(
			tools(`{"name":"a","input_schema":{"type":"object"},`+anthCC+`}`, `{"name":"b","input_schema":{"type":"object"},`+anthCC+`}`)+
				`"system":[{"type":"text","text":"sys",`+anthCC+`}],`,
			`{"role":"user","content":[{"type":"text","text":"one",`+anthCC+`},{"type":"text","text":"two",`+anthCC+`}]}`)},
			message: "A maximum of 4 blocks with cache_control may be provided. Found 5."},
		{name: "four breakpoints and automatic caching", req: anthRequest{body: anthMsgs(
			`"cache_control":{"type":"ephemeral"},"system":[{"type":"text","text":"sys",`+anthCC+`}],`,
			`{"role":"user","content":[{"type":"text","text":"1",`+anthCC+`},{"type":"text","text":"2",`+anthCC+`},{"type":"text","text":"3",`+anthCC+`}]}`)},
			message: "A maximum of 4 blocks with cache_control may be provided. Found 5."},
		{name: "1h after 5m", req: anthRequest{body: anthMsgs(`"system":[{"type":"text","text":"sys",`+anthCC+`}],`,
			`{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral","ttl":"1h"}}]}`)},
			message: "messages.0.content.0.text.cache_control: a cache_control with ttl '1h' cannot come after one with ttl '5m' (system.0.cache_control)"},
		{name: "unknown ttl", req: anthRequest{body: anthMsgs(`"system":[{"type":"text","text":"sys","cache_control":{"type":"ephemeral","ttl":"10m"}}],`, anthHi)},
			message: "system.0.cache_control.ttl: Input should be '5m' or '1h'"},
		{name: "cache_control type", req: anthRequest{body: anthMsgs(`"system":[{"type":"text","text":"sys","cache_control":{"type":"persistent"}}],`, anthHi)},
			message: "system.0.cache_control.type: Input should be 'ephemeral'"},
		{name: "automatic ttl conflicts with the last block", req: anthRequest{body: anthMsgs(`"cache_control":{"type":"ephemeral","ttl":"5m"},`,
			`{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral","ttl":"1h"}}]}`)},
			message: "the automatic cache_control ttl '5m' conflicts with the ttl '1h'"},
		{name: "cache_control on empty text", req: anthRequest{body: anthMsgs("",
			`{"role":"user","content":[{"type":"text","text":"hi"},{"type":"text","text":"",`+anthCC+`}]}`)},
			message: "messages.0.content.1.text.cache_control: cache_control cannot be set for empty text blocks"},
		{name: "whitespace text", req: anthRequest{body: anthMsgs("", `{"role":"user","content":[{"type":"text","text":"  \n"}]}`)},
			message: "text content blocks must contain non-whitespace text"},
		{name: "system block extra key", req: anthRequest{body: anthMsgs(`"system":[{"type":"text","text":"s","role":"system"}],`, anthHi)},
			message: "system.0.role: Extra inputs are not permitted"},
		{name: "empty content", req: anthRequest{body: anthMsgs("", anthHi, anthOK, `{"role":"user","content":[]}`)},
			message: "messages.2: all messages must have non-empty content except for the optional final assistant message"},
		{name: "unknown role", req: anthRequest{body: anthMsgs("", `{"role":"tool","content":"x"}`)},
			message: "messages.0: Input tag 'tool' found using 'role' does not match any of the expected tags: 'user', 'assistant', 'system'"},
		{name: "message extra key", req: anthRequest{body: anthMsgs("", `{"role":"user","content":"hi","name":"bob"}`)},
			message: "messages.0.name: Extra inputs are not permitted"},
		{name: "content block extra key", req: anthRequest{body: anthMsgs("", `{"role":"user","content":[{"type":"text","text":"hi","lang":"en"}]}`)},
			message: "messages.0.content.0.text.lang: Extra inputs are not permitted"},
		{name: "unknown content block", req: anthRequest{body: anthMsgs("", `{"role":"user","content":[{"type":"video","url":"x"}]}`)},
			message: "messages.0.content.0: Input tag 'video' found using 'type' does not match any of the expected tags"},
		{name: "tool_use in a user message", req: anthRequest{body: anthMsgs("", `{"role":"user","content":[{"type":"tool_use","id":"toolu_1","name":"base","input":{}}]}`)},
			message: "messages.0.content.0: `tool_use` blocks are not allowed in user messages"},
		{name: "cache_control on thinking", req: anthRequest{body: anthMsgs("", anthHi,
			`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"sig",`+anthCC+`},{"type":"text","text":"ok"}]}`, anthHi)},
			message: "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted"},
		{name: "tool_use id pattern", req: anthRequest{body: anthMsgs(tools(anthBaseTool), anthHi,
			`{"role":"assistant","content":[{"type":"tool_use","id":"call.1","name":"base","input":{}}]}`)},
			message: "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"},
		{name: "tool_result id pattern", req: anthRequest{body: anthMsgs(tools(anthBaseTool), anthHi, anthCallBase,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu 1","content":"x"}]}`)},
			message: "messages.2.content.0.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'"},
		{name: "tool_use without tool_result", req: anthRequest{body: anthMsgs(tools(anthBaseTool), anthHi, anthCallBase, anthHi)},
			message: "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{name: "tool_use last", req: anthRequest{body: anthMsgs(tools(anthBaseTool), anthHi, anthCallBase)},
			message: "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1."},
		{name: "unexpected tool_result", req: anthRequest{body: anthMsgs(tools(anthBaseTool), anthHi, anthOK,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}`)},
			message: "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{name: "tool_result after text", req: anthRequest{body: anthMsgs(tools(anthBaseTool), anthHi, anthCallBase,
			`{"role":"user","content":[{"type":"text","text":"here"},{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}`)},
			message: "messages.2.content.1: tool_result blocks must come first"},
		{name: "tool_result after text in a merged message", req: anthRequest{body: anthMsgs(tools(anthBaseTool), anthHi, anthCallBase,
			`{"role":"user","content":"first"}`, anthResult1)},
			message: "messages.3.content.0: tool_result blocks must come first"},
		{name: "tool_choice names an unknown tool", req: anthRequest{body: anthMsgs(tools(anthBaseTool)+`"tool_choice":{"type":"tool","name":"nope"},`, anthHi)},
			message: "tool_choice.tool.name: Tool 'nope' not found"},
		{name: "thinking with forced tool use", req: anthRequest{body: `{"model":"claude-opus-5-5","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":2048},` +
			tools(anthBaseTool) + `"tool_choice":{"type":"any"},"messages":[` + anthHi + `]}`},
			message: "Thinking may not be enabled when tool_choice forces tool use."},
		{name: "thinking budget over max_tokens", req: anthRequest{body: anthMsgs(`"thinking":{"type":"enabled","budget_tokens":2048},`, anthHi)},
			message: "`max_tokens` must be greater than `thinking.budget_tokens`"},
		{name: "system message first", req: anthRequest{body: anthMsgs("", `{"role":"system","content":[{"type":"text","text":"rules"}]}`, anthHi)},
			message: "messages.0: a system message cannot be the first message"},
		{name: "system message after an assistant turn", req: anthRequest{body: anthMsgs("", anthHi, anthOK, sysMsg(`{"type":"text","text":"rules"}`))},
			message: "messages.2: a system message must immediately follow a user message"},
		{name: "system message before a user turn", req: anthRequest{body: anthMsgs("", anthHi, sysMsg(`{"type":"text","text":"a"}`), sysMsg(`{"type":"text","text":"b"}`), anthHi)},
			message: "messages.2: a system message must be the last message or be immediately followed by an assistant message."},
		{name: "system message between tool_use and tool_result", req: anthRequest{body: anthMsgs(tools(anthBaseTool), anthHi, anthCallBase,
			sysMsg(`{"type":"text","text":"rules"}`), anthResult1)},
			message: "messages.2: a system message cannot be placed between a `tool_use` block and its `tool_result` block"},
		{name: "system message on a model without it", req: anthRequest{body: strings.Replace(anthMsgs("", anthHi, sysMsg(`{"type":"text","text":"x"}`)), "claude-opus-5-5", "claude-sonnet-5", 1)},
			message: "messages.1.role: role 'system' is not supported on this model"},
		{name: "system message extra key", req: anthRequest{body: anthMsgs("", anthHi, `{"role":"system","content":[{"type":"text","text":"x"}],"clear_at":"next_user_message"}`)},
			message: "messages.1.clear_at: Extra inputs are not permitted"},
		{name: "tool_addition without a beta", req: anthRequest{body: anthMsgs(tools(anthBaseTool, anthDeferTool), anthHi,
			sysMsg(`{"type":"tool_addition","tool":{"type":"tool_reference","name":"deploy"}}`))},
			message: "messages.1.content.0: Input tag 'tool_addition' found using 'type' does not match any of the expected tags: 'text'"},
		{name: "tool_removal without a beta", req: anthRequest{body: anthMsgs(tools(anthBaseTool), anthHi,
			sysMsg(`{"type":"tool_removal","tool":{"type":"tool_reference","name":"base"}}`))},
			message: "messages.1.content.0: Input tag 'tool_removal' found using 'type' does not match any of the expected tags: 'text'"},
		{name: "tool_definition without the inline-tools beta", req: anthRequest{betas: []string{anthChanges}, body: anthMsgs(tools(anthBaseTool), anthHi,
			sysMsg(`{"type":"tool_addition","tool":{"type":"tool_definition","definition":{"name":"db","input_schema":{"type":"object"}}}}`))},
			message: "messages.1.content.0.tool_addition.tool: Input tag 'tool_definition' found using 'type' does not match any of the expected tags: 'tool_reference', 'mcp_tool_reference', 'mcp_toolset_reference'"},
		{name: "tool_removal of a definition", req: anthRequest{betas: []string{anthInline}, body: anthMsgs(tools(anthBaseTool), anthHi,
			sysMsg(`{"type":"tool_removal","tool":{"type":"tool_definition","definition":{"name":"base","input_schema":{"type":"object"}}}}`))},
			message: "messages.1.content.0.tool_removal.tool: Input tag 'tool_definition' found using 'type' does not match any of the expected tags"},
		{name: "unresolved tool_reference", req: anthRequest{betas: []string{anthChanges}, body: anthMsgs(tools(anthBaseTool), anthHi,
			sysMsg(`{"type":"tool_addition","tool":{"type":"tool_reference","name":"ghost"}}`))},
			message: "messages.1.content.0.tool_addition.tool.tool_reference.name: tool_reference 'ghost' does not match a tool", code: "tool_reference_unresolved"},
		{name: "reference to a later definition", req: anthRequest{betas: []string{anthInline}, body: anthMsgs(tools(anthBaseTool), anthHi,
			sysMsg(`{"type":"tool_addition","tool":{"type":"tool_reference","name":"db"}}`,
				`{"type":"tool_addition","tool":{"type":"tool_definition","definition":{"name":"db","input_schema":{"type":"object"}}}}`))},
			message: "tool_reference 'db' does not match a tool", code: "tool_reference_unresolved"},
		{name: "unresolved tool_reference in a tool_result", req: anthRequest{body: anthMsgs(tools(anthBaseTool), anthHi, anthCallBase,
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"tool_reference","tool_name":"ghost"}]}]}`)},
			message: "messages.2.content.0.tool_result.content.0.tool_reference.tool_name: tool_reference 'ghost'", code: "tool_reference_unresolved"},
		{name: "tool change extra key", req: anthRequest{betas: []string{anthInline}, body: anthMsgs(tools(anthBaseTool), anthHi,
			sysMsg(`{"type":"tool_removal","tool":{"type":"tool_reference","name":"base","server":"x"}}`))},
			message: "messages.1.content.0.tool_removal.tool.tool_reference.server: Extra inputs are not permitted"},
		{name: "inline definition with a bad name", req: anthRequest{betas: []string{anthInline}, body: anthMsgs(tools(anthBaseTool), anthHi,
			sysMsg(`{"type":"tool_addition","tool":{"type":"tool_definition","definition":{"name":"db query","input_schema":{"type":"object"}}}}`))},
			message: "messages.1.content.0.tool_addition.tool.tool_definition.definition.custom.name: String should match pattern"},
		{name: "inline definition conflicting with a server tool", req: anthRequest{betas: []string{anthInline}, body: anthMsgs(
			tools(anthBaseTool, `{"type":"web_search_20260318","name":"web_search"}`), anthHi,
			sysMsg(`{"type":"tool_addition","tool":{"type":"tool_definition","definition":{"name":"web_search","input_schema":{"type":"object"}}}}`))},
			message: "reuses the name of a tool of another type", code: "tool_name_conflict"},
		{name: "deferred inline definition with cache_control", req: anthRequest{betas: []string{anthInline}, body: anthMsgs(tools(anthBaseTool), anthHi,
			sysMsg(`{"type":"tool_addition",`+anthCC+`,"tool":{"type":"tool_definition","definition":{"name":"db","input_schema":{"type":"object"},"defer_loading":true}}}`))},
			message: "Tool 'db' cannot have both defer_loading=true and cache_control set."},
		{name: "cache_control on the block and in the definition", req: anthRequest{betas: []string{anthInline}, body: anthMsgs(tools(anthBaseTool), anthHi,
			sysMsg(`{"type":"tool_addition",`+anthCC+`,"tool":{"type":"tool_definition","definition":{"name":"db","input_schema":{"type":"object"},`+anthCC+`}}}`))},
			message: "cache_control may be set on the tool_addition block or inside its definition, not both"},
		{name: "clear_at message with a tool change", req: anthRequest{betas: []string{anthInline, "mid-conversation-system-clear-at-2026-08-21"}, body: anthMsgs(tools(anthBaseTool), anthHi,
			`{"role":"system","clear_at":"next_user_message","content":[{"type":"tool_removal","tool":{"type":"tool_reference","name":"base"}}]}`)},
			message: "a system message with clear_at 'next_user_message' may only hold text blocks"},
	}
	srv := anthTestServer(t, Config{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := anthSend(t, srv, c.req)
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			status, errType := c.status, c.errType
			if status == 0 {
				status, errType = http.StatusBadRequest, "invalid_request_error"
			}
			var body anthErrorBody
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("status %d, body is not JSON: %v\n%s", resp.StatusCode, err, raw)
			}
			if resp.StatusCode != status || body.Type != "error" || body.Error.Type != errType {
				t.Fatalf("got %d %s/%s, want %d error/%s: %s", resp.StatusCode, body.Type, body.Error.Type, status, errType, raw)
			}
			if !strings.Contains(body.Error.Message, c.message) {
				t.Errorf("message %q\nlacks %q", body.Error.Message, c.message)
			}
			code := ""
			if body.Error.Details != nil {
				code = body.Error.Details.ErrorCode
			}
			if code != c.code {
				t.Errorf("details.error_code = %q, want %q", code, c.code)
			}
			if id := resp.Header.Get("request-id"); id == "" || id != body.RequestID || !strings.HasPrefix(id, "req_emu_") {
				t.Errorf("request-id header %q, body %q", id, body.RequestID)
			}
		})
	}
}

func TestAnthropicCodecWriteError(t *testing.T) {
	cases := []struct {
		err         Error
		wantType    string
		retryAfter  string
		wantDetails bool
	}{
		{Error{Status: 429, Message: "slow down"}, "rate_limit_error", "1", false},
		{Error{Status: 529, Message: "Overloaded"}, "overloaded_error", "", false},
		{Error{Status: 500, Type: "api_error", Code: "server_error", Message: "the responder failed"}, "api_error", "", false},
		{Error{Status: 400, Type: "invalid_request_error", Code: "tool_name_conflict", Message: "x"}, "invalid_request_error", "", true},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		anthropicCodec{}.writeError(rec, &c.err)
		var body anthErrorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%d: %v", c.err.Status, err)
		}
		if rec.Code != c.err.Status || body.Error.Type != c.wantType || body.Error.Message != c.err.Message {
			t.Errorf("%d: got %d %+v", c.err.Status, rec.Code, body)
		}
		if got := rec.Header().Get("retry-after"); got != c.retryAfter {
			t.Errorf("%d: retry-after %q, want %q", c.err.Status, got, c.retryAfter)
		}
		if (body.Error.Details != nil) != c.wantDetails {
			t.Errorf("%d: details %+v, want present: %v", c.err.Status, body.Error.Details, c.wantDetails)
		}
	}
}

// anthSummary names a segment for comparison: what it is, its
// breakpoint (@ttl) and its run (#n).
func anthSummary(s Segment) string {
	var out string
	switch {
	case string(s.Bytes) == anthScaffolding:
		out = "scaffolding"
	case s.ToolDef:
		var def struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(s.Bytes, &def)
		out = "tool " + def.Name
	default:
		for _, role := range []string{"user", "assistant", "system"} {
			if strings.HasPrefix(string(s.Bytes), role+":") {
				out = role + " " + s.Text
			}
		}
		if out != "" {
			break
		}
		var b struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			ToolUseID string `json:"tool_use_id"`
			Thinking  string `json:"thinking"`
			Tool      struct {
				Name string `json:"name"`
			} `json:"tool"`
		}
		_ = json.Unmarshal(s.Bytes, &b)
		out = b.Type + " " + b.ID + b.ToolUseID + b.Thinking + b.Tool.Name
	}
	if s.Breakpoint != "" {
		out += " @" + string(s.Breakpoint)
	}
	if s.Run != 0 {
		out += fmt.Sprintf(" #%d", s.Run)
	}
	return out
}

func anthDecodeFile(t *testing.T, name string, betas ...string) *Exchange {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", "anthropic", name))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("anthropic-version", "2026-10-21")
	for _, b := range betas {
		h.Add("anthropic-beta", b)
	}
	ex, apiErr := anthropicCodec{}.decode(h, body)
	if apiErr != nil {
		t.Fatalf("decode %s: %v", name, apiErr)
	}
	return ex
}

func TestAnthropicCodecDecode(t *testing.T) {
	cases := []struct {
		file     string
		betas    []string
		segments []string
		tools    []string
		turns    []Turn
		auto     TTL
		stream   bool
	}{
		{
			// No deferred tools and no tool changes: no scaffolding.
			// Consecutive user messages merge into one turn.
			file: "plain.json",
			segments: []string{"tool read_file", "tool grep @1h", "system You are a careful assistant. @5m",
				"user Find the config.", "user Quickly please.", "thinking Look for it.", "assistant Looking.",
				"tool_use toolu_01 #1", "tool_use toolu_02 #1", "tool_result toolu_01 #2", "tool_result toolu_02 #2",
				"user Thanks; now summarise. @5m"},
			tools: []string{"read_file", "grep"},
			turns: []Turn{
				{Role: "user", Text: "Find the config.\nQuickly please."},
				{Role: "assistant", Text: "Looking.", Calls: []Call{
					{ID: "toolu_01", Name: "read_file", Arguments: json.RawMessage(`{"path":"config.toml"}`)},
					{ID: "toolu_02", Name: "grep", Arguments: json.RawMessage(`{"pattern":"port"}`)}}},
				{Role: "tool", CallID: "toolu_01", Text: "port = 8080"},
				{Role: "tool", CallID: "toolu_02", Text: "no match", IsError: true},
				{Role: "user", Text: "Thanks; now summarise."},
			},
		},
		{
			// toolshelf's changes class: a deferred placeholder from the
			// first request, then a system message that removes, adds by
			// reference and adds inline.
			file: "changes.json", betas: []string{anthInline}, stream: true,
			segments: []string{"tool base_tool @1h", "scaffolding", "system base prompt @1h", "user hi",
				"assistant Hello.", "user deploy it",
				"system Deployment is allowed now.", "tool_removal base_tool", "tool deploy @5m", "tool db_query @5m"},
			tools: []string{"deploy", "db_query"},
			turns: []Turn{{Role: "user", Text: "hi"}, {Role: "assistant", Text: "Hello."}, {Role: "user", Text: "deploy it"},
				{Role: "system", Text: "Deployment is allowed now."}},
		},
		{
			// A deferred tool, found by a custom tool search: its
			// definition renders inside the tool_result's run.
			file:     "reference.json",
			segments: []string{"tool search_tools", "scaffolding", "user find a deploy tool", "tool_use toolu_s #1", "tool_result toolu_s #2", "tool deploy @5m #2"},
			tools:    []string{"search_tools", "deploy"},
			turns: []Turn{{Role: "user", Text: "find a deploy tool"},
				{Role: "assistant", Calls: []Call{{ID: "toolu_s", Name: "search_tools", Arguments: json.RawMessage(`{"query":"deploy"}`)}}},
				{Role: "tool", CallID: "toolu_s", Text: "1 tool found"}},
			auto: "5m",
		},
		{
			// Tool changes by reference only (the older beta); a
			// clear_at message past its user turn renders nothing; an
			// effort-only system message sits anywhere; a same-name
			// definition replaces in place.
			file: "redefine.json", betas: []string{anthInline, "mid-conversation-system-clear-at-2026-08-21", "mid-conversation-output-config-2026-07-01"},
			segments: []string{"tool a", "tool b", "scaffolding", "user one", "assistant two", "user three",
				"tool a", "assistant four", "user five"},
			tools: []string{"a", "b"},
			turns: []Turn{{Role: "user", Text: "one"}, {Role: "assistant", Text: "two"}, {Role: "user", Text: "three"},
				{Role: "system"}, {Role: "assistant", Text: "four"}, {Role: "user", Text: "five"}},
			auto: "1h",
		},
		{
			// Every tool deferred (accepted with the inline-tools beta): a
			// tool added by reference after the user turn, called, then
			// removed after the turn holding only its result.
			file: "all_deferred.json", betas: []string{anthInline},
			segments: []string{"scaffolding", "user deploy please", "tool deploy", "tool_use toolu_d #1", "tool_result toolu_d #2",
				"system Deploy finished; the tool is withdrawn.", "tool_removal deploy @5m"},
			turns: []Turn{{Role: "user", Text: "deploy please"}, {Role: "system"},
				{Role: "assistant", Calls: []Call{{ID: "toolu_d", Name: "deploy", Arguments: json.RawMessage(`{"env":"prod"}`)}}},
				{Role: "tool", CallID: "toolu_d", Text: "deployed"}, {Role: "system", Text: "Deploy finished; the tool is withdrawn."}},
		},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			ex := anthDecodeFile(t, c.file, c.betas...)
			var segs []string
			for _, s := range ex.Segments {
				segs = append(segs, anthSummary(s))
			}
			if diff := cmp.Diff(c.segments, segs); diff != "" {
				t.Errorf("segments (-want +got):\n%s", diff)
			}
			var tools []string
			for _, td := range ex.Tools {
				tools = append(tools, td.Name)
			}
			if diff := cmp.Diff(c.tools, tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.turns, ex.Turns); diff != "" {
				t.Errorf("turns (-want +got):\n%s", diff)
			}
			if ex.AutoBreakpoint != c.auto || ex.Stream != c.stream || ex.API != AnthropicMessages || ex.Namespace != "" {
				t.Errorf("auto %q stream %v api %q namespace %q", ex.AutoBreakpoint, ex.Stream, ex.API, ex.Namespace)
			}
		})
	}
}

// An added tool's definition is identical whether it was deferred at the
// top level or defined inline, and identical to the tools entry it
// replaces in render: markers and defer_loading are not part of it.
func TestAnthropicCodecToolBytes(t *testing.T) {
	ex := anthDecodeFile(t, "changes.json", anthInline)
	var deploy, base []byte
	for _, s := range ex.Segments {
		switch anthSummary(s) {
		case "tool deploy @5m":
			deploy = s.Bytes
		case "tool base_tool @1h":
			base = s.Bytes
		}
	}
	want := `{"description":"Deploy the service.","input_schema":{"properties":{"env":{"type":"string"}},"type":"object"},"name":"deploy"}`
	if string(deploy) != want {
		t.Errorf("deploy renders as %s, want %s", deploy, want)
	}
	if strings.Contains(string(base), "cache_control") {
		t.Errorf("base_tool's bytes keep the marker: %s", base)
	}
	if got := ex.Tools[0].Parameters; string(got) != `{"properties":{"env":{"type":"string"}},"type":"object"}` {
		t.Errorf("deploy's parameters = %s", got)
	}
}

// Key order and JSON spacing change nothing: the segments are the same.
func TestAnthropicCodecKeyOrder(t *testing.T) {
	a := `{"model":"claude-opus-5-5","max_tokens":10,"tools":[{"name":"t","description":"d","input_schema":{"type":"object","properties":{"x":{"type":"string"}}}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}`
	b := `{ "messages": [ {"content": [{"cache_control": {"type": "ephemeral"}, "text": "hi", "type": "text"}], "role": "user"} ],
		"tools": [{"input_schema": {"properties": {"x": {"type": "string"}}, "type": "object"}, "description": "d", "name": "t"}],
		"max_tokens": 10, "model": "claude-opus-5-5" }`
	h := http.Header{"Anthropic-Version": {"2023-06-01"}}
	exA, errA := anthropicCodec{}.decode(h, []byte(a))
	exB, errB := anthropicCodec{}.decode(h, []byte(b))
	if errA != nil || errB != nil {
		t.Fatalf("decode: %v, %v", errA, errB)
	}
	if diff := cmp.Diff(exA.Segments, exB.Segments); diff != "" {
		t.Errorf("segments differ (-a +b):\n%s", diff)
	}
}

// The raw event stream: each frame's event name matches its data's type,
// in the documented order, with the first input_json_delta empty and
// every delta concatenating to the reply.
func TestAnthropicCodecStreamFrames(t *testing.T) {
	ex := &Exchange{API: AnthropicMessages, Model: "claude-opus-5-5", Stream: true, Seq: 7, MaxTokens: 100}
	reply := &Reply{Thinking: "Think first.", Text: "Hello there, how are you today?",
		Calls: []Call{{Name: "a", Arguments: json.RawMessage(`{"x": "é€"}`)}, {Name: "b"}}}
	u := Usage{Input: 1000, CacheRead: 600, CacheWrite: 300, CacheWriteShort: 100, CacheWriteLong: 200, Output: 40}
	rec := httptest.NewRecorder()
	anthropicCodec{}.writeReply(rec, ex, reply, u)
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" || rec.Header().Get("request-id") != "req_emu_7" {
		t.Fatalf("headers = %v", rec.Header())
	}
	var names []string
	var text, thinking, signature string
	args := map[int]string{}
	firstFragment := map[int]*string{}
	var start, final map[string]any
	for frame := range strings.SplitSeq(strings.TrimSuffix(rec.Body.String(), "\n\n"), "\n\n") {
		event, data, ok := strings.Cut(frame, "\ndata: ")
		if !ok || !strings.HasPrefix(event, "event: ") {
			t.Fatalf("bad frame %q", frame)
		}
		var d struct {
			Type    string         `json:"type"`
			Index   int            `json:"index"`
			Message map[string]any `json:"message"`
			Usage   map[string]any `json:"usage"`
			Delta   struct {
				Type        string  `json:"type"`
				Text        string  `json:"text"`
				Thinking    string  `json:"thinking"`
				Signature   string  `json:"signature"`
				PartialJSON *string `json:"partial_json"`
				StopReason  string  `json:"stop_reason"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(data), &d); err != nil || "event: "+d.Type != event {
			t.Fatalf("frame %q: %v", frame, err)
		}
		names = append(names, d.Type)
		switch d.Type {
		case "message_start":
			start = d.Message
		case "message_delta":
			final = d.Usage
			if d.Delta.StopReason != "tool_use" {
				t.Errorf("stop_reason %q", d.Delta.StopReason)
			}
		case "content_block_delta":
			text += d.Delta.Text
			thinking += d.Delta.Thinking
			signature += d.Delta.Signature
			if d.Delta.PartialJSON != nil {
				if firstFragment[d.Index] == nil {
					firstFragment[d.Index] = d.Delta.PartialJSON
				}
				args[d.Index] += *d.Delta.PartialJSON
			}
		}
	}
	compact := strings.Join(names, " ")
	want := "message_start ping " +
		"content_block_start content_block_delta content_block_delta content_block_delta content_block_stop " + // thinking: 2 chunks, signature
		"content_block_start content_block_delta content_block_delta content_block_delta content_block_delta content_block_stop " + // text: 4 chunks
		"content_block_start content_block_delta content_block_delta content_block_delta content_block_delta content_block_stop " + // a: "", 3 fragments
		"content_block_start content_block_delta content_block_delta content_block_delta content_block_stop " + // b: "", "{", "}"
		"message_delta message_stop"
	if compact != want {
		t.Errorf("events:\n%s\nwant\n%s", compact, want)
	}
	if text != reply.Text || thinking != reply.Thinking || signature != anthSignature(reply.Thinking) {
		t.Errorf("text %q thinking %q signature %q", text, thinking, signature)
	}
	if args[2] != `{"x":"é€"}` || args[3] != `{}` || *firstFragment[2] != "" || *firstFragment[3] != "" {
		t.Errorf("arguments %v, first fragments %q %q", args, *firstFragment[2], *firstFragment[3])
	}
	usage, _ := start["usage"].(map[string]any)
	wantStart := map[string]any{"input_tokens": 100.0, "cache_read_input_tokens": 600.0, "cache_creation_input_tokens": 300.0,
		"cache_creation": map[string]any{"ephemeral_5m_input_tokens": 100.0, "ephemeral_1h_input_tokens": 200.0},
		"output_tokens":  1.0, "service_tier": "standard"}
	if diff := cmp.Diff(wantStart, usage); diff != "" || start["id"] != "msg_emu_7" || start["stop_reason"] != nil {
		t.Errorf("message_start %v; usage (-want +got):\n%s", start, diff)
	}
	wantFinal := map[string]any{"input_tokens": 100.0, "cache_read_input_tokens": 600.0, "cache_creation_input_tokens": 300.0, "output_tokens": 40.0}
	if diff := cmp.Diff(wantFinal, final); diff != "" {
		t.Errorf("message_delta usage (-want +got):\n%s", diff)
	}
}

// A non-streaming reply: end_turn for text, max_tokens past the bound,
// broken arguments replaced by an empty object.
func TestAnthropicCodecMessageReply(t *testing.T) {
	cases := []struct {
		reply Reply
		max   int
		out   int
		stop  string
		input string
	}{
		{Reply{Text: "hi"}, 100, 3, "end_turn", ""},
		{Reply{Text: "a long answer"}, 2, 3, "max_tokens", ""},
		{Reply{Calls: []Call{{Name: "f", Arguments: json.RawMessage(`{"cut":`)}}}, 100, 3, "tool_use", "{}"},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		anthropicCodec{}.writeReply(rec, &Exchange{Model: "m", Seq: 3, MaxTokens: c.max}, &c.reply, Usage{Input: 10, Output: c.out})
		var m struct {
			Type       string `json:"type"`
			Role       string `json:"role"`
			StopReason string `json:"stop_reason"`
			Content    []struct {
				Type  string          `json:"type"`
				ID    string          `json:"id"`
				Input json.RawMessage `json:"input"`
			} `json:"content"`
			Usage struct {
				InputTokens int `json:"input_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", rec.Body, err)
		}
		if m.Type != "message" || m.Role != "assistant" || m.StopReason != c.stop || m.Usage.InputTokens != 10 {
			t.Errorf("reply %+v: %s", c.reply, rec.Body)
		}
		if c.input != "" && (string(m.Content[0].Input) != c.input || m.Content[0].ID != "toolu_emu_1_1") {
			t.Errorf("tool_use = %+v", m.Content[0])
		}
	}
}
