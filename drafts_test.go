package toolshelf_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/tool"
)

// TestCodemodeRefusesWhatTheDeclaredSchemaForbids runs scripts on the
// front door's codemode runner against a tool whose draft-07 schema
// limits a string beside its $ref. Draft-07 ignores a keyword beside
// $ref; providers, which read every schema as 2020-12, apply it, so the
// model that wrote the script has been told the limit holds. A script
// that breaks it gets an error and the tool does not run.
func TestCodemodeRefusesWhatTheDeclaredSchemaForbids(t *testing.T) {
	var ran atomic.Int32
	schema := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s","maxLength":1}}}`
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Tools: []tool.Tool{{Name: "short", Description: "Take a short string.",
		Exposure: tool.Codemode, Parameters: json.RawMessage(schema),
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			ran.Add(1)
			return tool.TextResult("ran"), nil
		})}}})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	if shelf.Codemode() == nil {
		t.Fatal("no codemode runner for a codemode tool")
	}
	res := shelf.Codemode().Run(t.Context(), `try { return await tools.short({a: "long"}) } catch (e) { return "refused: " + e.message }`)
	if res.Err != nil || !strings.HasPrefix(res.Value, "refused: invalid arguments for tools.short: at /a: ") {
		t.Errorf("the script: %q, %v; want the call refused at /a", res.Value, res.Err)
	}
	if n := ran.Load(); n != 0 {
		t.Fatalf("the tool ran %d times", n)
	}
	if res := shelf.Codemode().Run(t.Context(), `return await tools.short({a: "x"})`); res.Err != nil || res.Value != "ran" {
		t.Errorf("a call within the limit: %q, %v", res.Value, res.Err)
	}
}
