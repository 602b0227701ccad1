package standin

import (
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/tool"
)

// TestExampleArgumentsValidate: the arguments Scout and the bench's oracle
// make satisfy the schemas of the built-in catalog's tools, which the
// bench's suites call.
func TestExampleArgumentsValidate(t *testing.T) {
	servers, err := builtin.Servers()
	if err != nil {
		t.Fatal(err)
	}
	invalid, total := 0, 0
	for _, s := range servers {
		for _, tl := range s.AsTools(tool.NewNamer(), tool.Deferred) {
			total++
			args := ExampleArguments(tl.Parameters)
			c := jsonschema.NewCompiler()
			var doc any
			if err := json.Unmarshal(tl.Parameters, &doc); err != nil {
				t.Fatal(err)
			}
			if err := c.AddResource("schema.json", doc); err != nil {
				continue
			}
			sch, err := c.Compile("schema.json")
			if err != nil {
				continue // schemas the validator cannot compile are the agent's problem, not the oracle's
			}
			var v any
			_ = json.Unmarshal(args, &v)
			if err := sch.Validate(v); err != nil {
				invalid++
				if invalid <= 5 {
					t.Logf("%s: %s: %v", tl.Name, args, err)
				}
			}
		}
	}
	// Patterns and cross-field rules are out of reach of a generator;
	// the rest must validate.
	if invalid*100 > total*3 {
		t.Errorf("%d of %d tools get invalid example arguments", invalid, total)
	}
	t.Logf("%d of %d tools get invalid example arguments", invalid, total)
}
