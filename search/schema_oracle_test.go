package search

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/catalog/builtin"
)

// The schema reader the index used before its own tokenizer: the same
// recursion over encoding/json's Decoder.Token, kept as the oracle that
// FuzzSchemaReaderOracle compares parseSchema with, for any caps.

// oracleReader is the former schemaReader.
type oracleReader struct {
	dec   *json.Decoder
	left  int
	depth int
	cut   bool
}

// oracleParseSchema is the former parseSchema, with the caps as arguments.
func oracleParseSchema(data []byte, caps schemaCaps) (*node, error) {
	r := oracleReader{left: caps.values, depth: caps.depth}
	if len(data) > caps.bytes {
		data, r.cut = data[:caps.bytes], true
	}
	r.dec = json.NewDecoder(bytes.NewReader(data))
	r.dec.UseNumber()
	n, err := r.value(0)
	if err != nil && n != nil && (errors.Is(err, errSchemaFull) || r.cut) {
		return n, nil
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

func (r *oracleReader) value(depth int) (*node, error) {
	if r.left <= 0 {
		return nil, errSchemaFull
	}
	tok, err := r.dec.Token()
	if err != nil {
		return nil, err
	}
	r.left--
	switch t := tok.(type) {
	case json.Delim:
		if depth >= r.depth {
			return &node{kind: 'x'}, oracleSkipValue(r.dec)
		}
		if t == '{' {
			n := &node{kind: 'o'}
			err := r.members(n, depth)
			orderIndexKeysFirst(n)
			return n, err
		}
		n := &node{kind: 'a'}
		for r.dec.More() {
			v, err := r.value(depth + 1)
			if v != nil {
				n.elems = append(n.elems, v)
			}
			if err != nil {
				return n, err
			}
		}
		_, err := r.dec.Token()
		return n, err
	case string:
		return &node{kind: 's', str: t}, nil
	}
	return &node{kind: 'x'}, nil
}

func (r *oracleReader) members(n *node, depth int) error {
	for r.dec.More() {
		kt, err := r.dec.Token()
		if err != nil {
			return err
		}
		key, _ := kt.(string)
		v, err := r.value(depth + 1)
		if v != nil {
			n.set(key, v)
		}
		if err != nil {
			return err
		}
	}
	_, err := r.dec.Token()
	return err
}

func oracleSkipValue(dec *json.Decoder) error {
	for open := 1; open > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				open++
			} else {
				open--
			}
		}
	}
	return nil
}

// diffNodes describes the first difference between two schema trees, or
// returns "" when they are the same: kinds, strings, keys in order, index
// maps and values.
func diffNodes(path string, a, b *node) string {
	switch {
	case a == nil && b == nil:
		return ""
	case a == nil || b == nil:
		return fmt.Sprintf("%s: %v against %v", path, a, b)
	case a.kind != b.kind || a.str != b.str:
		return fmt.Sprintf("%s: %c %q against %c %q", path, a.kind, a.str, b.kind, b.str)
	case !slices.Equal(a.keys, b.keys):
		return fmt.Sprintf("%s: keys %q against %q", path, a.keys, b.keys)
	case len(a.vals) != len(b.vals) || len(a.elems) != len(b.elems):
		return fmt.Sprintf("%s: %d values, %d elements against %d, %d", path, len(a.vals), len(a.elems), len(b.vals), len(b.elems))
	case !maps.Equal(a.index, b.index) || (a.index == nil) != (b.index == nil):
		return fmt.Sprintf("%s: key index %v against %v", path, a.index, b.index)
	}
	for i := range a.vals {
		if d := diffNodes(path+"."+a.keys[i], a.vals[i], b.vals[i]); d != "" {
			return d
		}
	}
	for i := range a.elems {
		if d := diffNodes(fmt.Sprintf("%s[%d]", path, i), a.elems[i], b.elems[i]); d != "" {
			return d
		}
	}
	return ""
}

// fuzzCaps returns the caps a fuzz input asks for: the defaults where it
// gives zero, small ones otherwise, so that the fuzzer reaches each cap.
func fuzzCaps(bytesCap, valuesCap uint16, depthCap uint8) schemaCaps {
	caps := defaultSchemaCaps
	if bytesCap > 0 {
		caps.bytes = int(bytesCap)
	}
	if valuesCap > 0 {
		caps.values = int(valuesCap)
	}
	if depthCap > 0 {
		caps.depth = int(depthCap)
	}
	return caps
}

