package lint_test

import (
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/lint"
)

// TestRepairsAreReported lints tools whose schemas are written for older
// drafts, as real servers write them: each loads (toolshelf repairs what
// providers would refuse) and each repair is a warning of schema-repaired
// that says where and what; a 2020-12 schema has none.
func TestRepairsAreReported(t *testing.T) {
	doc := `{"server":"pdf","tools":[` + strings.Join([]string{
		toolJSON("read_page", "Read one page of a PDF file.",
			`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"page":{"type":"number","minimum":0,"exclusiveMinimum":true}},"required":["page"]}`),
		toolJSON("list_pages", "List the pages of a PDF file.",
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"range":{"$ref":"#/definitions/range"}},"definitions":{"range":{"type":"array","items":[{"type":"integer"},{"type":"integer"}]}}}`),
		toolJSON("count_pages", "Count the pages of a PDF file.", `{"type":"object","properties":{"path":{"type":"string"}}}`),
	}, ",") + `]}`
	s, err := catalog.Parse("pdf.json", []byte(doc))
	if err != nil || s == nil || len(s.Tools) != 3 || len(s.Refused) != 0 {
		t.Fatalf("parse: %v", err)
	}
	got := findings(t, "schema-repaired", s)
	want := []struct{ tool, path, text string }{
		{"list_pages", "", "definitions: written as $defs"},
		{"list_pages", "definitions.range", "items: an array of schemas is written as prefixItems"},
		{"read_page", "page", `exclusiveMinimum: true beside minimum 0 is draft-04's form: written as "exclusiveMinimum": 0`},
	}
	if len(got) != len(want) {
		t.Fatalf("%d findings, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		f := got[i]
		if f.Tool != w.tool || f.Path != w.path || !strings.Contains(f.Message, w.text) || f.Severity != lint.Warning || f.Fix == "" {
			t.Errorf("finding %d: %+v, want a warning for %s at %q saying %q", i, f, w.tool, w.path, w.text)
		}
	}
}
