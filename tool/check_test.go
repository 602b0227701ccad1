package tool_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/tool"
)

// manyProperties returns an object schema with n string properties.
func manyProperties(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"type":"string"}`, i)
	}
	b.WriteString(`}}`)
	return json.RawMessage(b.String())
}

// nested returns an object schema whose property a nests n levels of
// items below it.
func nested(n int) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"a":` + strings.Repeat(`{"items":`, n) + `{}` +
		strings.Repeat(`}`, n) + `}}`)
}

func TestCheckDefinitionRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		desc   string
		schema string
		kind   error
		want   []string // substrings of the message
	}{
		{name: "unbalanced pattern", schema: `{"type":"object","properties":{"q":{"type":"string","pattern":"(((("}}}`,
			kind: tool.ErrSchema, want: []string{"at /properties/q/pattern", `'(((('`, "not valid JSON Schema 2020-12"}},
		{name: "unbalanced pattern property", schema: `{"type":"object","patternProperties":{"((((":{"type":"string"}}}`,
			kind: tool.ErrSchema, want: []string{`'((((' is not valid regex`}},
		{name: "dangling pointer", schema: `{"type":"object","properties":{"a":{"$ref":"#/$defs/nope"}}}`,
			kind: tool.ErrSchema, want: []string{`$ref "#/$defs/nope" points to nothing in the schema`}},
		{name: "dangling anchor", schema: `{"type":"object","properties":{"a":{"$ref":"#nope"}}}`,
			kind: tool.ErrSchema, want: []string{`"#nope"`, "anchor"}},
		{name: "remote", schema: `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json#/x"}}}`,
			kind: tool.ErrSchema, want: []string{"at /properties/a", `$ref "https://example.com/s.json#/x" points to another document`, "#/$defs/<name>"}},
		{name: "relative remote", schema: `{"type":"object","properties":{"a":{"$ref":"other.json"}}}`,
			kind: tool.ErrSchema, want: []string{`"other.json" points to another document`}},
		{name: "remote dynamic", schema: `{"type":"object","items":{"$dynamicRef":"https://example.com/s.json"}}`,
			kind: tool.ErrSchema, want: []string{"at /items: $dynamicRef"}},
		{name: "remote in a definition", schema: `{"type":"object","$defs":{"x":{"anyOf":[{"$ref":"urn:other"}]}}}`,
			kind: tool.ErrSchema, want: []string{"at /$defs/x/anyOf/0"}},
		{name: "root references itself", schema: `{"type":"object","$ref":"#"}`,
			kind: tool.ErrSchema, want: []string{"references loop", "# → #"}},
		{name: "property references itself", schema: `{"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}`,
			kind: tool.ErrSchema, want: []string{"#/properties/a → #/properties/a"}},
		{name: "cycle through definitions", schema: `{"type":"object","properties":{"a":{"$ref":"#/$defs/b"}},"$defs":{"b":{"$ref":"#/$defs/c"},"c":{"allOf":[{"$ref":"#/$defs/b"}]}}}`,
			kind: tool.ErrSchema, want: []string{"#/$defs/b → #/$defs/c → #/$defs/c/allOf/0 → #/$defs/b"}},
		{name: "cycle through not", schema: `{"type":"object","$defs":{"x":{"not":{"$ref":"#/$defs/x"}}},"properties":{"a":{"$ref":"#/$defs/x"}}}`,
			kind: tool.ErrSchema, want: []string{"references loop"}},
		{name: "unknown type", schema: `{"type":"object","properties":{"a":{"type":"strin"}}}`,
			kind: tool.ErrSchema, want: []string{"at /properties/a/type"}},
		{name: "root array", schema: `{"type":"array"}`, kind: tool.ErrSchema, want: []string{`"type": "object"`}},
		{name: "no root type", schema: `{"properties":{}}`, kind: tool.ErrSchema, want: []string{`"type": "object"`}},
		{name: "not JSON", schema: `{"type":"object",`, kind: tool.ErrSchema, want: []string{"not valid JSON"}},
		{name: "not an object", schema: `[{"type":"object"}]`, kind: tool.ErrSchema, want: []string{"must be a JSON object"}},
		{name: "megabyte description", desc: strings.Repeat("x", 1<<20), schema: `{"type":"object"}`,
			kind: tool.ErrTooLarge, want: []string{"the description is 1048576 bytes; at most 16384"}},
		{name: "40,000 properties", schema: string(manyProperties(40000)),
			kind: tool.ErrTooLarge, want: []string{fmt.Sprintf("the parameter schema is %d bytes; at most 65536", len(manyProperties(40000)))}},
		{name: "1,001 properties", schema: string(manyProperties(tool.MaxSchemaProperties + 1)),
			kind: tool.ErrTooLarge, want: []string{"has 1001 properties; at most 1000"}},
		{name: "2,001 subschemas", schema: `{"type":"object","anyOf":[` + strings.Repeat(`true,`, tool.MaxSubschemas) + `{}]}`,
			kind: tool.ErrTooLarge, want: []string{"is made of 2002 schemas", "at most 2000"}},
		{name: "too deep", schema: string(nested(tool.MaxSchemaDepth)),
			kind: tool.ErrTooLarge, want: []string{"nests 67 levels deep; at most 64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tool.CheckDefinition(tt.desc, json.RawMessage(tt.schema))
			if err == nil {
				t.Fatalf("CheckDefinition accepted %.200s", tt.schema)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %q does not wrap %v", err, tt.kind)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if len(err.Error()) > 1000 {
				t.Errorf("error is %d bytes long: %.300s…", len(err.Error()), err)
			}
			// The remembered outcome is the same.
			if again := tool.CheckDefinition(tt.desc, json.RawMessage(tt.schema)); again == nil || again.Error() != err.Error() {
				t.Errorf("second check = %v, want %v", again, err)
			}
		})
	}
}