// FuzzSchemaReaderOracle reads arbitrary bytes with the schema reader and
// with the encoding/json reader it replaced, under the same caps (the
// defaults, or small ones that the fuzzer picks): both must refuse the
// same inputs and return the same tree, or the same front of one past a
// cap.
func FuzzSchemaReaderOracle(f *testing.F) {
	for _, s := range []string{
		``, ` `, `null`, `nul`, `nullx`, `true false`, `1`, `-`, `-0`, `01`, `1.`, `1.5e`, `1.5E+3`, `-12.5e-3,`,
		`"s"`, `"s`, `"\q"`, `"\u12"`, `"\u12G4"`, "\"a\x01\"", "\"\xff\xfe ok\"", `"\ud800"`, `"\ud800\u0041"`,
		`"\ud83d\ude00"`, `"\udc00\ud800"`, `"\ud800\\u0041"`, `"\/\b\f\n\r\t\"\\"`,
		`[]`, `{}`, `[1,]`, `[,1]`, `[1 2]`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `{"a":}`, `{"a"}`, `{"a":1 "b":2}`,
		`]`, `}`, `{]`, `[}`, `{"a":[1,{"b":tru}]}`, `{"a":1}{"b":2}`, `{"a":1} trailing`,
		`{"a":1,"a":{"b":"c"},"2":0,"10":0,"01":0,"4294967294":0,"4294967295":0,"-1":0,"":0}`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k3":9,"1":10}`,
		`{"properties":{"z":{},"a":{"description":"\ud800\u0000"}}} trailing`,
		strings.Repeat(`{"a":`, 100) + `"deep"` + strings.Repeat(`}`, 100),
		strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70), strings.Repeat(`[{"k":`, 40),
		strings.Repeat(`[`, 70) + `"x` + strings.Repeat(`]`, 70),
	} {
		f.Add([]byte(s), uint16(0), uint16(0), uint8(0))
		f.Add([]byte(s), uint16(len(s)/2+1), uint16(3), uint8(2))
	}
	f.Add(wideSchema(40), uint16(0), uint16(17), uint8(0))
	f.Add(wideSchema(40), uint16(300), uint16(0), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, bytesCap, valuesCap uint16, depthCap uint8) {
		caps := fuzzCaps(bytesCap, valuesCap, depthCap)
		got, gotErr := parseSchemaCaps(data, caps, nil)
		want, wantErr := oracleParseSchema(data, caps)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("caps %+v: error %v, the encoding/json reader's %v", caps, gotErr, wantErr)
		}
		if d := diffNodes("$", got, want); d != "" {
			t.Fatalf("caps %+v: trees differ at %s", caps, d)
		}
	})
}

// TestSchemaReaderOracleCorpus reads every schema of the built-in catalog
// with both readers: the trees must be the same, also when the nodes come
// from an arena that every schema before lent and took back.
func TestSchemaReaderOracleCorpus(t *testing.T) {
	t.Parallel()
	var arena nodeArena
	fsys := builtin.FS()
	names, err := fs.Glob(fsys, "*.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no built-in catalog files (%v)", err)
	}
	schemas := 0
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		var file struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(data, &file); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, tl := range file.Tools {
			got, gotErr := parseSchema(tl.InputSchema)
			want, wantErr := oracleParseSchema(tl.InputSchema, defaultSchemaCaps)
			if gotErr != nil || wantErr != nil {
				t.Fatalf("%s %s: errors %v and %v", name, tl.Name, gotErr, wantErr)
			}
			if d := diffNodes("$", got, want); d != "" {
				t.Fatalf("%s %s: trees differ at %s", name, tl.Name, d)
			}
			lent, err := parseSchemaCaps(tl.InputSchema, defaultSchemaCaps, &arena)
			if err != nil {
				t.Fatalf("%s %s: from the arena: %v", name, tl.Name, err)
			}
			if d := diffNodes("$", lent, want); d != "" {
				t.Fatalf("%s %s: from the arena, trees differ at %s", name, tl.Name, d)
			}
			arena.reset()
			schemas++
		}
	}
	if schemas < 1000 {
		t.Fatalf("read %d schemas, want the catalog's 1,564", schemas)
	}
}
