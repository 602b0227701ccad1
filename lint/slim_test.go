package lint_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/internal/ecma"
	"github.com/toolshelf/toolshelf/lint"
	"github.com/toolshelf/toolshelf/tool"
)

func TestSlim(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string
		rules  []string
	}{
		{
			name:   "restating description removed, others kept",
			schema: `{"type":"object","properties":{"owner":{"type":"string","description":"The owner of the thing"},"repo":{"type":"string","description":"Name without the .git extension"}},"required":["owner","repo"]}`,
			want:   `{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string","description":"Name without the .git extension"}},"required":["owner","repo"]}`,
			rules:  []string{lint.RuleParamRestatesName},
		},
		{
			name:   "examples removed everywhere, a property named examples kept",
			schema: `{"type":"object","examples":[{}],"properties":{"examples":{"type":"array","items":{"type":"string","example":"a"}},"q":{"anyOf":[{"type":"string","examples":["x"]},{"type":"null"}]}}}`,
			want:   `{"type":"object","properties":{"examples":{"type":"array","items":{"type":"string"}},"q":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`,
			rules:  []string{lint.RuleExamples, lint.RuleExamples, lint.RuleExamples},
		},
		{
			name:   "default sentence cut",
			schema: `{"type":"object","properties":{"per_page":{"type":"integer","default":30,"maximum":100,"description":"Results per page. Defaults to 30. At most 100."}}}`,
			want:   `{"type":"object","properties":{"per_page":{"type":"integer","default":30,"maximum":100,"description":"Results per page. At most 100."}}}`,
			rules:  []string{lint.RuleDefaultInProse},
		},
		{
			name:   "default parenthesis cut",
			schema: `{"type":"object","properties":{"branch":{"type":"string","default":"main","description":"Branch to read (default: 'main')"}}}`,
			want:   `{"type":"object","properties":{"branch":{"type":"string","default":"main","description":"Branch to read"}}}`,
			rules:  []string{lint.RuleDefaultInProse},
		},
		{
			name:   "default that disagrees with the schema kept",
			schema: `{"type":"object","properties":{"limit":{"type":"integer","default":10,"description":"How many results. Defaults to 20."}}}`,
		},
		{
			name:   "a default the schema does not declare kept",
			schema: `{"type":"object","properties":{"limit":{"type":"integer","description":"How many results (default: 20)"}}}`,
		},
		{
			name:   "enum, required and types never touched",
			schema: `{"type":"object","properties":{"state":{"type":"string","enum":["open","closed"],"description":"open: open ones; closed: closed ones"}},"required":["state"]}`,
		},
		{
			name:   "nested properties and definitions",
			schema: `{"type":"object","$defs":{"P":{"type":"object","properties":{"page":{"type":"integer","description":"Page"}}}},"properties":{"opts":{"type":"object","properties":{"page_size":{"type":"integer","description":"The page size"}}}}}`,
			want:   `{"type":"object","$defs":{"P":{"type":"object","properties":{"page":{"type":"integer"}}}},"properties":{"opts":{"type":"object","properties":{"page_size":{"type":"integer"}}}}}`,
			rules:  []string{lint.RuleParamRestatesName, lint.RuleParamRestatesName},
		},
		{
			name:   "not an object schema",
			schema: `true`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := tool.Tool{Name: "mcp__srv__list_things", Description: "List things.", Parameters: json.RawMessage(tc.schema),
				Origin: tool.Origin{Server: "srv", Tool: "list_things"}}
			got, err := lint.Slim(tl)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = tc.schema
			}
			if string(got.Schema) != want {
				t.Errorf("schema\n got %s\nwant %s", got.Schema, want)
			}
			var rules []string
			for _, c := range got.Changes {
				rules = append(rules, c.Rule)
			}
			if diff := cmp.Diff(tc.rules, rules); diff != "" {
				t.Errorf("changes %+v (-want +got rules):\n%s", got.Changes, diff)
			}
			if tc.want != "" && got.After >= got.Before || tc.want == "" && got.After != got.Before {
				t.Errorf("tokens %d -> %d", got.Before, got.After)
			}
			if got.Server != "srv" || got.Tool != "list_things" || got.Name != tl.Name {
				t.Errorf("identity %q %q %q", got.Server, got.Tool, got.Name)
			}
		})
	}
	if _, err := lint.Slim(tool.Tool{Name: "x", Parameters: json.RawMessage(`{"type":`)}); err == nil {
		t.Error("invalid JSON: no error")
	}
}

