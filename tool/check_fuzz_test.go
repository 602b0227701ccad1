package tool_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolshelf/toolshelf/tool"
)

// FuzzCheckDefinition feeds arbitrary schemas to the check: it must not
// panic, must answer the same twice, and must refuse only with an error
// that wraps ErrSchema or ErrTooLarge. A schema it accepts renders to a
// 2020-12 form that it accepts too and that renders as it is.
func FuzzCheckDefinition(f *testing.F) {
	for _, s := range []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"q":{"type":"string","pattern":"(((("}}}`,
		`{"type":"object","$ref":"#"}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/b"}},"$defs":{"b":{"allOf":[{"$ref":"#/$defs/b"}]}}}`,
		`{"type":"object","properties":{"a":{"$ref":"https://example.com"}}}`,
		`{"type":"object","$id":"urn:x","$anchor":"a","properties":{"a":{"$dynamicRef":"#a"}}}`,
		`{"type":"object","items":[{"$ref":"#/items/0"}],"dependencies":{"a":{"$ref":"#"}}}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","definitions":{"x":{"$ref":"#/definitions/x"}}}`,
		`{"type":"object","properties":{"a":{"$ref":5}}}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","id":"x","type":"object","properties":{"p":{"id":"#p","minimum":0,"exclusiveMinimum":true,"maximum":1,"exclusiveMaximum":false}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","dependencies":{"a":["b"],"c":{"$ref":"#/definitions/d"}},"definitions":{"d":{}},"properties":{"e":{"$ref":"#/dependencies/c","minLength":1}}}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"type":"object","items":[{"$recursiveRef":"#"}],"additionalItems":false}`,
		`[`, `{"a":"\\"}`, `}{`, ``,
	} {
		f.Add("Does things.", []byte(s))
	}
	f.Fuzz(func(t *testing.T, desc string, schema []byte) {
		err := tool.CheckDefinition(desc, json.RawMessage(schema))
		if err != nil && !errors.Is(err, tool.ErrSchema) && !errors.Is(err, tool.ErrTooLarge) {
			t.Fatalf("error %q wraps neither ErrSchema nor ErrTooLarge", err)
		}
		again := tool.CheckDefinition(desc, json.RawMessage(schema))
		if (err == nil) != (again == nil) || (err != nil && err.Error() != again.Error()) {
			t.Fatalf("two checks disagree: %v / %v", err, again)
		}
		if err != nil {
			return
		}
		r, err := tool.RenderSchema(json.RawMessage(schema))
		if err != nil {
			t.Fatalf("the check accepts %q, RenderSchema refuses it: %v", schema, err)
		}
		if err := tool.CheckDefinition(desc, r.Schema); err != nil {
			t.Fatalf("the rendered %s is refused: %v", r.Schema, err)
		}
		if twice, err := tool.RenderSchema(r.Schema); err != nil || string(twice.Schema) != string(r.Schema) {
			t.Fatalf("the rendered %s renders as %s (%v)", r.Schema, twice.Schema, err)
		}
	})
}
