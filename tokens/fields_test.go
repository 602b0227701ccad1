package tokens

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
)

func TestBreakdownHandChecked(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		tool llm.Tool
		want Breakdown
	}{
		{
			// {"name":"t","description":"","parameters":{}} tokenizes as
			// {" name ":" t ",\" description ":\"\",\" parameters ": { }}:
			// only "t" is the name's; the empty description's quotes sit
			// in a token that is mostly syntax.
			name: "empty",
			tool: llm.Tool{Name: "t"},
			want: Breakdown{Name: 1, Schema: 10},
		},
		{
			// read _file | Read a file .", | The file path ." |
			// ":[" text "," binary "], (enum) | text (default); the
			// remaining 40 tokens are keys, types, braces and required.
			name: "read_file",
			tool: llm.Tool{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(
				`{"type":"object","properties":{"path":{"type":"string","description":"The file path."},` +
					`"mode":{"type":"string","enum":["text","binary"],"default":"text"}},"required":["path"]}`)},
			want: Breakdown{Name: 2, Description: 4, ParamDescriptions: 4, Enums: 5, Defaults: 1, Schema: 40},
		},
		{
			// A property named "description" is a property, not prose;
			// its own description is.
			name: "property named description",
			tool: llm.Tool{Name: "x", Parameters: json.RawMessage(
				`{"type":"object","properties":{"description":{"type":"string","description":"Body text"}}}`)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.Breakdown(tt.tool)
			if total := c.Tool(tt.tool); got.Total() != total {
				t.Errorf("Breakdown %+v sums to %d, want Tool = %d", got, got.Total(), total)
			}
			if tt.want != (Breakdown{}) && got != tt.want {
				t.Errorf("Breakdown = %+v, want %+v", got, tt.want)
			}
		})
	}
	// "Body" and " text": the property's name stays schema.
	if got := c.Breakdown(tests[2].tool); got.ParamDescriptions != 2 || got.Description != 0 {
		t.Errorf("Breakdown = %+v, want 2 tokens of parameter description (Body text) and no description", got)
	}
}

// TestBreakdownKeywords checks that each keyword's value lands in its
// field, wherever the subschema is.
func TestBreakdownKeywords(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	const prose = "Explains at length what this parameter is for and when to use it"
	tests := []struct {
		schema string
		field  Field
	}{
		{`{"type":"object","properties":{"a":{"type":"string","description":"` + prose + `"}}}`, FieldParamDescriptions},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"description":"` + prose + `"}}}}}}`, FieldParamDescriptions},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"null"},{"type":"string","description":"` + prose + `"}]}}}`, FieldParamDescriptions},
		{`{"type":"object","$defs":{"D":{"type":"string","description":"` + prose + `"}},"properties":{"a":{"$ref":"#/$defs/D"}}}`, FieldParamDescriptions},
		{`{"type":"object","properties":{"a":{"type":"array","items":[{"description":"` + prose + `"}]}}}`, FieldParamDescriptions},
		{`{"type":"object","properties":{"a":{"oneOf":[{"const":"` + prose + `"}]}}}`, FieldEnums},
		{`{"type":"object","properties":{"a":{"enum":["` + strings.ReplaceAll(prose, " ", `","`) + `"]}}}`, FieldEnums},
		{`{"type":"object","properties":{"a":{"type":"string","default":"` + prose + `"}}}`, FieldDefaults},
		{`{"type":"object","properties":{"a":{"type":"string","examples":["` + prose + `"]}}}`, FieldExamples},
		{`{"type":"object","properties":{"a":{"type":"string","example":"` + prose + `"}}}`, FieldExamples},
		// Not a subschema: an x- extension's description is schema.
		{`{"type":"object","x-doc":{"description":"` + prose + `"}}`, FieldSchema},
		// A non-string description is schema.
		{`{"type":"object","description":{"text":"` + prose + `"}}`, FieldSchema},
	}
	for _, tt := range tests {
		tool := llm.Tool{Name: "k", Parameters: json.RawMessage(tt.schema)}
		plain := c.Breakdown(llm.Tool{Name: "k", Parameters: json.RawMessage(`{"type":"object"}`)})
		got := c.Breakdown(tool)
		if got.Total() != c.Tool(tool) {
			t.Errorf("%s: sum %d, want %d", tt.schema, got.Total(), c.Tool(tool))
		}
		// The prose is about 13 tokens; the field must hold them.
		if n := got.Get(tt.field) - plain.Get(tt.field); n < 12 {
			t.Errorf("%s: %s has %d more tokens than without the keyword (%+v), want the prose's", tt.schema, tt.field, n, got)
		}
	}
}

