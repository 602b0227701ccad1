package tool_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"testing"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/tool"
)

// isObject reports whether args is exactly one JSON object.
func isObject(args []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber() // as the validator reads arguments: 1e700 is a number, not an error
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return false
	}
	_, ok := v.(map[string]any)
	return ok
}

// FuzzValidateArguments validates arbitrary arguments against arbitrary
// parameter schemas, as every runtime does before it runs a call. It must not
// panic. Arguments that are not one JSON object are refused whatever the
// schema; the empty schema accepts every object; the verdict is the same
// from a fresh cache and from a cache that compiled the schema already
// (unless a pattern ran out of its time budget, which depends on the
// machine); and a refusal is bounded: at most six problems (five and a
// count), each no longer than ten times the schema and the arguments
// together (quoting may escape every byte), plus a little text.
func FuzzValidateArguments(f *testing.F) {
	fsys := builtin.FS()
	names, err := fs.Glob(fsys, "*.json")
	if err != nil || len(names) == 0 {
		f.Fatalf("no built-in catalog files (%v)", err)
	}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			f.Fatal(err)
		}
		var file struct {
			Tools []struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(data, &file); err != nil || len(file.Tools) == 0 {
			f.Fatalf("%s: %v", name, err)
		}
		f.Add([]byte(file.Tools[0].InputSchema), []byte(`{}`))
	}
	for _, c := range [][2]string{
		{`{}`, `{}`}, {`true`, `{"a":1}`}, {`false`, `{}`}, {`{}`, `[]`}, {`{}`, `{} {}`}, {`{}`, `{`}, {`{}`, `null`}, {`{}`, `"x"`},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":1e308}},"required":["n","m"],"additionalProperties":false}`,
			`{"n":1.5e400,"x":[],"m":null}`},
		{`{"type":"object","properties":{"s":{"type":"string","pattern":"^(a+)+$","format":"email","minLength":2}}}`, `{"s":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}`},
		{`{"type":"object","properties":{"s":{"pattern":"(?<=a)b(?!c)\\1"}}}`, `{"s":"ab"}`},
		{`{"type":"object","properties":{"s":{"pattern":"(((("}}}`, `{"s":"x"}`},
		{`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`, `{}`},
		{`{"$ref":"https://example.com/schema.json"}`, `{}`},
		{`{"$ref":"#/nope"}`, `{}`},
		{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"e":{"enum":["a","b"]},"c":{"const":{"k":[1]}}}}`, `{"e":"z","c":{"k":[2]}}`},
		{`{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}],"oneOf":[{},{}],"not":{"required":["c"]}}`, `{"c":1}`},
		{`{"type":"object","patternProperties":{"^x-":{"type":"number"}},"propertyNames":{"maxLength":3}}`, `{"x-aaaa":"n","\u0000\u00ff":1}`},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string"},"uniqueItems":true,"minItems":9}}}`, `{"a":[1,1,"\ud800"]}`},
	} {
		f.Add([]byte(c[0]), []byte(c[1]))
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		tl := tool.Tool{Name: "t", Parameters: json.RawMessage(schema)}
		var v tool.Validator
		err := v.Validate(t.Context(), tl, args)
		if !isObject(args) {
			if err == nil {
				t.Fatalf("arguments %q that are not one JSON object were accepted", args)
			}
			return
		}
		// A pattern too slow for the time budget gives a verdict that
		// depends on the machine's speed: only the others must agree.
		var slow *tool.SlowSchemaError
		again := v.Validate(t.Context(), tl, args)
		if !errors.As(err, &slow) && !errors.As(again, &slow) &&
			((again == nil) != (err == nil) || (err != nil && again.Error() != err.Error())) {
			t.Fatalf("the cached schema gives %v, the first compilation %v", again, err)
		}
		if err == nil {
			return
		}
		msg := err.Error()
		if bound := 6*10*(len(schema)+len(args)) + 1000; len(msg) > bound {
			t.Fatalf("a refusal of %d bytes (bound %d): %.500q", len(msg), bound, msg)
		}
		var empty tool.Validator
		if err := empty.Validate(t.Context(), tool.Tool{Name: "t", Parameters: json.RawMessage(`{}`)}, args); err != nil {
			t.Fatalf("the empty schema refuses the object %q: %v", args, err)
		}
	})
}
