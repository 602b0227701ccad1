package lint_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/lint"
	"github.com/toolshelf/toolshelf/tool"
)

// deepSchema nests depth object properties named "n", each with examples.
func deepSchema(depth int) string {
	return strings.Repeat(`{"type":"object","examples":[{}],"properties":{"n":`, depth) + `{"type":"string"}` +
		strings.Repeat(`}}`, depth)
}

// rawServer is a server of one tool built without catalog.Parse, whose
// check refuses the huge schemas these tests give lint: the bounds here
// are for callers that build servers themselves.
func rawServer(name, toolName, desc, schema string) *catalog.Server {
	return &catalog.Server{Name: name, Tools: []catalog.ListedTool{{Name: toolName, Description: desc, InputSchema: json.RawMessage(schema)}}}
}

func TestDeepSchemaIsWalkedToABoundedDepth(t *testing.T) {
	// Every schema level re-reads its subtree, so a walk without a depth
	// bound costs time in the square of the depth (1,000 levels took
	// seconds, 4,000 a quarter of a minute). Past the bound, subschemas
	// are neither linted nor slimmed, and are kept byte for byte.
	const depth = 1_000
	s := rawServer("deep", "read_deep", "Read a deep value.", deepSchema(depth))
	fs := findings(t, lint.RuleExamples, s)
	if len(fs) == 0 || len(fs) >= depth {
		t.Fatalf("%d examples findings for %d levels, want some, and fewer than the levels", len(fs), depth)
	}
	if fs[0].Path != "" || !strings.HasPrefix(fs[1].Path, "n") {
		t.Errorf("the shallow levels are not linted: %v", where(fs[:2]))
	}
	tools := s.AsTools(tool.NewNamer(), tool.Deferred)
	sl, err := lint.Slim(tools[0])
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(sl.Schema) {
		t.Fatalf("slimmed schema is not JSON")
	}
	if len(sl.Changes) != len(fs) {
		t.Errorf("Slim removed %d examples, lint reported %d", len(sl.Changes), len(fs))
	}
	rest := strings.Repeat(`{"type":"object","examples":[{}],"properties":{"n":`, depth-len(fs))
	if !strings.Contains(string(sl.Schema), rest) {
		t.Errorf("the levels past the bound are not kept byte for byte")
	}
}

// wideObjects is a schema of n object properties, each wrapping one
// property; the last wraps a name that collides with a sibling.
func wideObjects(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		fmt.Fprintf(&b, `"group%d":{"type":"object","description":"Group %d.","properties":{"inner%d":{"type":"string"}}},`, i, i, i)
	}
	b.WriteString(`"last":{"type":"object","properties":{"group0":{"type":"string"}}}}}`)
	return b.String()
}

func TestNestingAmongManySiblings(t *testing.T) {
	s := rawServer("wide", "set_groups", "Set the groups.", wideObjects(2_000))
	fs := findings(t, lint.RuleNesting, s)
	if len(fs) != 2_000 {
		t.Errorf("%d nesting findings, want 2000 (every group but the colliding last)", len(fs))
	}
	for _, f := range fs {
		if f.Path == "last" {
			t.Errorf("a wrapper whose property collides with a sibling is reported: %+v", f)
		}
	}
}

// BenchmarkLintWideSchema lints one tool of 1,000, 10,000 and 40,000
// object properties with every rule: the cost grows linearly.
func BenchmarkLintWideSchema(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 40_000} {
		s := rawServer("wide", "set_groups", "Set the groups.", wideObjects(n))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := lint.Run([]*catalog.Server{s}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