// compile compiles a parameter schema as the agent does before it
// validates arguments.
func compile(schema []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(ecma.Engine)
	if err := c.AddResource(ecma.SchemaURL, doc); err != nil {
		return err
	}
	_, err = c.Compile(ecma.SchemaURL)
	return err
}

// annotations are the keywords Slim may remove or shorten; validation does
// not read them.
var annotations = map[string]bool{"description": true, "title": true, "examples": true, "example": true}

// withoutAnnotations decodes a schema and drops annotation keywords at
// every level (property names that happen to match go from both sides
// alike, which keeps the comparison fair).
func withoutAnnotations(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if annotations[k] {
					delete(x, k)
					continue
				}
				x[k] = strip(e)
			}
		case []any:
			for i, e := range x {
				x[i] = strip(e)
			}
		}
		return v
	}
	return strip(v)
}

// TestSlimCorpus slims every built-in tool: tokens never grow, every
// schema that compiled still compiles, and nothing but annotations changes.
func TestSlimCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("slims every tool of the corpus; go test without -short runs it")
	}
	servers, err := builtin.Servers()
	if err != nil {
		t.Fatal(err)
	}
	namer := tool.NewNamer()
	changed := 0
	for _, s := range servers {
		for _, tl := range s.AsTools(namer, tool.Deferred) {
			got, err := lint.Slim(tl)
			if err != nil {
				t.Fatalf("%s: %v", tl.Name, err)
			}
			if got.After > got.Before {
				t.Errorf("%s: tokens grew from %d to %d", tl.Name, got.Before, got.After)
			}
			if len(got.Changes) == 0 {
				if !bytes.Equal(got.Schema, tl.Parameters) {
					t.Errorf("%s: no changes, but the schema differs", tl.Name)
				}
				continue
			}
			changed++
			if got.After >= got.Before {
				t.Errorf("%s: %d changes saved nothing (%d tokens)", tl.Name, len(got.Changes), got.Before)
			}
			if !json.Valid(got.Schema) {
				t.Fatalf("%s: slimmed schema is not JSON: %s", tl.Name, got.Schema)
			}
			if compile(tl.Parameters) == nil {
				if err := compile(got.Schema); err != nil {
					t.Errorf("%s: the slimmed schema does not compile: %v", tl.Name, err)
				}
			}
			if diff := cmp.Diff(withoutAnnotations(t, tl.Parameters), withoutAnnotations(t, got.Schema)); diff != "" {
				t.Errorf("%s: slimming changed more than annotations (-before +after):\n%s", tl.Name, diff)
			}
		}
	}
	if changed == 0 {
		t.Error("no built-in schema was slimmed")
	}
}

func FuzzSlim(f *testing.F) {
	for _, s := range []string{
		`{}`, `true`, `[]`, `"x"`, `{"properties":{"a":{"description":"A","default":1}}}`,
		`{"type":"object","properties":{"n":{"type":"integer","default":5,"description":"N (default: 5)"}}}`,
		`{"items":[{"examples":[1]},{"example":2}],"anyOf":[{"$defs":{"x":{"examples":[]}}}]}`,
		`{"properties":{"a":{"description":"Defaults to \"x\". More.","default":"x"}},"properties":{"b":{}}}`,
		`{"properties":{"a":{"description":"\u003ca\u003e","title":"A"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		got, err := lint.Slim(tool.Tool{Name: "mcp__s__a_tool", Description: "Do a thing.", Parameters: schema})
		if err != nil {
			if json.Valid(schema) && len(bytes.TrimSpace(schema)) > 0 {
				t.Fatalf("valid JSON refused: %v", err)
			}
			return
		}
		if !json.Valid(got.Schema) {
			t.Fatalf("output is not JSON: %s", got.Schema)
		}
		if got.After > got.Before {
			t.Fatalf("tokens grew from %d to %d", got.Before, got.After)
		}
	})
}
