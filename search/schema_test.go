package search

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// wideSchema is an object schema with n string properties, each with a
// description, all of them required.
func wideSchema(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field%d":{"type":"string","description":"value %d"}`, i, i)
	}
	b.WriteString(`},"required":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field%d"`, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// countNodes returns the number of values in a parsed schema.
func countNodes(n *node) int {
	if n == nil {
		return 0
	}
	c := 1
	for _, v := range n.vals {
		c += countNodes(v)
	}
	for _, v := range n.elems {
		c += countNodes(v)
	}
	return c
}

func TestParseSchemaKeepsABoundedPrefix(t *testing.T) {
	t.Parallel()
	// 200,000 properties (about 11 MB): the reader keeps a bounded number of
	// values, read from the front, so the cost does not grow with the
	// schema, and what it kept is still searchable.
	data := wideSchema(200_000)
	n, err := parseSchema(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := countNodes(n); got > maxSchemaValues {
		t.Errorf("parseSchema kept %d values of an %d-byte schema, want at most %d", got, len(data), maxSchemaValues)
	}
	props := n.get("properties")
	if props == nil || len(props.keys) == 0 || props.keys[0] != "field0" {
		t.Fatalf("the front of a capped schema is lost: %+v", props)
	}
	if d := props.get("field0").get("description"); d == nil || d.str != "value 0" {
		t.Errorf("field0's description = %+v, want \"value 0\"", d)
	}
	if got := len(props.keys); got >= 200_000 {
		t.Errorf("kept all %d properties, want a prefix", got)
	}
}

func TestParseSchemaObjectKeys(t *testing.T) {
	t.Parallel()
	// Objects past the size that switches to a key index behave exactly
	// like small ones: a repeated key keeps its first position and takes
	// the last value; index-like keys come first in numeric order.
	for _, width := range []int{3, 40, 1000} {
		var b strings.Builder
		b.WriteString(`{"z":"first"`)
		var want []string
		want = append(want, "2", "10")
		want = append(want, "z")
		for i := range width {
			fmt.Fprintf(&b, `,"k%d":"v%d"`, i, i)
			want = append(want, fmt.Sprintf("k%d", i))
		}
		b.WriteString(`,"10":"ten","z":"last","2":"two","k0":"again"}`)
		n, err := parseSchema([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, n.keys); diff != "" {
			t.Errorf("width %d: keys (-want +got):\n%s", width, diff)
		}
		for key, val := range map[string]string{"z": "last", "k0": "again", "2": "two", "10": "ten", "k1": "v1"} {
			if got := n.get(key); got == nil || got.str != val {
				t.Errorf("width %d: get(%q) = %+v, want %q", width, key, got, val)
			}
		}
		if n.get("missing") != nil {
			t.Errorf("width %d: get of a missing key is not nil", width)
		}
	}
}

func TestAnalysisIsCapped(t *testing.T) {
	t.Parallel()
	r, err := NewBM25F(nil)
	if err != nil {
		t.Fatal(err)
	}
	// A 50 MB description and a schema whose descriptions hold 800 KB of
	// text: each field analyses a bounded prefix.
	desc := "Create an issue. " + strings.Repeat("word ", 10<<20) + "zebrafinch"
	long := strings.Repeat("text ", 40_000)
	params := []byte(`{"type":"object","properties":{"a":{"type":"string","description":"` + long +
		`"},"b":{"type":"string","description":"` + long + `"},"c":{"type":"string","description":"` + long +
		`"},"d":{"type":"string","description":"` + long + `"}}}`)
	a, terms := analyzeOne(r, Document{Name: "create_issue", Description: desc, Parameters: params,
		Namespace: Namespace{Name: "mcp__big", Description: desc}}, map[string][]string{})
	// A term costs at least two bytes of text ("a b" has one), so a field
	// of maxFieldText bytes has fewer than maxFieldText terms.
	for f, n := range a.lens {
		if n > maxFieldText {
			t.Errorf("field %d: %d terms, want at most %d", f, n, maxFieldText)
		}
	}
	for i, term := range terms {
		if term == "zebrafinch" && a.posts[i].tf[fieldBody] > 0 {
			t.Errorf("a word %d bytes into a description was indexed; the cap is %d", len(desc)-10, maxFieldText)
		}
	}
	if a.lens[fieldLead] == 0 || a.lens[fieldParams] == 0 {
		t.Errorf("capped fields lost their front: %v terms in the lead, %v in the parameters",
			a.lens[fieldLead], a.lens[fieldParams])
	}
	text := piDocumentText(Document{Name: "create_issue", Description: desc, Parameters: params,
		Namespace: Namespace{Name: "mcp__big", Description: desc, Instructions: desc}})
	if len(text) > 8*maxFieldText {
		t.Errorf("piDocumentText is %d bytes, want at most %d", len(text), 8*maxFieldText)
	}
}

func TestKeyIndexOfAWideSchema(t *testing.T) {
	t.Parallel()
	// 2,000 properties, the one looked for last: found through the key
	// index that objects of more than 8 keys keep.
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range 2_000 {
		fmt.Fprintf(&b, `"f%d":{"type":"string"},`, i)
	}
	b.WriteString(`"method":{"type":"string","enum":["create","update"]}}}`)
	n, err := parseSchema([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	enum := n.get("properties").get("method").get("enum")
	if enum == nil || enum.kind != 'a' || len(enum.elems) != 2 || enum.elems[1].str != "update" {
		t.Errorf("properties.method.enum = %+v, want [create update]", enum)
	}
	if n.get("properties").get("f1999") == nil || n.get("properties").get("f2000") != nil {
		t.Error("the key index finds a key that is not there or misses one that is")
	}
}

// BenchmarkWideSchema analyses one tool of 1,000, 10,000 and 40,000
// properties: the cost grows linearly up to the caps (the 40,000-property
// schema, about 2.3 MB, is read up to maxSchemaBytes).
func BenchmarkWideSchema(b *testing.B) {
	r, err := NewBM25F(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1_000, 10_000, 40_000} {
		d := Document{Name: "wide_tool", Description: "Take many values.", Parameters: wideSchema(n)}
		b.Run(fmt.Sprintf("parse/%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(d.Parameters)))
			for b.Loop() {
				if _, err := parseSchema(d.Parameters); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("bm25f/%d", n), func(b *testing.B) {
			for b.Loop() {
				analyzeOne(r, d, map[string][]string{})
			}
		})
		b.Run(fmt.Sprintf("pi/%d", n), func(b *testing.B) {
			for b.Loop() {
				piTokenize(piDocumentText(d))
			}
		})
	}
}
