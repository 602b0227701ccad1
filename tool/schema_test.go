package tool_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/tool"
)

const (
	draft04 = `"$schema":"http://json-schema.org/draft-04/schema#",`
	draft07 = `"$schema":"http://json-schema.org/draft-07/schema#",`
)

// pdfSchema is written as a real PDF reader's MCP server writes its page
// parameter: draft-04's boolean exclusiveMinimum beside the bound.
const pdfSchema = `{` + draft04 + `"type":"object","properties":{"page":{"type":"number","minimum":0,"exclusiveMinimum":true}},"required":["page"]}`

func TestRenderSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema, want, draft string
		repairs                   []string // keyword@path of each repair
	}{
		{name: "draft-04 exclusive bound", schema: pdfSchema,
			want:  `{"type":"object","properties":{"page":{"type":"number","exclusiveMinimum":0}},"required":["page"]}`,
			draft: "draft-04", repairs: []string{"exclusiveMinimum@/properties/page"}},
		{name: "boolean bounds without $schema",
			schema: `{"type":"object","properties":{"n":{"type":"integer","maximum":10,"exclusiveMaximum":true,"minimum":1,"exclusiveMinimum":false},"m":{"exclusiveMinimum":true}}}`,
			want:   `{"type":"object","properties":{"n":{"type":"integer","exclusiveMaximum":10,"minimum":1},"m":{}}}`,
			draft:  "2020-12", repairs: []string{"exclusiveMinimum@/properties/m", "exclusiveMinimum@/properties/n", "exclusiveMaximum@/properties/n"}},
		{name: "draft-07 definitions",
			schema: `{` + draft07 + `"type":"object","properties":{"a":{"$ref":"#/definitions/s"},"b":{"type":"array","items":{"$ref":"#/definitions/s"}}},"definitions":{"s":{"type":"string"}}}`,
			want:   `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"},"b":{"type":"array","items":{"$ref":"#/$defs/s"}}},"$defs":{"s":{"type":"string"}}}`,
			draft:  "draft-07", repairs: []string{"definitions@"}},
		{name: "a property named definitions",
			schema: `{` + draft07 + `"type":"object","properties":{"definitions":{"type":"object"},"x":{"$ref":"#/properties/definitions"}},"definitions":{"y":{}}}`,
			want:   `{"type":"object","properties":{"definitions":{"type":"object"},"x":{"$ref":"#/properties/definitions"}},"$defs":{"y":{}}}`,
			draft:  "draft-07", repairs: []string{"definitions@"}},
		{name: "draft-07 keywords beside $ref",
			schema: `{` + draft07 + `"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s","maxLength":1,"description":"A."}}}`,
			want:   `{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s","maxLength":1,"description":"A."}}}`,
			draft:  "draft-07", repairs: []string{"$ref@/properties/a"}},
		{name: "draft-07 annotations beside $ref", schema: `{` + draft07 + `"type":"object","properties":{"a":{"$ref":"#/properties/b","description":"A."},"b":{}}}`,
			draft: "draft-07"},
		{name: "dependencies",
			schema: `{` + draft07 + `"type":"object","properties":{"a":{},"c":{}},"dependencies":{"a":["b"],"c":{"required":["d"]}}}`,
			want:   `{"type":"object","properties":{"a":{},"c":{}},"dependentRequired":{"a":["b"]},"dependentSchemas":{"c":{"required":["d"]}}}`,
			draft:  "draft-07", repairs: []string{"dependencies@"}},
		{name: "array items",
			schema: `{"type":"object","properties":{"pair":{"type":"array","items":[{"type":"string"},{"type":"number"}],"additionalItems":false},"first":{"$ref":"#/properties/pair/items/0"}}}`,
			want:   `{"type":"object","properties":{"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}],"items":false},"first":{"$ref":"#/properties/pair/prefixItems/0"}}}`,
			draft:  "2020-12", repairs: []string{"items@/properties/pair"}},
		{name: "draft-04 ids",
			schema: `{` + draft04 + `"id":"http://example.com/tool","type":"object","definitions":{"s":{"id":"#str","type":"string"}},"properties":{"a":{"$ref":"#str"},"b":{"$ref":"#/definitions/s"}}}`,
			want:   `{"type":"object","$defs":{"s":{"$anchor":"str","type":"string"}},"properties":{"a":{"$ref":"#str"},"b":{"$ref":"#/$defs/s"}}}`,
			draft:  "draft-04", repairs: []string{"id@", "definitions@", "id@/definitions/s"}},
		{name: "draft-07 anchor", schema: `{` + draft07 + `"type":"object","properties":{"a":{"$ref":"#s"}},"$defs":{"s":{"$id":"#s"}}}`,
			want:  `{"type":"object","properties":{"a":{"$ref":"#s"}},"$defs":{"s":{"$anchor":"s"}}}`,
			draft: "draft-07", repairs: []string{"$id@/$defs/s"}},
		{name: "2019-09 recursion",
			schema: `{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"type":"object","properties":{"kids":{"type":"array","items":{"$recursiveRef":"#"}}}}`,
			want:   `{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}}}}`,
			draft:  "2019-09", repairs: []string{"$recursiveAnchor@", "$recursiveRef@/properties/kids/items"}},
		{name: "draft-07 as it is", schema: `{` + draft07 + `"type":"object","properties":{"e":{"type":"string","format":"email"}}}`, draft: "draft-07"},
		{name: "unknown $schema", schema: `{"$schema":"https://example.com/meta","type":"object"}`, draft: "2020-12",
			repairs: []string{"$schema@"}},
		{name: "2020-12 definitions are left alone", schema: `{"type":"object","properties":{"a":{"$ref":"#/definitions/s"}},"definitions":{"s":{}}}`, draft: "2020-12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tool.RenderSchema(json.RawMessage(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == "" {
				want = tt.schema
			}
			if string(r.Schema) != want {
				t.Errorf("rendered\n%s\nwant\n%s", r.Schema, want)
			}
			if r.Draft != tt.draft {
				t.Errorf("draft %s, want %s", r.Draft, tt.draft)
			}
			var got []string
			for _, rp := range r.Repairs {
				got = append(got, rp.Keyword+"@"+rp.Path)
				if rp.Note == "" || !strings.Contains(rp.String(), rp.Note) {
					t.Errorf("repair %+v: no note, or String %q omits it", rp, rp.String())
				}
			}
			if diff := cmp.Diff(tt.repairs, got); diff != "" {
				t.Errorf("repairs (-want +got):\n%s\n%+v", diff, r.Repairs)
			}
			// The rendered schema is one providers accept, and needs no
			// repair of its own.
			if err := tool.CheckDefinition("Does things.", r.Schema); err != nil {
				t.Errorf("the rendered schema is refused: %v", err)
			}
			if again, err := tool.RenderSchema(r.Schema); err != nil || string(again.Schema) != string(r.Schema) {
				t.Errorf("rendering the rendered schema gives %s, %v", again.Schema, err)
			}
		})
	}
}

func TestRenderSchemaRefusesWhatCannotBeRepaired(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, schema, want string }{
		{"items twice", `{"type":"object","properties":{"p":{"items":[{}],"prefixItems":[{}]}}}`, "at /properties/p: items is an array"},
		{"dependencies twice", `{` + draft07 + `"type":"object","dependencies":{"a":["b"]},"dependentRequired":{"c":["d"]}}`, "merge them"},
		{"recursion across resources", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","$defs":{"x":{"$id":"https://example.com/x","$recursiveRef":"#"}}}`,
			"$recursiveRef"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tool.RenderSchema(json.RawMessage(tt.schema))
			if !errors.Is(err, tool.ErrSchema) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("RenderSchema: %v, want an ErrSchema saying %q", err, tt.want)
			}
			if tool.CheckDefinition("Does things.", json.RawMessage(tt.schema)) == nil {
				t.Error("CheckDefinition accepts it")
			}
		})
	}
}
