package emulator

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The betas and fields current clients send, which the real API accepts:
// each request here must be answered 200. The Claude Code cases are the
// shape Claude Code 2.1.332 sends in -p mode (headers and fields as it
// sends them, its long texts shortened).
func TestAnthropicCodecClientBetas(t *testing.T) {
	const (
		ccBetas = "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27," +
			"per-turn-control-2026-07-01,mid-conversation-tool-changes-2026-07-01,thinking-token-count-2026-05-13,effort-2025-11-24"
		ccUser   = `{"role":"user","content":[{"type":"text","text":"<system-reminder>\nattribution\n</system-reminder>\n"},{"type":"text","text":"say hello"}]}`
		ccEnv    = `{"role":"system","content":[{"type":"text","text":"# Environment\nworking directory","cache_control":{"type":"ephemeral"}}],"output_config":{"effort":"medium"}}`
		ccTop    = `"thinking":{"type":"adaptive","display":"omitted"},"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]},"output_config":{"effort":"medium"},"stream":true,`
		ccSystem = `"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.332; cc_entrypoint=sdk-cli;"},{"type":"text","text":"You are a Claude agent.","cache_control":{"type":"ephemeral"}}],`
		ccMeta   = `"metadata":{"user_id":"{\"device_id\":\"d\",\"account_uuid\":\"\",\"session_id\":\"s\"}"},"max_tokens":128000,`
		ccTools  = `"tools":[{"name":"mcp__toolshelf__tool_search","description":"Search the shelf","input_schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"query":{"type":"string"}},"required":["query"],"additionalProperties":false}}],`
		safe     = `"safeguards":[{"type":"dangerous_tool_use","classifier_context":{"v":1,"permission_mode":"auto","rules":{"allow":[],"deny":[],"ask":[]}}}],`
	)
	cc := func(extra string, msgs ...string) string {
		return `{"model":"claude-opus-5-5","messages":[` + strings.Join(msgs, ",") + `],` + ccSystem + ccTools + ccMeta + extra + strings.TrimSuffix(ccTop, ",") + `}`
	}
	cases := []struct {
		name string
		req  anthRequest
	}{
		{"Claude Code's first request", anthRequest{betas: []string{ccBetas}, body: cc("", ccUser, ccEnv)}},
		{"Claude Code in a long session", anthRequest{betas: []string{ccBetas + ",fallback-credit-2026-06-01"}, body: cc("", ccUser, ccEnv)}},
		{"Claude Code in auto mode", anthRequest{betas: []string{ccBetas + ",dangerous-tool-use-2026-09-03,afk-mode-2026-01-31"}, body: cc(safe, ccUser, ccEnv)}},
		{"Claude Code with stream-json output", anthRequest{betas: []string{ccBetas + ",thinking-display-updates-2026-08-18"},
			body: strings.Replace(cc("", ccUser, ccEnv), `"display":"omitted"`, `"display":"updates"`, 1)}},
		{"Claude Code's follow-up after a tool call", anthRequest{betas: []string{ccBetas}, body: cc("", ccUser, ccEnv,
			`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_emu_1_1","name":"mcp__toolshelf__tool_search","input":{"query":"read a file"}}]}`,
			`{"role":"user","content":[{"tool_use_id":"toolu_emu_1_1","type":"tool_result","content":"1 tool found","is_error":false}]}`,
			`{"role":"system","content":[{"type":"text","text":"<total_tokens>N tokens left</total_tokens>"}]}`)}},
		{"top-level effort with its beta", anthRequest{betas: []string{"effort-2025-11-24"}, body: anthMsgs(`"output_config":{"effort":"low"},`, anthHi)}},
		{"per-turn effort on an effort-only system message", anthRequest{betas: []string{"per-turn-control-2026-07-01"},
			body: anthMsgs(`"output_config":{"effort":"high"},`, anthHi, anthOK, `{"role":"system","content":[],"output_config":{"effort":"low"}}`, anthHi)}},
		{"opencode's structured-outputs beta, with a strict tool", anthRequest{betas: []string{"structured-outputs-2025-11-13,fine-grained-tool-streaming-2025-05-14"},
			body: `{"model":"claude-sonnet-4-5","max_tokens":4096,"tools":[{"name":"read","description":"Read a file","strict":true,"input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}}],"messages":[` + anthHi + `]}`}},
		{"betas opencode and Claude Code send for features they may use", anthRequest{betas: []string{
			"advisor-tool-2026-03-01,task-budgets-2026-03-13,compact-2026-01-12,skills-2025-10-02,code-execution-2025-05-22,context-1m-2025-08-07"},
			body: anthMsgs("", anthHi)}},
		{"thinking token counts", anthRequest{betas: []string{"thinking-token-count-2026-05-13"},
			body: `{"model":"claude-opus-5-5","max_tokens":4096,"thinking":{"type":"adaptive","display":"omitted"},"messages":[` + anthHi + `]}`}},
	}
	srv := anthTestServer(t, Config{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := anthSend(t, srv, c.req)
			raw, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, raw)
			}
		})
	}
}

