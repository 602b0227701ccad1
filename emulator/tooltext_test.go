package emulator

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolshelf/toolshelf/tokens"
)

func TestTextToolDefinition(t *testing.T) {
	for _, c := range []struct {
		line, name, params string
		ok                 bool
	}{
		{`{"name":"a","description":"A","parameters":{"type":"object"}}`, "a", `{"type":"object"}`, true},
		{"  {\"name\":\"b\",\"parameters\":{}}\n", "b", `{}`, true},
		{`{"name":"c","parameters":null}`, "c", `null`, true}, // raw JSON, kept as it is
		{`{"name":"","parameters":{}}`, "", "", false},        // no name
		{`{"name":"d"}`, "", "", false},                       // no parameters
		{`{"name":"e","parameters":{}`, "", "", false},        // not JSON
		{`Tools loaded: "parameters" below`, "", "", false},   // prose
		{`[{"name":"f","parameters":{}}]`, "", "", false},     // not an object
	} {
		name, params, ok := TextToolDefinition(c.line)
		if ok != c.ok || name != c.name || string(params) != c.params {
			t.Errorf("%q: %q %s %v, want %q %s %v", c.line, name, params, ok, c.name, c.params, c.ok)
		}
	}
}

// Record.ToolTokens counts a tool defined in a message's text, as the
// bridge declares loaded tools, and nothing for plain text.
func TestRecordCountsToolsDefinedInText(t *testing.T) {
	def := `{"name":"mcp__fs__read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}`
	counter, err := tokens.New()
	if err != nil {
		t.Fatal(err)
	}
	toolTokens := func(system string) int {
		t.Helper()
		var records []Record
		s, err := New(Config{Counter: counter, Observe: func(r Record) { records = append(records, r) }})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"model": "gpt-5.2", "messages": []map[string]string{
			{"role": "system", "content": system}, {"role": "user", "content": "read the file"}}})
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer k")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != http.StatusOK || len(records) != 1 {
			t.Fatalf("status %d, %d records: %s", w.Code, len(records), w.Body)
		}
		return records[0].ToolTokens
	}
	if got := toolTokens("You are a helpful agent."); got != 0 {
		t.Errorf("plain text: ToolTokens = %d, want 0", got)
	}
	want := counter.Count(def)
	if got := toolTokens("Tools loaded. Call them with call_tool:\n" + def + "\n"); got != want || want == 0 {
		t.Errorf("a text definition: ToolTokens = %d, want %d (the line's tokens)", got, want)
	}
}
