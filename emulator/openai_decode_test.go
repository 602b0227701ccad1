package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oaiSeg is a segment as the tests state it.
type oaiSeg struct {
	Bytes string
	Text  string
	BP    TTL
	Tool  bool
}

func oaiSegsOf(segs []Segment) []oaiSeg {
	out := make([]oaiSeg, len(segs))
	for i, s := range segs {
		out[i] = oaiSeg{Bytes: string(s.Bytes), Text: s.Text, BP: s.Breakpoint, Tool: s.ToolDef}
	}
	return out
}

// oaiText is a text segment: its identifying bytes and its text.
func oaiText(role, typ, text string, bp TTL) oaiSeg {
	return oaiSeg{Bytes: string(oaiTextBytes(role, typ, text)), Text: text, BP: bp}
}

func oaiReadBody(t *testing.T, name string, edit func(map[string]any)) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "openai", name))
	if err != nil {
		t.Fatal(err)
	}
	if edit == nil {
		return b
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	b, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func oaiDecode(t *testing.T, c codec, h http.Header, body []byte) *Exchange {
	t.Helper()
	ex, e := c.decode(h, body)
	if e != nil {
		t.Fatalf("decode: %v (param %q, code %q)", e, e.Param, e.Code)
	}
	return ex
}

// oaiNoBreakpoints returns segs without breakpoints.
func oaiNoBreakpoints(segs []oaiSeg) []oaiSeg {
	out := make([]oaiSeg, len(segs))
	for i, s := range segs {
		s.BP = ""
		out[i] = s
	}
	return out
}

func TestResponsesDecodeFull(t *testing.T) {
	wantSegs := []oaiSeg{
		{Tool: true, Bytes: `{"description":"Base tool.","name":"base_tool","parameters":{"properties":{"q":{"type":"string"}},"type":"object"},"strict":false,"type":"function"}`},
		{Tool: true, Bytes: `{"defer_loading":true,"description":"Rare tool.","name":"rare_tool","type":"function"}`},
		{Tool: true, Bytes: `{"description":"CRM.","name":"crm","tools":[{"description":"Find.","name":"crm_find","parameters":{"properties":{},"type":"object"},"type":"function"},` +
			`{"defer_loading":true,"description":"Purge.","name":"crm_purge","type":"function"}],"type":"namespace"}`},
		{Tool: true, Bytes: `{"execution":"client","type":"tool_search"}`},
		{Bytes: `{"instructions":"Be brief."}`, Text: "Be brief."},
		oaiText("developer", "input_text", "base prompt", ""),
		oaiText("user", "input_text", "look at this", ""),
		{Bytes: `{"detail":"auto","image_url":"data:image/png;base64,AAAA","role":"user","type":"input_image"}`, Text: oaiImageText},
		{Bytes: `{"encrypted_content":"enc","id":"rs_1","summary":[{"text":"Think.","type":"summary_text"}],"type":"reasoning"}`},
		oaiText("assistant", "output_text", "Let me check.", ""),
		{Bytes: `{"arguments":"{\"q\":\"a\"}","call_id":"call_1","name":"base_tool","type":"function_call"}`},
		{Bytes: `{"arguments":"{\"q\":\"b\"}","call_id":"call_2","name":"base_tool","type":"function_call"}`},
		{Bytes: `{"call_id":"call_1","output":"A","type":"function_call_output"}`},
		{Bytes: `{"call_id":"call_2","output":[{"text":"B","type":"input_text"}],"type":"function_call_output"}`},
		{Tool: true, Bytes: `{"description":"Late tool.","name":"late_tool","parameters":{"properties":{"path":{"type":"string"}},"type":"object"},"strict":false,"type":"function"}`},
		{Bytes: `{"arguments":{"limit":1,"query":"rare"},"call_id":"ts_1","execution":"client","type":"tool_search_call"}`},
		{Tool: true, Bytes: `{"defer_loading":true,"description":"Rare tool.","name":"rare_tool","parameters":{"properties":{},"type":"object"},"type":"function"}`},
		oaiText("user", "input_text", "part one", "12h"),
		oaiText("user", "input_text", "part two", "30m"),
	}
	wantTools := []ToolDef{
		{Name: "base_tool", Description: "Base tool.", Parameters: json.RawMessage(`{"properties":{"q":{"type":"string"}},"type":"object"}`)},
		{Name: "crm_find", Description: "Find.", Parameters: json.RawMessage(`{"properties":{},"type":"object"}`)},
		{Name: "late_tool", Description: "Late tool.", Parameters: json.RawMessage(`{"properties":{"path":{"type":"string"}},"type":"object"}`)},
		{Name: "rare_tool", Description: "Rare tool.", Parameters: json.RawMessage(`{"properties":{},"type":"object"}`)},
	}
	wantTurns := []Turn{
		{Role: "system", Text: "base prompt"},
		{Role: "user", Text: "look at this"},
		{Role: "assistant", Text: "Let me check.", Calls: []Call{
			{ID: "call_1", Name: "base_tool", Arguments: json.RawMessage(`{"q":"a"}`)},
			{ID: "call_2", Name: "base_tool", Arguments: json.RawMessage(`{"q":"b"}`)},
		}},
		{Role: "tool", CallID: "call_1", Text: "A"},
		{Role: "tool", CallID: "call_2", Text: "B"},
		{Role: "user", Text: "part one\npart two"},
	}
	cases := []struct {
		name  string
		model string
		segs  []oaiSeg
	}{
		{"breakpoint caching", "gpt-5.6-sol", wantSegs},
		{"automatic caching", "gpt-5.2", oaiNoBreakpoints(wantSegs)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := oaiReadBody(t, "responses_full.json", func(m map[string]any) { m["model"] = c.model })
			ex := oaiDecode(t, responsesCodec{}, http.Header{}, body)
			if diff := cmp.Diff(c.segs, oaiSegsOf(ex.Segments)); diff != "" {
				t.Errorf("segments (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantTools, ex.Tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantTurns, ex.Turns); diff != "" {
				t.Errorf("turns (-want +got):\n%s", diff)
			}
			if ex.API != OpenAIResponses || ex.Model != c.model || !ex.Stream || ex.MaxTokens != 500 || ex.Namespace != "proj-1" {
				t.Errorf("exchange: API %s, model %s, stream %v, max tokens %d, namespace %q", ex.API, ex.Model, ex.Stream, ex.MaxTokens, ex.Namespace)
			}
		})
	}
}

// oaiUser is a Responses user message with text parts; each part text
// ending in "!" carries an explicit breakpoint.
func oaiUser(texts ...string) string {
	parts := make([]string, len(texts))
	for i, s := range texts {
		bp := ""
		if strings.HasSuffix(s, "!") {
			bp = `,"prompt_cache_breakpoint":{"mode":"explicit"}`
		}
		parts[i] = fmt.Sprintf(`{"type":"input_text","text":%q%s}`, s, bp)
	}
	return `{"role":"user","content":[` + strings.Join(parts, ",") + `]}`
}

func TestResponsesDecodeBreakpoints(t *testing.T) {
	call := `{"type":"function_call","call_id":"call_1","name":"f","arguments":"{}"}`
	output := `{"type":"function_call_output","call_id":"call_1","output":"done"}`
	outputMarked := `{"type":"function_call_output","call_id":"call_1","output":"done","prompt_cache_breakpoint":{"mode":"explicit","ttl":"12h"}}`
	cases := []struct {
		name, model, extra string
		input              []string
		want               []TTL // per segment
	}{
		{name: "string input", model: "gpt-5.6-sol", input: nil, want: []TTL{"30m"}},
		{name: "implicit at the last user message", model: "gpt-5.6-sol",
			input: []string{oaiUser("a", "b"), `{"role":"assistant","content":"c"}`}, want: []TTL{"", "30m", ""}},
		{name: "implicit at a function output", model: "gpt-5.6-sol",
			input: []string{oaiUser("a"), call, output, `{"role":"developer","content":"note"}`}, want: []TTL{"", "", "30m", ""}},
		{name: "explicit on a function output", model: "gpt-6-astra",
			input: []string{oaiUser("a!"), call, outputMarked}, want: []TTL{"30m", "", "12h"}},
		{name: "latest three explicit and the implicit", model: "gpt-5.6-sol",
			input: []string{oaiUser("a!", "b!", "c!", "d!", "e!"), oaiUser("f")}, want: []TTL{"", "", "30m", "30m", "30m", "30m"}},
		{name: "explicit mode: latest four, no implicit", model: "gpt-5.6-sol", extra: `"prompt_cache_options":{"mode":"explicit","ttl":"12h"},`,
			input: []string{oaiUser("a!", "b!", "c!", "d!", "e!"), oaiUser("f")}, want: []TTL{"", "12h", "12h", "12h", "12h", ""}},
		{name: "default ttl from the options", model: "gpt-5.6-sol", extra: `"prompt_cache_options":{"ttl":"12h"},`,
			input: []string{oaiUser("a!"), oaiUser("b")}, want: []TTL{"12h", "12h"}},
		{name: "automatic caching ignores marks", model: "gpt-5.5",
			input: []string{oaiUser("a!"), oaiUser("b")}, want: []TTL{"", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			input := `"hello"`
			if c.input != nil {
				input = "[" + strings.Join(c.input, ",") + "]"
			}
			body := fmt.Sprintf(`{"model":%q,%s"input":%s}`, c.model, c.extra, input)
			ex := oaiDecode(t, responsesCodec{}, nil, []byte(body))
			got := make([]TTL, len(ex.Segments))
			for i, s := range ex.Segments {
				got[i] = s.Breakpoint
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("breakpoints (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResponsesDecodeToolReplacement(t *testing.T) {
	body := `{"model":"gpt-5.6-sol","tools":[{"type":"function","name":"a","description":"old"},{"type":"function","name":"b"}],"input":[` +
		oaiUser("hi") + `,{"type":"additional_tools","role":"developer","tools":[{"type":"function","name":"a","description":"new"},{"type":"function","name":"c"}]}]}`
	ex := oaiDecode(t, responsesCodec{}, nil, []byte(body))
	want := []ToolDef{{Name: "a", Description: "new"}, {Name: "b"}, {Name: "c"}}
	if diff := cmp.Diff(want, ex.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestChatDecodeFull(t *testing.T) {
	wantSegs := []oaiSeg{
		{Tool: true, Bytes: `{"function":{"description":"Base tool.","name":"base_tool","parameters":{"properties":{"q":{"type":"string"}},"type":"object"}},"type":"function"}`},
		oaiText("system", "text", "base prompt", ""),
		oaiText("user", "text", "look", ""),
		{Bytes: `{"image_url":{"url":"data:image/png;base64,AAAA"},"role":"user","type":"image_url"}`, Text: oaiImageText},
		oaiText("assistant", "reasoning_content", "Hmm.", ""),
		oaiText("assistant", "text", "Checking.", ""),
		{Bytes: `{"function":{"arguments":"{\"q\":\"a\"}","name":"base_tool"},"id":"call_1","type":"function"}`},
		{Bytes: `{"function":{"arguments":"{}","name":"base_tool"},"id":"call_2","type":"function"}`},
		{Bytes: `{"content":"A","role":"tool","tool_call_id":"call_1"}`, Text: "A"},
		{Bytes: `{"content":"B1\nB2","role":"tool","tool_call_id":"call_2"}`, Text: "B1\nB2"},
		{Tool: true, Bytes: `{"function":{"description":"Late tool.","name":"late_tool","parameters":{"properties":{},"type":"object"}},"type":"function"}`},
		oaiText("developer", "text", "updated guidance", ""),
		oaiText("user", "text", "go on", "30m"),
		oaiText("user", "text", "please", "30m"),
	}
	wantTools := []ToolDef{
		{Name: "base_tool", Description: "Base tool.", Parameters: json.RawMessage(`{"properties":{"q":{"type":"string"}},"type":"object"}`)},
		{Name: "late_tool", Description: "Late tool.", Parameters: json.RawMessage(`{"properties":{},"type":"object"}`)},
	}
	wantTurns := []Turn{
		{Role: "system", Text: "base prompt"},
		{Role: "user", Text: "look"},
		{Role: "assistant", Text: "Checking.", Calls: []Call{
			{ID: "call_1", Name: "base_tool", Arguments: json.RawMessage(`{"q":"a"}`)},
			{ID: "call_2", Name: "base_tool", Arguments: json.RawMessage(`{}`)},
		}},
		{Role: "tool", CallID: "call_1", Text: "A"},
		{Role: "tool", CallID: "call_2", Text: "B1\nB2"},
		{Role: "system", Text: "updated guidance"},
		{Role: "user", Text: "go on\nplease"},
	}
	cases := []struct {
		name, model string
		segs        []oaiSeg
	}{
		{"breakpoint caching", "gpt-5.6-sol", wantSegs},
		{"automatic caching", "kimi-k3", oaiNoBreakpoints(wantSegs)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := oaiReadBody(t, "chat_full.json", func(m map[string]any) { m["model"] = c.model })
			ex := oaiDecode(t, chatCodec{}, http.Header{}, body)
			if diff := cmp.Diff(c.segs, oaiSegsOf(ex.Segments)); diff != "" {
				t.Errorf("segments (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantTools, ex.Tools); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantTurns, ex.Turns); diff != "" {
				t.Errorf("turns (-want +got):\n%s", diff)
			}
			if ex.API != OpenAIChat || !ex.Stream || ex.MaxTokens != 300 || ex.Namespace != "k" {
				t.Errorf("exchange: API %s, stream %v, max tokens %d, namespace %q", ex.API, ex.Stream, ex.MaxTokens, ex.Namespace)
			}
			if !ex.IncludeUsage {
				t.Error("include_usage was not passed on")
			}
		})
	}
}

func TestChatDecodeOptions(t *testing.T) {
	msgs := `"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":"ok"}]`
	cases := []struct {
		name, body   string
		maxTokens    int
		includeUsage bool
		breakpoints  []TTL
	}{
		{name: "max_completion_tokens wins", body: `{"model":"gpt-5.6-sol","max_completion_tokens":50,"max_tokens":9,` + msgs + `}`,
			maxTokens: 50, breakpoints: []TTL{"", "", "30m"}},
		{name: "no include_usage", body: `{"model":"gpt-5.6-sol","stream":true,"stream_options":{"include_usage":false},` + msgs + `}`,
			breakpoints: []TTL{"", "", "30m"}},
		{name: "include_usage", body: `{"model":"gpt-4.1","stream":true,"stream_options":{"include_usage":true},` + msgs + `}`,
			includeUsage: true, breakpoints: []TTL{"", "", ""}},
		{name: "explicit mode without marks", body: `{"model":"gpt-5.6-sol","prompt_cache_options":{"mode":"explicit"},` + msgs + `}`,
			breakpoints: []TTL{"", "", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := oaiDecode(t, chatCodec{}, http.Header{}, []byte(c.body))
			if ex.MaxTokens != c.maxTokens {
				t.Errorf("max tokens %d, want %d", ex.MaxTokens, c.maxTokens)
			}
			if got := ex.IncludeUsage; got != c.includeUsage {
				t.Errorf("include usage %v, want %v", got, c.includeUsage)
			}
			got := make([]TTL, len(ex.Segments))
			for i, s := range ex.Segments {
				got[i] = s.Breakpoint
			}
			if diff := cmp.Diff(c.breakpoints, got); diff != "" {
				t.Errorf("breakpoints (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenAIWriteErrorRateLimit(t *testing.T) {
	for _, c := range []codec{responsesCodec{}, chatCodec{}} {
		w := httptest.NewRecorder()
		c.writeError(w, &Error{Status: http.StatusTooManyRequests, Type: "requests", Code: "rate_limit_exceeded", Message: "Rate limit reached."})
		if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
			t.Errorf("%T: status %d, retry-after %q", c, w.Code, w.Header().Get("Retry-After"))
		}
		want := `{"error":{"code":"rate_limit_exceeded","message":"Rate limit reached.","param":null,"type":"requests"}}` + "\n"
		if got := w.Body.String(); got != want {
			t.Errorf("%T: body %s, want %s", c, got, want)
		}
	}
}

func TestOpenAIDecodeOutputSchema(t *testing.T) {
	schema := `{"type":"object","properties":{"answer":{"type":"string"}}}`
	cases := []struct {
		name string
		c    codec
		body string
		want []oaiSeg
	}{
		{"responses text.format", responsesCodec{},
			`{"model":"gpt-5.2","tools":[{"type":"function","name":"f"}],"instructions":"Be brief.","input":"hi",` +
				`"text":{"format":{"type":"json_schema","name":"answer","schema":` + schema + `}}}`,
			[]oaiSeg{
				{Tool: true, Bytes: `{"name":"f","type":"function"}`},
				{Bytes: `{"text_format":{"name":"answer","schema":{"properties":{"answer":{"type":"string"}},"type":"object"},"type":"json_schema"}}`},
				{Bytes: `{"instructions":"Be brief."}`, Text: "Be brief."},
				oaiText("user", "input_text", "hi", ""),
			}},
		{"chat response_format", chatCodec{},
			`{"model":"gpt-5.2","tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"hi"}],` +
				`"response_format":{"type":"json_schema","json_schema":{"name":"answer","schema":` + schema + `}}}`,
			[]oaiSeg{
				{Tool: true, Bytes: `{"function":{"name":"f"},"type":"function"}`},
				{Bytes: `{"response_format":{"name":"answer","schema":{"properties":{"answer":{"type":"string"}},"type":"object"}}}`},
				oaiText("user", "text", "hi", ""),
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := oaiDecode(t, c.c, http.Header{}, []byte(c.body))
			if diff := cmp.Diff(c.want, oaiSegsOf(ex.Segments)); diff != "" {
				t.Errorf("segments (-want +got):\n%s", diff)
			}
		})
	}
}
