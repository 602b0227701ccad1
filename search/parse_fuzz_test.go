package search

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/catalog/builtin"
)

// schemaTimeBound is how long FuzzParseSchema lets one schema take while
// fuzzing: far above what the linear, capped parser needs for the largest
// input the target builds (65,535 properties, about a megabyte), far below
// what a quadratic one did (13 s).
const schemaTimeBound = 2 * time.Second

// fuzzing reports whether the test binary runs the fuzzing engine (-fuzz),
// rather than the seed corpus of a plain go test, which asserts no times.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// checkNode compares a parsed schema node with the value encoding/json
// decodes (UseNumber) at the same place: the same kind; objects with the
// same keys, each once, canonical array-index keys first in increasing
// order, and the values of the last occurrence; arrays of the same length;
// the same strings. Objects and arrays nested maxSchemaDepth deep or more
// are skipped ('x').
func checkNode(t *testing.T, path string, n *node, v any, depth int) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		if depth >= maxSchemaDepth {
			if n.kind != 'x' {
				t.Fatalf("%s: an object at depth %d kept (kind %c)", path, depth, n.kind)
			}
			return
		}
		if n.kind != 'o' || len(n.keys) != len(v) || len(n.vals) != len(n.keys) {
			t.Fatalf("%s: kind %c with %d keys, want an object of %d", path, n.kind, len(n.keys), len(v))
		}
		indexKeys := true
		last := -1
		for i, k := range n.keys {
			if slices.Index(n.keys[:i], k) >= 0 {
				t.Fatalf("%s: key %q twice in %q", path, k, n.keys)
			}
			idx, isIndex := arrayIndex(k)
			switch {
			case isIndex && !indexKeys:
				t.Fatalf("%s: index key %q after other keys in %q", path, k, n.keys)
			case isIndex && int(idx) <= last:
				t.Fatalf("%s: index keys out of order in %q", path, n.keys)
			case isIndex:
				last = int(idx)
			default:
				indexKeys = false
			}
			val, ok := v[k]
			if !ok {
				t.Fatalf("%s: key %q that the object does not have", path, k)
			}
			checkNode(t, path+"/"+k, n.vals[i], val, depth+1)
		}
	case []any:
		if depth >= maxSchemaDepth {
			if n.kind != 'x' {
				t.Fatalf("%s: an array at depth %d kept (kind %c)", path, depth, n.kind)
			}
			return
		}
		if n.kind != 'a' || len(n.elems) != len(v) {
			t.Fatalf("%s: kind %c with %d elements, want an array of %d", path, n.kind, len(n.elems), len(v))
		}
		for i, e := range v {
			checkNode(t, path+"/"+strconv.Itoa(i), n.elems[i], e, depth+1)
		}
	case string:
		if n.kind != 's' || n.str != v {
			t.Fatalf("%s: kind %c %q, want the string %q", path, n.kind, n.str, v)
		}
	default:
		if n.kind != 'x' {
			t.Fatalf("%s: kind %c for %v", path, n.kind, v)
		}
	}
}

// countValues returns the number of values in a decoded JSON value, itself
// included.
func countValues(v any) int {
	n := 1
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			n += countValues(e)
		}
	case []any:
		for _, e := range v {
			n += countValues(e)
		}
	}
	return n
}

// fuzzWideSchema returns an object schema with n properties whose schemas are
// all prop: numbered ("0", "1", …, canonical array indexes) or named
// ("p0", "p1", …).
func fuzzWideSchema(n int, prop []byte, numbered bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		if !numbered {
			b.WriteByte('p')
		}
		b.WriteString(strconv.Itoa(i))
		b.WriteString(`":`)
		b.Write(prop)
	}
	b.WriteString(`}}`)
	return b.Bytes()
}

