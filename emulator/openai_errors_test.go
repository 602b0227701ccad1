package emulator_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/emulator"
)

// oaiServer starts an emulator with cfg behind an httptest server.
func oaiServer(t *testing.T, cfg emulator.Config) *httptest.Server {
	t.Helper()
	s, err := emulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// oaiPost sends a body to a path with a bearer key (none when key is
// empty) and returns the status and body.
func oaiPost(t *testing.T, url, key, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// oaiErrorBody is the error shape of both OpenAI APIs.
type oaiErrorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

const (
	oaiResponses = "/v1/responses"
	oaiChat      = "/v1/chat/completions"
)

// Request pieces the cases share.
const (
	oaiFn      = `{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}`
	oaiChatFn  = `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}`
	oaiUserMsg = `{"role":"user","content":"hi"}`
)

func TestOpenAIInvalidRequests(t *testing.T) {
	ts := oaiServer(t, emulator.Config{})
	long := strings.Repeat("x", 65)
	cases := []struct {
		name, path, body string
		noKey            bool
		status           int
		typ, code, param string
		message          string
	}{
		// Responses.
		{name: "responses malformed JSON", path: oaiResponses, body: `{"model": "gpt-5.6-sol", "input": `,
			status: 400, typ: "invalid_request_error", message: "could not parse the JSON body"},
		{name: "responses trailing data", path: oaiResponses, body: `{"model":"gpt-5.6-sol","input":"hi"} x`,
			status: 400, typ: "invalid_request_error", message: "unexpected data after the top-level value"},
		{name: "responses body not an object", path: oaiResponses, body: `[1,2]`,
			status: 400, typ: "invalid_request_error", message: "not valid JSON: the body is an array"},
		{name: "responses no key", path: oaiResponses, body: `{}`, noKey: true,
			status: 401, typ: "invalid_request_error", code: "invalid_api_key", message: "No API key provided"},
		{name: "responses unknown top-level parameter", path: oaiResponses, body: `{"model":"gpt-5.6-sol","input":"hi","temprature":1}`,
			status: 400, typ: "invalid_request_error", code: "unknown_parameter", param: "temprature", message: "Unknown parameter: 'temprature'."},
		{name: "responses unknown item parameter", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":[` + oaiUserMsg + `,{"role":"user","content":"x","action":{"query":"q"}}]}`,
			status: 400, typ: "invalid_request_error", code: "unknown_parameter", param: "input[1].action", message: "Unknown parameter: 'input[1].action'."},
		{name: "responses unknown part parameter", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":[{"role":"user","content":[{"type":"input_text","text":"x","cache_control":{"type":"ephemeral"}}]}]}`,
			status: 400, typ: "invalid_request_error", code: "unknown_parameter", param: "input[0].content[0].cache_control", message: "Unknown parameter: 'input[0].content[0].cache_control'."},
		{name: "responses missing model", path: oaiResponses, body: `{"input":"hi"}`,
			status: 400, typ: "invalid_request_error", code: "missing_required_parameter", param: "model", message: "Missing required parameter: 'model'."},
		{name: "responses missing call arguments", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":[` + oaiUserMsg + `,{"type":"function_call","call_id":"call_1","name":"get_weather"}]}`,
			status: 400, typ: "invalid_request_error", code: "missing_required_parameter", param: "input[1].arguments", message: "Missing required parameter: 'input[1].arguments'."},
		{name: "responses wrong type", path: oaiResponses, body: `{"model":"gpt-5.6-sol","input":"hi","max_output_tokens":"100"}`,
			status: 400, typ: "invalid_request_error", code: "invalid_type", param: "max_output_tokens",
			message: "Invalid type for 'max_output_tokens': expected an integer, but got a string instead."},
		{name: "responses below minimum", path: oaiResponses, body: `{"model":"gpt-5.6-sol","input":"hi","max_output_tokens":8}`,
			status: 400, typ: "invalid_request_error", code: "integer_below_min_value", param: "max_output_tokens", message: "Expected a value >= 16, but got 8 instead."},
		{name: "responses above maximum", path: oaiResponses, body: `{"model":"gpt-5.6-sol","input":"hi","temperature":3}`,
			status: 400, typ: "invalid_request_error", code: "decimal_above_max_value", param: "temperature", message: "Expected a value <= 2, but got 3 instead."},
		{name: "responses bad enum", path: oaiResponses, body: `{"model":"gpt-5.6-sol","input":"hi","tool_choice":"sometimes"}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "tool_choice",
			message: "Invalid value: 'sometimes'. Supported values are: 'none', 'auto', and 'required'."},
		{name: "responses unknown item type", path: oaiResponses, body: `{"model":"gpt-5.6-sol","input":[{"type":"web_search_call","id":"ws_1"}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "input[0].type", message: "Invalid value: 'web_search_call'."},
		{name: "responses assistant input_text", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":[{"role":"assistant","content":[{"type":"input_text","text":"x"}]}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "input[0].content[0].type",
			message: "Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'."},
		{name: "responses tool name pattern", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":"hi","tools":[` + oaiFn + `,{"type":"function","name":"crm.search"}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "tools[1].name",
			message: "Invalid 'tools[1].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."},
		{name: "responses tool name too long", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":"hi","tools":[{"type":"function","name":"` + long + `"}]}`,
			status: 400, typ: "invalid_request_error", code: "string_above_max_length", param: "tools[0].name",
			message: "Invalid 'tools[0].name': string too long. Expected a string with maximum length 64, but got a string with length 65 instead."},
		{name: "responses duplicate tool name", path: oaiResponses, body: `{"model":"gpt-5.6-sol","input":"hi","tools":[` + oaiFn + `,` + oaiFn + `]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "tools[1].name", message: "duplicate tool name 'get_weather'"},
		{name: "responses parameters not an object", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":"hi","tools":[{"type":"function","name":"f","parameters":"{}"}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_type", param: "tools[0].parameters",
			message: "Invalid type for 'tools[0].parameters': expected an object, but got a string instead."},
		{name: "responses parameters not an object schema", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":"hi","tools":[{"type":"function","name":"f","parameters":{"type":"string"}}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_function_parameters", param: "tools[0].parameters",
			message: `Invalid schema for function 'f': schema must be a JSON Schema of 'type: "object"', got 'type: "string"'.`},
		{name: "responses strict schema", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":"hi","tools":[{"type":"function","name":"f","strict":true,"parameters":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_function_parameters", param: "tools[0].parameters",
			message: "In context=(), 'additionalProperties' is required to be supplied and to be false."},
		{name: "responses call without output", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":[` + oaiUserMsg + `,{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{}"}]}`,
			status: 400, typ: "invalid_request_error", param: "input", message: "No tool output found for function call call_1."},
		{name: "responses output without call", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":[` + oaiUserMsg + `,{"type":"function_call_output","call_id":"call_9","output":"x"}]}`,
			status: 400, typ: "invalid_request_error", param: "input", message: "No tool call found for function call output with call_id call_9."},
		{name: "responses output before its call", path: oaiResponses,
			body: `{"model":"gpt-5.6-sol","input":[` + oaiUserMsg + `,{"type":"function_call_output","call_id":"call_1","output":"x"},` +
				`{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{}"}]}`,
			status: 400, typ: "invalid_request_error", param: "input", message: "No tool call found for function call output with call_id call_1."},
		{name: "responses tool search output without call", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":[` + oaiUserMsg + `,{"type":"tool_search_output","call_id":"ts_1","execution":"client","tools":[` + oaiFn + `]}]}`,
			status: 400, typ: "invalid_request_error", param: "input", message: "No tool search call found for tool search output with call_id ts_1."},
		{name: "responses additional tools role", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":[` + oaiUserMsg + `,{"type":"additional_tools","role":"user","tools":[` + oaiFn + `]}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "input[1].role", message: "Supported values are: 'developer'."},
		{name: "responses breakpoint on additional tools", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":[` + oaiUserMsg + `,{"type":"additional_tools","role":"developer","tools":[` + oaiFn + `],"prompt_cache_breakpoint":{"mode":"explicit"}}]}`,
			status: 400, typ: "invalid_request_error", code: "unknown_parameter", param: "input[1].prompt_cache_breakpoint"},
		{name: "responses previous response", path: oaiResponses, body: `{"model":"gpt-5.6-sol","input":"hi","previous_response_id":"resp_1"}`,
			status: 400, typ: "invalid_request_error", code: "previous_response_not_found", param: "previous_response_id",
			message: "The emulator stores no responses"},
		{name: "responses stream options without stream", path: oaiResponses, body: `{"model":"gpt-5.6-sol","input":"hi","stream_options":{}}`,
			status: 400, typ: "invalid_request_error", param: "stream_options", message: "only allowed when 'stream' is enabled"},
		{name: "responses tool choice not a tool", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":"hi","tools":[` + oaiFn + `],"tool_choice":{"type":"function","name":"get_time"}}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "tool_choice", message: "Tool choice 'get_time' not found in 'tools' parameter."},
		{name: "responses breakpoint ttl", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":[{"role":"user","content":[{"type":"input_text","text":"x","prompt_cache_breakpoint":{"mode":"explicit","ttl":"1h"}}]}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "input[0].content[0].prompt_cache_breakpoint.ttl",
			message: "Invalid value: '1h'. Supported values are: '30m' and '12h'."},
		{name: "responses too many metadata keys", path: oaiResponses,
			body:   `{"model":"gpt-5.6-sol","input":"hi","metadata":{"a":"","b":"","c":"","d":"","e":"","f":"","g":"","h":"","i":"","j":"","k":"","l":"","m":"","n":"","o":"","p":"","q":""}}`,
			status: 400, typ: "invalid_request_error", code: "object_above_max_properties", param: "metadata", message: "at most 16 properties"},

		// Chat Completions.
		{name: "chat malformed JSON", path: oaiChat, body: `{"model":"gpt-5.6-sol",}`,
			status: 400, typ: "invalid_request_error", message: "could not parse the JSON body"},
		{name: "chat unknown message parameter", path: oaiChat, body: `{"model":"gpt-5.6-sol","messages":[{"role":"user","content":"hi","cache_control":{}}]}`,
			status: 400, typ: "invalid_request_error", code: "unknown_parameter", param: "messages[0].cache_control", message: "Unknown parameter: 'messages[0].cache_control'."},
		{name: "chat missing messages", path: oaiChat, body: `{"model":"gpt-5.6-sol"}`,
			status: 400, typ: "invalid_request_error", code: "missing_required_parameter", param: "messages", message: "Missing required parameter: 'messages'."},
		{name: "chat empty messages", path: oaiChat, body: `{"model":"gpt-5.6-sol","messages":[]}`,
			status: 400, typ: "invalid_request_error", code: "empty_array", param: "messages", message: "Expected an array with minimum length 1"},
		{name: "chat bad role", path: oaiChat, body: `{"model":"gpt-5.6-sol","messages":[{"role":"function","content":"x"}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "messages[0].role",
			message: "Invalid value: 'function'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'."},
		{name: "chat wrong content type", path: oaiChat, body: `{"model":"gpt-5.6-sol","messages":[{"role":"user","content":42}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_type", param: "messages[0].content",
			message: "Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an integer instead."},
		{name: "chat wrong type", path: oaiChat, body: `{"model":"gpt-5.6-sol","messages":[` + oaiUserMsg + `],"max_completion_tokens":"5"}`,
			status: 400, typ: "invalid_request_error", code: "invalid_type", param: "max_completion_tokens"},
		{name: "chat tool name pattern", path: oaiChat,
			body:   `{"model":"gpt-5.6-sol","messages":[` + oaiUserMsg + `],"tools":[` + oaiChatFn + `,{"type":"function","function":{"name":"read file"}}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "tools[1].function.name",
			message: "Invalid 'tools[1].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."},
		{name: "chat tool name too long", path: oaiChat,
			body:   `{"model":"gpt-5.6-sol","messages":[` + oaiUserMsg + `],"tools":[{"type":"function","function":{"name":"` + long + `"}}]}`,
			status: 400, typ: "invalid_request_error", code: "string_above_max_length", param: "tools[0].function.name", message: "maximum length 64"},
		{name: "chat duplicate tool name", path: oaiChat, body: `{"model":"gpt-5.6-sol","messages":[` + oaiUserMsg + `],"tools":[` + oaiChatFn + `,` + oaiChatFn + `]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "tools[1].function.name", message: "duplicate tool name 'get_weather'"},
		{name: "chat parameters not an object", path: oaiChat,
			body:   `{"model":"gpt-5.6-sol","messages":[` + oaiUserMsg + `],"tools":[{"type":"function","function":{"name":"f","parameters":[]}}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_type", param: "tools[0].function.parameters", message: "expected an object, but got an array instead"},
		{name: "chat system tools name", path: oaiChat,
			body:   `{"model":"kimi-k3","messages":[` + oaiUserMsg + `,{"role":"system","tools":[{"type":"function","function":{"name":"a/b"}}]}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "messages[1].tools[0].function.name", message: "string does not match pattern"},
		{name: "chat tool calls without results", path: oaiChat,
			body: `{"model":"gpt-5.6-sol","messages":[` + oaiUserMsg + `,{"role":"assistant","tool_calls":[` +
				`{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}},` +
				`{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"call_1","content":"sunny"},` + oaiUserMsg + `]}`,
			status: 400, typ: "invalid_request_error", param: "messages.[1].role",
			message: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2"},
		{name: "chat tool calls at the end", path: oaiChat,
			body: `{"model":"gpt-5.6-sol","messages":[` + oaiUserMsg + `,{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}]}`,
			status: 400, typ: "invalid_request_error", param: "messages.[1].role", message: "did not have response messages: call_1"},
		{name: "chat orphan tool message", path: oaiChat,
			body:   `{"model":"gpt-5.6-sol","messages":[` + oaiUserMsg + `,{"role":"tool","tool_call_id":"call_1","content":"sunny"}]}`,
			status: 400, typ: "invalid_request_error", param: "messages.[1].role",
			message: "Invalid parameter: messages with role 'tool' must be a response to a preceding message with 'tool_calls'."},
		{name: "chat assistant without content", path: oaiChat, body: `{"model":"gpt-5.6-sol","messages":[` + oaiUserMsg + `,{"role":"assistant"}]}`,
			status: 400, typ: "invalid_request_error", code: "missing_required_parameter", param: "messages[1].content"},
		{name: "chat several choices", path: oaiChat, body: `{"model":"gpt-5.6-sol","messages":[` + oaiUserMsg + `],"n":2}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "n", message: "one choice"},
		{name: "chat stream options without stream", path: oaiChat,
			body:   `{"model":"gpt-5.6-sol","messages":[` + oaiUserMsg + `],"stream_options":{"include_usage":true}}`,
			status: 400, typ: "invalid_request_error", param: "stream_options", message: "The 'stream_options' parameter is only allowed when 'stream' is enabled."},
		{name: "chat breakpoint ttl", path: oaiChat,
			body:   `{"model":"gpt-5.6-sol","messages":[{"role":"user","content":[{"type":"text","text":"x","prompt_cache_breakpoint":{"mode":"explicit","ttl":"12h"}}]}]}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "messages[0].content[0].prompt_cache_breakpoint.ttl",
			message: "Supported values are: '30m'."},
		{name: "chat tool choice not a tool", path: oaiChat,
			body:   `{"model":"gpt-5.6-sol","messages":[` + oaiUserMsg + `],"tools":[` + oaiChatFn + `],"tool_choice":{"type":"function","function":{"name":"nope"}}}`,
			status: 400, typ: "invalid_request_error", code: "invalid_value", param: "tool_choice.function.name", message: "Tool choice 'nope' not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := "test"
			if c.noKey {
				key = ""
			}
			status, body := oaiPost(t, ts.URL+c.path, key, c.body)
			if status != c.status {
				t.Fatalf("status %d, want %d; body %s", status, c.status, body)
			}
			var e oaiErrorBody
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("error body %s: %v", body, err)
			}
			got := e.Error
			if got.Type != c.typ {
				t.Errorf("type %q, want %q", got.Type, c.typ)
			}
			if c.code == "" && got.Code != nil || c.code != "" && (got.Code == nil || *got.Code != c.code) {
				t.Errorf("code %v, want %q", oaiDeref(got.Code), c.code)
			}
			if c.param == "" && got.Param != nil || c.param != "" && (got.Param == nil || *got.Param != c.param) {
				t.Errorf("param %v, want %q", oaiDeref(got.Param), c.param)
			}
			if !strings.Contains(got.Message, c.message) {
				t.Errorf("message %q, want it to contain %q", got.Message, c.message)
			}
		})
	}
}

func oaiDeref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func TestOpenAIServerErrors(t *testing.T) {
	ts := oaiServer(t, emulator.Config{Responder: emulator.NewScripted(emulator.Reply{Text: "only one"})})
	valid := map[string]string{
		oaiResponses: `{"model":"gpt-5.6-sol","input":"hi"}`,
		oaiChat:      `{"model":"gpt-5.6-sol","messages":[` + oaiUserMsg + `]}`,
	}
	if status, body := oaiPost(t, ts.URL+oaiChat, "test", valid[oaiChat]); status != 200 {
		t.Fatalf("first request: %d %s", status, body)
	}
	cases := []struct {
		name, path, body string
		status           int
		typ, code        string
	}{
		// The script is used up: the responder fails.
		{"responses responder failure", oaiResponses, valid[oaiResponses], 500, "server_error", "server_error"},
		{"chat responder failure", oaiChat, valid[oaiChat], 500, "server_error", "server_error"},
		{"unknown URL", "/v1/completions", valid[oaiChat], 404, "invalid_request_error", "unknown_url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := oaiPost(t, ts.URL+c.path, "test", c.body)
			var e oaiErrorBody
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("error body %s: %v", body, err)
			}
			if status != c.status || e.Error.Type != c.typ || oaiDeref(e.Error.Code) != c.code || e.Error.Message == "" {
				t.Errorf("status %d, body %s; want %d, type %q, code %q", status, body, c.status, c.typ, c.code)
			}
		})
	}
}
