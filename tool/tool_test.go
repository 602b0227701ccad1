package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/tool"
)

func TestParseExposure(t *testing.T) {
	t.Parallel()
	for _, want := range []tool.Exposure{tool.Direct, tool.ModelOnly, tool.Codemode, tool.Deferred, tool.Hidden} {
		t.Run(string(want), func(t *testing.T) {
			got, err := tool.ParseExposure(string(want))
			if err != nil {
				t.Fatalf("ParseExposure(%q): %v", want, err)
			}
			if got != want {
				t.Errorf("ParseExposure(%q) = %q, want %q", want, got, want)
			}
		})
	}
	for _, bad := range []string{"", "Direct", "modelonly", "model_only", "visible", " direct"} {
		t.Run("bad/"+bad, func(t *testing.T) {
			got, err := tool.ParseExposure(bad)
			if err == nil {
				t.Fatalf("ParseExposure(%q) = %q, want an error", bad, got)
			}
			if got != "" {
				t.Errorf("ParseExposure(%q) = %q with an error, want \"\"", bad, got)
			}
			if !strings.Contains(err.Error(), "model-only") {
				t.Errorf("ParseExposure(%q) error %q does not list the valid exposures", bad, err)
			}
		})
	}
}

func TestExposurePredicates(t *testing.T) {
	t.Parallel()
	type preds struct{ ActiveOnRegister, Activatable, Loadable bool }
	tests := []struct {
		exposure tool.Exposure
		want     preds
	}{
		{"", preds{ActiveOnRegister: true, Activatable: true}},
		{tool.Direct, preds{ActiveOnRegister: true, Activatable: true}},
		{tool.ModelOnly, preds{ActiveOnRegister: true, Activatable: true}},
		{tool.Codemode, preds{Activatable: true, Loadable: true}},
		{tool.Deferred, preds{Activatable: true, Loadable: true}},
		{tool.Hidden, preds{}},
	}
	for _, tt := range tests {
		t.Run(string(tt.exposure), func(t *testing.T) {
			got := preds{tt.exposure.ActiveOnRegister(), tt.exposure.Activatable(), tt.exposure.Loadable()}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("predicates of %q (-want +got):\n%s", tt.exposure, diff)
			}
		})
	}
}

func TestOrigin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		origin   tool.Origin
		wantZero bool
		wantStr  string
	}{
		{"zero", tool.Origin{}, true, ""},
		{"full", tool.Origin{Server: "github", Tool: "create_issue"}, false, "github/create_issue"},
		{"server only", tool.Origin{Server: "github"}, false, "github/"},
		{"tool only", tool.Origin{Tool: "x"}, false, "/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.origin.IsZero(); got != tt.wantZero {
				t.Errorf("IsZero() = %v, want %v", got, tt.wantZero)
			}
			if got := tt.origin.String(); got != tt.wantStr {
				t.Errorf("String() = %q, want %q", got, tt.wantStr)
			}
		})
	}
}

