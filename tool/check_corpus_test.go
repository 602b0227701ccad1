package tool

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// corpusMaxima are the largest figures of the built-in catalog's tools, as
// the doc comment of the caps quotes them: the caps must stay well above
// them, so that no real tool is refused.
var corpusMaxima = struct {
	description, schema, properties, subschemas, depth int
}{description: 7011, schema: 12120, properties: 69, subschemas: 89, depth: 21}

// TestCapsAboveTheCorpus measures every tool of the built-in catalog as
// the check does, checks that every one passes and renders as it is, that
// the maxima are the ones the caps' documentation quotes and that each cap
// is at least twice its maximum.
func TestCapsAboveTheCorpus(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../catalog/builtin/mcp/*.json")
	if err != nil || len(files) < 50 {
		t.Fatalf("built-in catalog files: %d, %v", len(files), err)
	}
	var desc, schema, props, schemas, depth, tools int
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tl := range doc.Tools {
			tools++
			var b bytes.Buffer
			if err := json.Compact(&b, tl.InputSchema); err != nil {
				t.Fatalf("%s %s: %v", f, tl.Name, err)
			}
			params := b.Bytes()
			// As catalog.Parse does for schemas without a type.
			var top map[string]json.RawMessage
			if err := json.Unmarshal(params, &top); err != nil {
				t.Fatal(err)
			}
			switch _, ok := top["type"]; {
			case len(top) == 0:
				params = []byte(`{"type":"object"}`)
			case !ok:
				params = append([]byte(`{"type":"object",`), params[1:]...)
			}
			if err := CheckDefinition(tl.Description, params); err != nil {
				t.Errorf("%s %s refused: %v", filepath.Base(f), tl.Name, err)
			}
			// Real schemas, those that declare draft-07 included, go to
			// providers byte for byte: requests do not change.
			if r, err := RenderSchema(params); err != nil || !bytes.Equal(r.Schema, params) || len(r.Repairs) > 0 {
				t.Errorf("%s %s renders as %.200s, repairs %v, error %v", filepath.Base(f), tl.Name, r.Schema, r.Repairs, err)
			}
			d, _ := jsonDepth(params)
			var v any
			if err := json.Unmarshal(params, &v); err != nil {
				t.Fatal(err)
			}
			w := &schemaWalker{}
			w.schema(v, "")
			desc, schema = max(desc, len(tl.Description)), max(schema, len(params))
			props, depth = max(props, w.props), max(depth, d)
			schemas = max(schemas, w.schemas)
		}
	}
	if tools != 1564 {
		t.Errorf("measured %d tools, want the catalog's 1,564", tools)
	}
	got := corpusMaxima
	got.description, got.schema, got.properties, got.subschemas, got.depth = desc, schema, props, schemas, depth
	if got != corpusMaxima {
		t.Errorf("corpus maxima = %+v, the caps' documentation says %+v: update both", got, corpusMaxima)
	}
	for _, c := range []struct {
		name     string
		cap, max int
	}{
		{"MaxDescriptionBytes", MaxDescriptionBytes, desc},
		{"MaxSchemaBytes", MaxSchemaBytes, schema},
		{"MaxSchemaProperties", MaxSchemaProperties, props},
		{"MaxSubschemas", MaxSubschemas, schemas},
		{"MaxSchemaDepth", MaxSchemaDepth, depth},
	} {
		if c.cap < 2*c.max {
			t.Errorf("%s = %d is not at least twice the corpus's %d", c.name, c.cap, c.max)
		}
	}
}
