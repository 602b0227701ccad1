package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// objectDefaultsByEncodingJSON is withObjectDefaults as it was, decoding
// with encoding/json alone: the oracle of TestObjectDefaultsDecoder.
func objectDefaultsByEncodingJSON(s json.RawMessage) (json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(s, &top); err != nil {
		return nil, fmt.Errorf(`"inputSchema": %v`, err)
	}
	if t, ok := top["type"]; ok && string(t) != `"object"` {
		return nil, fmt.Errorf(`"inputSchema" must have "type": "object", not %s`, t)
	}
	var prefix string
	if _, ok := top["type"]; !ok {
		prefix += `"type":"object",`
	}
	if _, ok := top["properties"]; !ok {
		prefix += `"properties":{},`
	}
	if prefix == "" {
		return s, nil
	}
	if len(top) == 0 {
		prefix = strings.TrimSuffix(prefix, ",")
	}
	return append(append([]byte{'{'}, prefix...), s[1:]...), nil
}

// TestObjectDefaultsDecoder: withObjectDefaults, which reads with jsonscan
// or decodes with segmentio/encoding, gives what it gave decoding with
// encoding/json, for
// every input schema of the built-in catalog and for top levels that test
// a decoder: repeated, escaped and differently cased keys, keys in nested
// values, and malformed JSON (which the callers never pass: schema has
// compacted it).
func TestObjectDefaultsDecoder(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("builtin", "mcp", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no built-in catalog files: %v", err)
	}
	var schemas []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Tools []struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tl := range doc.Tools {
			if tl.InputSchema != nil {
				schemas = append(schemas, string(tl.InputSchema))
			}
		}
	}
	schemas = append(schemas,
		`{}`, `{"type":"object"}`, `{"properties":{}}`, `{"type":"string"}`, `{"type":null}`,
		`{"type":["object"]}`, `{"type":"object","type":"string"}`, `{"type":"string","type":"object"}`,
		`{"typ\u0065":"string"}`, `{"\u0074ype":"object"}`, `{"Type":"string","PROPERTIES":{}}`,
		`{"type" : "object" , "properties" : { } }`, `{"type":"\u006fbject"}`,
		`{"description":"type","items":{"type":"string","properties":{}}}`,
		`{"properties":null}`, `{"properties":{"type":{"type":"string"}}}`,
		`{"é":1,"type":"object"}`, `{"type":"object"`, `{"type":}`, `{"a":1}x`, `{"a":"\ud800"}`,
		`{"\ud800":1,"type":"object"}`, "{\"\xff\":1}", "{\"type\":\"object\",\"d\":\"\xff\"}", ` {"a":1}`,
		`{"a":`+strings.Repeat("[", 1001)+strings.Repeat("]", 1001)+`}`, `{"type":"object","type":"object","properties":{},"properties":1}`)
	scanned := 0
	for _, s := range schemas {
		want, wantErr := objectDefaultsByEncodingJSON(json.RawMessage(s))
		got, gotErr := withObjectDefaults(json.RawMessage(s))
		if string(want) != string(got) || fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
			t.Errorf("withObjectDefaults(%s) = %s, %v; encoding/json gives %s, %v", s, got, gotErr, want, wantErr)
		}
		// As inputSchema reads a compact schema that compactSchema scanned.
		var compact bytes.Buffer
		if json.Compact(&compact, []byte(s)) != nil {
			continue
		}
		if c, ok, _ := compactSchema(compact.Bytes(), "inputSchema"); ok {
			scanned++
			want, wantErr := objectDefaultsByEncodingJSON(c)
			if got, gotErr := objectDefaults(c, true); string(want) != string(got) || fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
				t.Errorf("objectDefaults(%s, scanned) = %s, %v; encoding/json gives %s, %v", c, got, gotErr, want, wantErr)
			}
		}
	}
	if len(schemas) < 1000 || scanned < 1000 {
		t.Fatalf("only %d schemas, %d of them scanned", len(schemas), scanned)
	}
}

// TestSchemaCompacts: schema, which copies a compact schema that jsonscan
// reads, gives what json.Compact gives, errors included, for compact and
// spaced schemas, values that are not objects and malformed JSON.
func TestSchemaCompacts(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":"c d"}]}`, `{ "a" : 1 }`, "{\n\t\"a\":\"\\\"\"\r\n}", `[1]`, `"s"`, `1`,
		`{"a":1`, `{"a":1}x`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"a":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`} {
		var buf bytes.Buffer
		var want json.RawMessage
		wantErr := json.Compact(&buf, []byte(s))
		switch {
		case wantErr != nil:
			wantErr = fmt.Errorf("%q: %v", "inputSchema", wantErr)
		case buf.Bytes()[0] != '{':
			wantErr = fmt.Errorf("%q must be a JSON Schema object", "inputSchema")
		default:
			want = buf.Bytes()
		}
		got, err := schema(json.RawMessage(s), "inputSchema")
		if string(got) != string(want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("schema(%q) = %s, %v; want %s, %v", s, got, err, want, wantErr)
		}
	}
}
