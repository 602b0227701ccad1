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

func geminiPost(t *testing.T, h http.Handler, path, key, body string) (int, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if key != "" {
		r.Header.Set("x-goog-api-key", key)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(b)
}

const geminiTools = `"tools":[{"functionDeclarations":[{"name":"get_weather","description":"Weather.","parametersJsonSchema":{"type":"object","properties":{"city":{"type":"string"}}}}]}]`

// TestGeminiValidation: what the Gemini API refuses gets its 400 in the
// API's error shape; keys come from the header or the key parameter.
func TestGeminiValidation(t *testing.T) {
	em, err := emulator.New(emulator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	const path = "/v1beta/models/gemini-3.5-flash:generateContent"
	for _, c := range []struct {
		path, key, body string
		status          int
		want            string
	}{
		{path, "k", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"foo":1}`, 400, `Unknown name \"foo\": Cannot find field.`},
		{path, "k", `{"contents":[{"role":"user","parts":[{"text":"hi","colour":1}]}]}`, 400, `Unknown name \"colour\" at 'contents[0].parts[0]': Cannot find field.`},
		{path, "k", `{"contents":[]}`, 400, "contents is not specified"},
		{path, "k", `{"contents":[{"role":"assistant","parts":[{"text":"hi"}]}]}`, 400, "Please use a valid role: user, model."},
		{path, "k", `{"contents":[{"role":"user","parts":[{}]}]}`, 400, "required oneof field 'data'"},
		{path, "k", `{` + geminiTools + `,"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{}}},{"functionCall":{"name":"get_weather","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"output":"x"}}}]}]}`,
			400, "number of function response parts is equal to the number of function call parts"},
		{path, "k", `{"tools":[{"functionDeclarations":[{"name":"9lives"}]}],"contents":[{"parts":[{"text":"hi"}]}]}`, 400, "Invalid function name"},
		{path, "", `{"contents":[{"parts":[{"text":"hi"}]}]}`, 403, "PERMISSION_DENIED"},
		{path + "?key=k", "", `{"contents":[{"parts":[{"text":"hi"}]}]}`, 200, `"finishReason":"STOP"`},
		{path, "k", `{"system_instruction":{"parts":[{"text":"Be brief."}]},` + geminiTools + `,"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, 200, `"usageMetadata":{"promptTokenCount":`},
		{"/v1beta/models/gemini-3.5-flash:countTokens", "k", `{}`, 404, `"status":"NOT_FOUND"`},
	} {
		status, body := geminiPost(t, em, c.path, c.key, c.body)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s, want %d with %s", c.path, c.body, status, body, c.status, c.want)
		}
		if status != 200 {
			var e struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
					Status  string `json:"status"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code != status || e.Error.Status == "" || e.Error.Message == "" {
				t.Errorf("%s: not the API's error shape: %s", c.body, body)
			}
		}
	}
}

// TestGeminiStreamAndCache: a stream answers scripted text and calls as
// server-sent events, or as one JSON array without alt=sse; a repeated
// prompt reads the implicit cache.
func TestGeminiStreamAndCache(t *testing.T) {
	em, err := emulator.New(emulator.Config{Responder: emulator.NewScripted(
		emulator.Reply{Text: "Looking.", Calls: []emulator.Call{{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}}},
		emulator.Reply{Text: "Sunny."})})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("Answer about the weather, briefly and politely. ", 150)
	body := `{"systemInstruction":{"parts":[{"text":"` + long + `"}]},` + geminiTools + `,"contents":[{"role":"user","parts":[{"text":"Paris?"}]}]}`
	status, out := geminiPost(t, em, "/v1beta/models/gemini-3.5-flash:streamGenerateContent?alt=sse", "k", body)
	if status != 200 || strings.Count(out, "data: ") != 2 || !strings.Contains(out, `{"functionCall":{"args":{"city":"Paris"},"name":"get_weather"}}`) ||
		strings.Contains(out, "cachedContentTokenCount") {
		t.Errorf("stream: %d\n%s", status, out)
	}
	status, out = geminiPost(t, em, "/v1beta/models/gemini-3.5-flash:streamGenerateContent", "k", body)
	var chunks []map[string]any
	if status != 200 || json.Unmarshal([]byte(out), &chunks) != nil || len(chunks) != 1 || !strings.Contains(out, `"cachedContentTokenCount":`) {
		t.Errorf("array stream: %d\n%s", status, out)
	}
}
