package mcpclient

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/catalog/builtin"
)

// TestMarshalIsEncodingJSON: marshal writes the bytes encoding/json's
// Marshal writes, for every built-in corpus tool as the SDK hands it over
// (its schemas decoded into maps, then as rawToolSchemas leaves them) and
// for values that exercise escaping and number formatting.
func TestMarshalIsEncodingJSON(t *testing.T) {
	servers, err := builtin.Servers()
	if err != nil {
		t.Fatal(err)
	}
	var values []any
	for _, s := range servers {
		for _, e := range s.Tools {
			var in, out any
			if err := json.Unmarshal(e.InputSchema, &in); err != nil {
				t.Fatalf("%s: %v", e.Name, err)
			}
			if len(e.OutputSchema) > 0 {
				if err := json.Unmarshal(e.OutputSchema, &out); err != nil {
					t.Fatalf("%s: %v", e.Name, err)
				}
			}
			values = append(values, in, out)
			values = append(values, &mcp.Tool{Name: e.Name, Title: e.Title, Description: e.Description,
				InputSchema: rawSchema(in), OutputSchema: rawSchema(out)})
		}
	}
	values = append(values,
		map[string]any{"<a>": "x&y<z>\u2028\u2029\u0000\u001f\"\\/é😀\ufffd", "\xffkey": "\x7f\x80bad\xff",
			"n": []any{1e21, 1e20, 1e-6, 1e-7, math.Copysign(0, -1), 0.1, 123456789012345678.0, 5e-324, 1.7976931348623157e308, -1.5e-9}},
		map[string]any{"z": nil, "a": true, "m": false, "k": map[string]any{}, "l": []any{}},
		&mcp.Tool{Name: "x<y>&", Description: "a\u2028b<c>", InputSchema: json.RawMessage(`{ "a" : "<b>&" , "n": 1.50 }`)},
	)
	if len(values) < 1000 {
		t.Fatalf("only %d values from the corpus", len(values))
	}
	for i, v := range values {
		want, werr := json.Marshal(v)
		got, gerr := marshal(v)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("value %d: marshal gave %q (%v), encoding/json %q (%v)", i, got, gerr, want, werr)
		}
	}
}