func TestOriginJSON(t *testing.T) {
	t.Parallel()
	got, err := json.Marshal(tool.Origin{Server: "github", Tool: "create_issue"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"server":"github","tool":"create_issue"}`; string(got) != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
}

func TestAnnotationsJSON(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	in := `{"title":"Delete","readOnlyHint":false,"destructiveHint":true,"extra":1}`
	var got tool.Annotations
	if err := json.Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	want := tool.Annotations{ReadOnly: &no, Destructive: &yes, Title: "Delete"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unmarshal(%s) (-want +got):\n%s", in, diff)
	}
	out, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"readOnlyHint":false,"destructiveHint":true,"title":"Delete"}`; string(out) != want {
		t.Errorf("Marshal = %s, want %s", out, want)
	}
}

func TestResults(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff(&tool.Result{Content: []tool.Content{{Text: "hi"}}}, tool.TextResult("hi")); diff != "" {
		t.Errorf("TextResult (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&tool.Result{Content: []tool.Content{{Text: "bad"}}, IsError: true}, tool.ErrorResult("bad")); diff != "" {
		t.Errorf("ErrorResult (-want +got):\n%s", diff)
	}
}

func TestHandlerFunc(t *testing.T) {
	t.Parallel()
	var gotArgs json.RawMessage
	var h tool.Handler = tool.HandlerFunc(func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
		gotArgs = args
		return tool.TextResult("ok"), ctx.Err()
	})
	res, err := h.Call(t.Context(), json.RawMessage(`{"a":1}`))
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if string(gotArgs) != `{"a":1}` {
		t.Errorf("handler got args %s, want {\"a\":1}", gotArgs)
	}
	if diff := cmp.Diff(tool.TextResult("ok"), res); diff != "" {
		t.Errorf("Call result (-want +got):\n%s", diff)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := h.Call(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Call with a cancelled context: error %v, want context.Canceled", err)
	}
}

// TestRegisterValidation checks what Register accepts and how it stores the
// accepted tools.
func TestRegisterValidation(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", tool.MaxNameLength)
	tests := []struct {
		name    string
		tool    tool.Tool
		wantErr string // substring of the error; "" for a valid tool
	}{
		{name: "plain", tool: tool.Tool{Name: "read"}},
		{name: "dash and underscore", tool: tool.Tool{Name: "mcp__git-hub__x_Y9"}},
		{name: "64 characters", tool: tool.Tool{Name: long}},
		{name: "empty name", tool: tool.Tool{}, wantErr: "empty name"},
		{name: "65 characters", tool: tool.Tool{Name: long + "b"}, wantErr: `"` + long + `b"`},
		{name: "dot", tool: tool.Tool{Name: "a.b"}, wantErr: `"a.b"`},
		{name: "space", tool: tool.Tool{Name: "a b"}, wantErr: `"a b"`},
		{name: "slash", tool: tool.Tool{Name: "server/tool"}, wantErr: "server/tool"},
		{name: "trailing newline", tool: tool.Tool{Name: "a\n"}, wantErr: `"a\n"`},
		{name: "non-ASCII", tool: tool.Tool{Name: "café"}, wantErr: "café"},
		{name: "unknown exposure", tool: tool.Tool{Name: "x", Exposure: "public"}, wantErr: `unknown exposure "public"`},
		{name: "array parameters", tool: tool.Tool{Name: "x", Parameters: json.RawMessage(`[1,2]`)}, wantErr: "must be a JSON Schema object"},
		{name: "string parameters", tool: tool.Tool{Name: "x", Parameters: json.RawMessage(`"object"`)}, wantErr: "must be a JSON Schema object"},
		{name: "null parameters", tool: tool.Tool{Name: "x", Parameters: json.RawMessage(`null`)}, wantErr: "must be a JSON Schema object"},
		{name: "truncated parameters", tool: tool.Tool{Name: "x", Parameters: json.RawMessage(`{"type":`)}, wantErr: "not valid JSON"},
		{name: "two values", tool: tool.Tool{Name: "x", Parameters: json.RawMessage(`{} {}`)}, wantErr: "not valid JSON"},
		{name: "trailing comma", tool: tool.Tool{Name: "x", Parameters: json.RawMessage(`{"a":1,}`)}, wantErr: "not valid JSON"},
		{name: "no type", tool: tool.Tool{Name: "x", Parameters: json.RawMessage(`{ "properties" : {} }`)}, wantErr: `must have "type": "object" at its root`},
		{name: "bad pattern", tool: tool.Tool{Name: "x", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","pattern":"(((("}}}`)},
			wantErr: "at /properties/q/pattern"},
		{name: "huge description", tool: tool.Tool{Name: "x", Description: strings.Repeat("d", tool.MaxDescriptionBytes+1)}, wantErr: "the description is 16385 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tool.NewRegistry()
			err := r.Register(tt.tool)
			_, registered := r.Get(tt.tool.Name)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Register(%q): %v", tt.tool.Name, err)
				}
				if !registered {
					t.Errorf("Register(%q) returned no error but the tool is not registered", tt.tool.Name)
				}
				return
			}
			if err == nil {
				t.Fatalf("Register(%q) = nil, want an error containing %q", tt.tool.Name, tt.wantErr)
			}
			if !errors.Is(err, tool.ErrInvalid) {
				t.Errorf("Register(%q) error %q does not wrap ErrInvalid", tt.tool.Name, err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Register(%q) error %q does not contain %q", tt.tool.Name, err, tt.wantErr)
			}
			if registered || r.Len() != 0 {
				t.Errorf("Register(%q) failed but registered %d tools", tt.tool.Name, r.Len())
			}
			if v := r.Version(); v != 0 {
				t.Errorf("Version() = %d after a failed registration, want 0", v)
			}
		})
	}
}

// TestRegisterStoresCompactParameters checks that the registry keeps
// parameters compact and as its own bytes, whether they came compact or
// not: a caller that reuses its buffer changes nothing registered.
func TestRegisterStoresCompactParameters(t *testing.T) {
	t.Parallel()
	const want = `{"type":"object","properties":{"q":{"type":"string","description":"a \"quoted\" word, spaced"}}}`
	for _, given := range []string{
		want,
		" " + want + "\n",
		`{ "type": "object", "properties": { "q": { "type": "string", "description": "a \"quoted\" word, spaced" } } }`,
	} {
		buf := []byte(given)
		r := tool.NewRegistry()
		if err := r.Register(tool.Tool{Name: "x", Parameters: buf}); err != nil {
			t.Fatalf("Register(%s): %v", given, err)
		}
		for i := range buf {
			buf[i] = ' '
		}
		got, _ := r.Get("x")
		if string(got.Parameters) != want {
			t.Errorf("Register(%s) keeps %s, want %s", given, got.Parameters, want)
		}
	}
}

func TestRegisterKeepsValidTools(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	err := r.Register(
		tool.Tool{Name: "good1"},
		tool.Tool{Name: "bad name"},
		tool.Tool{Name: "good2", Exposure: tool.Deferred},
		tool.Tool{Name: "bad_params", Parameters: json.RawMessage(`[]`)},
		tool.Tool{Name: "bad_exposure", Exposure: "nope"},
		tool.Tool{Name: "good3"},
	)
	if err == nil {
		t.Fatal("Register returned nil, want the problems of three tools")
	}
	if !errors.Is(err, tool.ErrInvalid) {
		t.Errorf("error %q does not wrap ErrInvalid", err)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %T is not a joined error", err)
	}
	if got := len(joined.Unwrap()); got != 3 {
		t.Errorf("joined error has %d parts, want 3: %v", got, err)
	}
	for _, e := range joined.Unwrap() {
		if !errors.Is(e, tool.ErrInvalid) {
			t.Errorf("part %q does not wrap ErrInvalid", e)
		}
	}
	for _, name := range []string{"bad name", "bad_params", "bad_exposure"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %q", err, name)
		}
	}
	if diff := cmp.Diff([]string{"good1", "good2", "good3"}, toolNames(r.Tools())); diff != "" {
		t.Errorf("Tools() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"good1", "good3"}, r.ActiveNames()); diff != "" {
		t.Errorf("ActiveNames() (-want +got):\n%s", diff)
	}
}

func TestRegisterStoredTool(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		params     json.RawMessage
		wantParams string
	}{
		{"nil", nil, `{"type":"object","properties":{}}`},
		{"empty", json.RawMessage{}, `{"type":"object","properties":{}}`},
		{"blank", json.RawMessage(" \n\t "), `{"type":"object","properties":{}}`},
		{"compact already", json.RawMessage(`{"type":"object"}`), `{"type":"object"}`},
		{
			"key order kept",
			json.RawMessage("{\n  \"type\" : \"object\",\n  \"required\": [ \"z\" ],\n  \"properties\": {\n    \"z\": { \"type\": \"string\", \"description\": \"a b  c\" },\n    \"a\": {}\n  }\n}\n"),
			`{"type":"object","required":["z"],"properties":{"z":{"type":"string","description":"a b  c"},"a":{}}}`,
		},
		{"escapes kept", json.RawMessage(`{"type": "object", "description": "\u00e9 \"q\" <b>"}`), `{"type":"object","description":"\u00e9 \"q\" <b>"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tool.NewRegistry()
			if err := r.Register(tool.Tool{Name: "t", Parameters: tt.params}); err != nil {
				t.Fatal(err)
			}
			got, _ := r.Get("t")
			if string(got.Parameters) != tt.wantParams {
				t.Errorf("Parameters = %s, want %s", got.Parameters, tt.wantParams)
			}
			if got.Exposure != tool.Direct {
				t.Errorf("Exposure = %q, want %q (the default)", got.Exposure, tool.Direct)
			}
		})
	}
}

// TestRegisterCopies checks that the registry keeps its own copies of the
// parts of a Tool that a caller could change after registering it.
func TestRegisterCopies(t *testing.T) {
	t.Parallel()
	yes := true
	params := []byte(`{"type":"object","properties":{}}`)
	ns := &tool.Namespace{Name: "mcp__s", Description: "d", Instructions: "i"}
	ann := &tool.Annotations{ReadOnly: &yes, Title: "T"}
	r := tool.NewRegistry()
	in := tool.Tool{
		Name:        "t",
		Title:       "Title",
		Description: "desc",
		Parameters:  params,
		Exposure:    tool.Deferred,
		Namespace:   ns,
		Annotations: ann,
		Origin:      tool.Origin{Server: "s", Tool: "t"},
	}
	if err := r.Register(in); err != nil {
		t.Fatal(err)
	}
	want, _ := r.Get("t")
	want.Namespace = &tool.Namespace{Name: "mcp__s", Description: "d", Instructions: "i"}
	want.Annotations = &tool.Annotations{ReadOnly: &yes, Title: "T"}
	want.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)

	copy(params, `[                               ]`)
	ns.Name = "changed"
	ann.Title = "changed"

	got, _ := r.Get("t")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored tool changed with the caller's values (-want +got):\n%s", diff)
	}
	if got.Title != "Title" || got.Description != "desc" || got.Origin != in.Origin || got.Exposure != tool.Deferred {
		t.Errorf("stored tool = %+v, want the registered fields", got)
	}
}

func toolNames(tools []tool.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

// TestReachFor: a reach with Of answers per call from the arguments, and
// falls back to its fixed part without them.
func TestReachFor(t *testing.T) {
	t.Parallel()
	r := tool.Reach{Names: []string{"mcp__a"}, Of: func(args json.RawMessage) tool.Reach {
		return tool.Reach{Names: []string{string(args)}}
	}}
	if got := r.For(nil); len(got.Names) != 1 || got.Names[0] != "mcp__a" {
		t.Errorf("For(nil) = %+v, want the fixed reach", got)
	}
	got := r.For(json.RawMessage(`mcp__b`))
	if len(got.Names) != 1 || got.Names[0] != "mcp__b" || got.Of != nil {
		t.Errorf("For(args) = %+v, want the reach of the call", got)
	}
	fixed := tool.Reach{All: true}
	if got := fixed.For(json.RawMessage(`{}`)); !got.All {
		t.Errorf("a reach without Of: For(args) = %+v", got)
	}
}