func TestBreakdownOddSchemas(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 2000) + `{"description":"deep"}` + strings.Repeat(`}}`, 2000)
	huge := `{"type":"object","properties":{` + strings.Repeat(`"p":{"type":"string","description":"a parameter","enum":["x","y"]},`, 5000) + `"q":{}}}`
	for name, schema := range map[string]string{
		"empty":            ``,
		"null":             `null`,
		"array":            `[1,2,{"description":"x"}]`,
		"string":           `"just a string"`,
		"number":           `42`,
		"boolean schema":   `true`,
		"invalid":          `{"type":`,
		"garbage":          "\x00\xff{{{",
		"invalid UTF-8":    "{\"description\":\"\xff\xfe\"}",
		"escaped keys":     `{"\u0064escription":"escaped key","properties":{"a\"b":{"enum":["\"","\\"]}}}`,
		"white space":      "{ \"type\" : \"object\" ,\n \"properties\" : { \"a\" : { \"description\" : \"spaced out\" } } }",
		"deep":             deep,
		"huge":             huge,
		"special tokens":   `{"description":"<|endoftext|> and <|fim_prefix|>"}`,
		"properties array": `{"properties":[{"description":"not a map"}],"anyOf":{"description":"not a list"}}`,
	} {
		tool := llm.Tool{Name: "odd", Description: "An odd tool.", Parameters: json.RawMessage(schema)}
		got := c.Breakdown(tool)
		if got.Total() != c.Tool(tool) {
			t.Errorf("%s: Breakdown %+v sums to %d, want %d", name, got, got.Total(), c.Tool(tool))
		}
		for _, f := range Fields() {
			if got.Get(f) < 0 {
				t.Errorf("%s: %s = %d", name, f, got.Get(f))
			}
		}
	}
}

func TestBreakdownArithmetic(t *testing.T) {
	a := Breakdown{Name: 1, Description: 2, ParamDescriptions: 3, Enums: 4, Defaults: 5, Examples: 6, Schema: 9}
	b := a
	b.Add(a)
	if want := (Breakdown{2, 4, 6, 8, 10, 12, 18}); b != want {
		t.Errorf("Add = %+v, want %+v", b, want)
	}
	if a.Total() != 30 || a.Share(FieldSchema) != 0.3 || (Breakdown{}).Share(FieldName) != 0 {
		t.Errorf("Total %d, Share(schema) %v", a.Total(), a.Share(FieldSchema))
	}
	var names []string
	for _, f := range Fields() {
		names = append(names, f.String())
	}
	if got := strings.Join(names, ","); got != "name,description,paramDescriptions,enums,defaults,examples,schema" {
		t.Errorf("fields %s", got)
	}
	if Field(99).String() != "Field(99)" || a.Get(Field(99)) != 0 {
		t.Error("unknown field")
	}
	// The JSON names are the fields' names.
	j, _ := json.Marshal(a)
	var m map[string]int
	if err := json.Unmarshal(j, &m); err != nil || len(m) != len(Fields()) {
		t.Fatalf("%s: %v", j, err)
	}
	for _, f := range Fields() {
		if m[f.String()] != a.Get(f) {
			t.Errorf("JSON %s = %d, want %d", f, m[f.String()], a.Get(f))
		}
	}
}

func TestProportional(t *testing.T) {
	labels := []Field{FieldName, FieldSchema, FieldSchema, FieldDescription}
	for total := range 20 {
		per := proportional(labels, total)
		sum := 0
		for _, n := range per {
			sum += n
		}
		if sum != total {
			t.Errorf("proportional(%d) = %v, sums to %d", total, per, sum)
		}
	}
	if per := proportional(nil, 7); per[FieldSchema] != 7 {
		t.Errorf("no labels: %v", per)
	}
}

func FuzzBreakdown(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"type":"object","properties":{"a":{"type":"string","description":"x","enum":["a","b"],"default":"a"}}}`,
		`{"anyOf":[{"const":1},{"examples":[1,2]}],"$defs":{"x":{"description":"d"}}}`,
		`[]`, `"s"`, `{"items":[{"description":"t"}]}`, `{`, "\xff",
	} {
		f.Add("tool", "A tool.", []byte(s))
	}
	c, err := Default()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name, desc string, schema []byte) {
		tool := llm.Tool{Name: name, Description: desc, Parameters: schema}
		got := c.Breakdown(tool)
		if got.Total() != c.Tool(tool) {
			t.Fatalf("Breakdown %+v sums to %d, want %d (valid JSON: %v)", got, got.Total(), c.Tool(tool), json.Valid(schema))
		}
		for _, fl := range Fields() {
			if got.Get(fl) < 0 {
				t.Fatalf("%s = %d", fl, got.Get(fl))
			}
		}
	})
}