func TestCheckDefinitionAccepts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, schema string }{
		{"none", ``},
		{"empty object schema", `{"type":"object"}`},
		{"definitions", `{"type":"object","properties":{"p":{"$ref":"#/$defs/p"}},"$defs":{"p":{"type":"string"}}}`},
		{"draft-07 definitions", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"p":{"$ref":"#/definitions/p"}},"definitions":{"p":{"type":"string"}}}`},
		{"unknown $schema", `{"$schema":"https://example.com/not-fetched","type":"object"}`},
		{"recursion through properties", `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}}}`},
		{"recursion through a definition", `{"type":"object","properties":{"n":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}}}`},
		{"anchor", `{"type":"object","properties":{"p":{"$ref":"#word"}},"$defs":{"w":{"$anchor":"word","type":"string"}}}`},
		{"absolute $id", `{"$id":"https://example.com/tool.json","type":"object","properties":{"p":{"$ref":"#/$defs/p"}},"$defs":{"p":{}}}`},
		{"ECMA-262 pattern", `{"type":"object","properties":{"q":{"type":"string","pattern":"^(?=.*\\d)(?<word>\\p{L}+)\\k<word>$"}}}`},
		{"boolean subschemas", `{"type":"object","properties":{"any":true,"none":false},"additionalProperties":false}`},
		{"property named like keywords", `{"type":"object","properties":{"$ref":{"type":"string"},"properties":{"type":"object"},"pattern":{"type":"string"}}}`},
		{"data that looks like a schema", `{"type":"object","properties":{"p":{"default":{"$ref":"https://example.com"},"enum":[{"$ref":"#/nowhere"}]}}}`},
		{"1,000 properties", string(manyProperties(tool.MaxSchemaProperties))},
		{"as deep as allowed", string(nested(tool.MaxSchemaDepth - 3))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tool.CheckDefinition("Does things.", json.RawMessage(tt.schema)); err != nil {
				t.Errorf("CheckDefinition: %v", err)
			}
		})
	}
	if err := tool.CheckDefinition(strings.Repeat("é", tool.MaxDescriptionBytes/2), nil); err != nil {
		t.Errorf("a description of exactly MaxDescriptionBytes: %v", err)
	}
}

// TestRegisterRefusesAndKeepsTheRest checks that the registry applies the
// check: a refused tool is skipped with an error naming it, its siblings
// register.
func TestRegisterRefusesAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	r := tool.NewRegistry()
	err := r.Register(
		tool.Tool{Name: "good"},
		tool.Tool{Name: "bad", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/gone"}}}`)},
		tool.Tool{Name: "big", Description: strings.Repeat("x", 1<<20)},
		tool.Tool{Name: "also_good", Exposure: tool.Deferred},
	)
	if got := toolNames(r.Tools()); strings.Join(got, ",") != "good,also_good" {
		t.Errorf("registered %v, want good and also_good", got)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok || len(joined.Unwrap()) != 2 {
		t.Fatalf("error %v: want two problems", err)
	}
	bad, big := joined.Unwrap()[0], joined.Unwrap()[1]
	if !errors.Is(bad, tool.ErrInvalid) || !errors.Is(bad, tool.ErrSchema) || !strings.Contains(bad.Error(), `invalid tool "bad": `) {
		t.Errorf("problem %q: want an invalid tool error naming bad and wrapping ErrSchema", bad)
	}
	if !errors.Is(big, tool.ErrInvalid) || !errors.Is(big, tool.ErrTooLarge) || !strings.Contains(big.Error(), `"big"`) {
		t.Errorf("problem %q: want an invalid tool error naming big and wrapping ErrTooLarge", big)
	}
	// A single error, not a join: lists of problems show one line per tool.
	if _, multi := bad.(interface{ Unwrap() []error }); multi {
		t.Errorf("problem %q is a joined error", bad)
	}
}

func BenchmarkCheckDefinition(b *testing.B) {
	huge := strings.Repeat("x", 1<<20)
	wide := manyProperties(40000)
	b.Run("megabyte description", func(b *testing.B) {
		for b.Loop() {
			_ = tool.CheckDefinition(huge, nil)
		}
	})
	b.Run("40,000 properties", func(b *testing.B) {
		for b.Loop() {
			_ = tool.CheckDefinition("", wide)
		}
	})
	// The worst a schema within the caps costs: the most subschemas
	// allowed, each one compiled.
	atCaps := json.RawMessage(`{"type":"object","anyOf":[` + strings.Repeat(`{"type":"string"},`, tool.MaxSubschemas-2) + `{}]}`)
	if err := tool.CheckDefinition("", atCaps); err != nil {
		b.Fatal(err)
	}
	b.Run("at the caps", func(b *testing.B) {
		for b.Loop() {
			_ = tool.CheckSchema(atCaps)
		}
	})
	b.Run("largest real schema", func(b *testing.B) {
		schema := manyProperties(69)
		for b.Loop() {
			_ = tool.CheckSchema(schema)
		}
	})
	b.Run("remembered", func(b *testing.B) {
		schema := manyProperties(50)
		for b.Loop() {
			_ = tool.CheckDefinition("Does things.", schema)
		}
	})
}