// FuzzParseSchema parses arbitrary bytes as a tool's JSON Schema, the way
// both rankers read every indexed tool's parameters. parseSchema must not
// panic; it must read any valid JSON, into the tree encoding/json agrees
// with (checkNode) when the schema is within maxSchemaBytes and
// maxSchemaValues, and keep at most maxSchemaValues values of a larger
// one. With wide > 0 the input is instead the schema of each
// of wide properties of an object schema (numbered when wide is odd), so
// that the fuzzer also tries schemas of up to 65,535 properties while
// keeping its inputs small. While fuzzing, one parse may take at most
// schemaTimeBound: the parse must stay linear in the number of keys.
func FuzzParseSchema(f *testing.F) {
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
		f.Add([]byte(file.Tools[0].InputSchema), uint16(0))
	}
	for _, s := range []string{
		``, `null`, `1`, `"s"`, `[]`, `{}`, `{"a":1,"a":{"b":"c"},"2":0,"10":0,"01":0,"4294967294":0,"4294967295":0,"-1":0,"":0}`,
		`{"properties":{"z":{},"a":{"description":"\ud800\u0000"}}} trailing`, `{"a":`, `[1,2,`, `{"a" 1}`, `{1:2}`,
		strings.Repeat(`{"a":`, 100) + `"deep"` + strings.Repeat(`}`, 100),
		strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70), strings.Repeat(`[{"k":`, 40),
	} {
		f.Add([]byte(s), uint16(0))
	}
	f.Add([]byte(`{"type":"string","description":"A value."}`), uint16(2000))
	f.Add([]byte(`{}`), uint16(2001))
	timed := fuzzing()
	f.Fuzz(func(t *testing.T, data []byte, wide uint16) {
		if wide > 0 {
			if !json.Valid(data) {
				data = []byte(`{}`)
			}
			data = fuzzWideSchema(int(wide), data, wide%2 == 1)
		}
		start := time.Now()
		n, err := parseSchema(data)
		if elapsed := time.Since(start); timed && elapsed > schemaTimeBound {
			t.Fatalf("parsing a schema of %d bytes took %v (bound %v)", len(data), elapsed, schemaTimeBound)
		}
		if !json.Valid(data) {
			return
		}
		if err != nil {
			t.Fatalf("valid JSON refused: %v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if len(data) <= maxSchemaBytes && countValues(v) <= maxSchemaValues {
			checkNode(t, "", n, v, 0)
		} else if kept := countNodes(n); kept > maxSchemaValues {
			t.Fatalf("%d values kept of a schema past the caps, want at most %d", kept, maxSchemaValues)
		}
	})
}

// FuzzParseSynonyms reads arbitrary synonym tables, as --synonyms FILE
// does. ParseSynonyms must not panic; an error names the line. The groups
// it returns have two or more forms, each non-empty words separated by
// single spaces, without commas; written back one group per line they read
// the same. And in the table built from them, every form of a group with
// two or more distinct analysed forms finds the group's other forms.
func FuzzParseSynonyms(f *testing.F) {
	// The built-in table, a few lines at a time: short inputs mutate and
	// minimize faster.
	lines := strings.SplitAfter(synonymsText, "\n")
	for i := 0; i < len(lines); i += 8 {
		f.Add(strings.Join(lines[i:min(i+8, len(lines))], ""))
	}
	for _, s := range []string{
		"", "\n", "# only a comment\n", "a, b", "a,b,,c\n", "a\n", "a,\n", " , \n", "pull  request ,\tpr\r\nmr, merge request # comment\n",
		"the, a, an\n", "拉取请求, pull request\n", "a#b, c\n", "x, x\n", "REPOS, repo\n", "a b c d e f, g\n", "\xff, \xfe\n", "a,\u00a0,b\n",
	} {
		f.Add(s)
	}
	_, bm, _ := fuzzRankers(f)
	an := bm.an
	f.Fuzz(func(t *testing.T, text string) {
		groups, err := ParseSynonyms(strings.NewReader(text))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("the error does not name the line: %v", err)
			}
			return
		}
		var lines []string
		for _, g := range groups {
			if len(g) < 2 {
				t.Fatalf("group %q has fewer than two forms", g)
			}
			for _, form := range g {
				if form == "" || strings.ContainsAny(form, ",#") || strings.Join(strings.Fields(form), " ") != form {
					t.Fatalf("form %q of group %q", form, g)
				}
			}
			lines = append(lines, strings.Join(g, ", "))
		}
		again, err := ParseSynonyms(strings.NewReader(strings.Join(lines, "\n")))
		if err != nil || !slices.EqualFunc(groups, again, slices.Equal) {
			t.Fatalf("written back, %q reads as %q (%v)", groups, again, err)
		}

		st := buildSynonyms(an, groups, nil)
		for _, g := range groups {
			var forms [][]string
			for _, form := range g {
				terms := an.fieldTerms(form, nil)
				if len(terms) > 0 && !slices.ContainsFunc(forms, func(f []string) bool { return slices.Equal(f, terms) }) {
					forms = append(forms, terms)
				}
			}
			if len(forms) < 2 {
				continue // nothing left to be a synonym of: the group is dropped
			}
			for _, terms := range forms {
				l, alts := st.match(terms)
				if l != len(terms) {
					t.Fatalf("form %q of group %q matches %d of its %d terms", terms, g, l, len(terms))
				}
				for _, other := range forms {
					if !slices.ContainsFunc(alts, func(a []string) bool { return slices.Equal(a, other) }) {
						t.Fatalf("form %q of group %q does not find %q: %q", terms, g, other, alts)
					}
				}
			}
		}
	})
}