// The fields those betas enable are refused without them, and malformed
// values are refused with them, in the API's words.
func TestAnthropicCodecClientBetaFields(t *testing.T) {
	const (
		safeBeta = "dangerous-tool-use-2026-09-03"
		perTurn  = "per-turn-control-2026-07-01"
	)
	safe := func(v string) string { return `"safeguards":` + v + `,` }
	effortMsg := func(v string) string { return `{"role":"system","content":[],"output_config":` + v + `}` }
	cases := []struct {
		name    string
		req     anthRequest
		message string
	}{
		{"safeguards without their beta", anthRequest{body: anthMsgs(safe(`[{"type":"dangerous_tool_use","classifier_context":{}}]`), anthHi)},
			"safeguards: Extra inputs are not permitted"},
		{"safeguards not a list", anthRequest{betas: []string{safeBeta}, body: anthMsgs(safe(`{"type":"dangerous_tool_use"}`), anthHi)},
			"safeguards: Input should be a valid list"},
		{"a safeguard not an object", anthRequest{betas: []string{safeBeta}, body: anthMsgs(safe(`["dangerous_tool_use"]`), anthHi)},
			"safeguards.0: Input should be a valid dictionary"},
		{"a safeguard without a type", anthRequest{betas: []string{safeBeta}, body: anthMsgs(safe(`[{"classifier_context":{}}]`), anthHi)},
			"safeguards.0: Unable to extract tag using discriminator 'type'"},
		{"an unknown safeguard", anthRequest{betas: []string{safeBeta}, body: anthMsgs(safe(`[{"type":"prompt_injection"}]`), anthHi)},
			"safeguards.0: Input tag 'prompt_injection' found using 'type' does not match any of the expected tags: 'dangerous_tool_use'"},
		{"a safeguard's context not an object", anthRequest{betas: []string{safeBeta}, body: anthMsgs(safe(`[{"type":"dangerous_tool_use","classifier_context":"auto"}]`), anthHi)},
			"safeguards.0.dangerous_tool_use.classifier_context: Input should be a valid dictionary"},
		{"a safeguard's extra key", anthRequest{betas: []string{safeBeta}, body: anthMsgs(safe(`[{"type":"dangerous_tool_use","mode":"auto"}]`), anthHi)},
			"safeguards.0.dangerous_tool_use.mode: Extra inputs are not permitted"},
		{"an unknown field with a beta that changes nothing", anthRequest{betas: []string{"structured-outputs-2025-11-13,task-budgets-2026-03-13"},
			body: anthMsgs(`"task_budget":{"total":1000},`, anthHi)}, "task_budget: Extra inputs are not permitted"},
		{"per-turn effort without a beta", anthRequest{body: anthMsgs("", anthHi, anthOK, effortMsg(`{"effort":"low"}`), anthHi)},
			"messages.2.output_config: Extra inputs are not permitted"},
		{"per-turn effort of an unknown level", anthRequest{betas: []string{perTurn}, body: anthMsgs("", anthHi, anthOK, effortMsg(`{"effort":"extreme"}`), anthHi)},
			"messages.2.output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"},
		{"per-turn output_config with a format", anthRequest{betas: []string{perTurn}, body: anthMsgs("", anthHi, anthOK, effortMsg(`{"effort":"low","format":{}}`), anthHi)},
			"messages.2.output_config.format: Extra inputs are not permitted"},
		{"top-level effort of an unknown level", anthRequest{betas: []string{"effort-2025-11-24"}, body: anthMsgs(`"output_config":{"effort":"turbo"},`, anthHi)},
			"output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"},
	}
	srv := anthTestServer(t, Config{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := anthSend(t, srv, c.req)
			var body anthErrorBody
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusBadRequest || body.Error.Type != "invalid_request_error" || !strings.Contains(body.Error.Message, c.message) {
				t.Errorf("got %d %s %q, want 400 invalid_request_error with %q", resp.StatusCode, body.Error.Type, body.Error.Message, c.message)
			}
		})
	}
}
