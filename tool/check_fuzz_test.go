package tool_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolshelf/toolshelf/tool"
)

// FuzzCheckDefinition feeds arbitrary schemas to the check: it must not
// panic, must answer the same twice, and must refuse only with an error
// that wraps ErrSchema or ErrTooLarge.
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
	})
}
