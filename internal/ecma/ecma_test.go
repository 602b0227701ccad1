package ecma

import (
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestLookaheadPatterns(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(Engine)
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"name": map[string]any{"type": "string", "pattern": "^(?!.*[Ll]inear).*$"},
	}}
	if err := c.AddResource(SchemaURL, schema); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(SchemaURL)
	if err != nil {
		t.Fatalf("a lookahead pattern must compile: %v", err)
	}
	if err := s.Validate(map[string]any{"name": "bug report"}); err != nil {
		t.Errorf("valid name refused: %v", err)
	}
	err = s.Validate(map[string]any{"name": "Linear import"})
	if err == nil {
		t.Error("the negative lookahead did not apply")
	} else if strings.Contains(err.Error(), "file://") {
		t.Errorf("the message names a file: %v", err)
	}
	if _, err := Engine("(unclosed"); err == nil {
		t.Error("an invalid pattern compiled")
	}
}
