package codemode_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/tool"
)

// manyTools registers n codemode tools in each of the namespaces.
func manyTools(t *testing.T, n int, namespaces ...string) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry()
	for _, name := range namespaces {
		ns := &tool.Namespace{Name: "mcp__" + name, Description: "The " + name + " server"}
		for i := range n {
			if err := reg.Register(tool.Tool{Name: fmt.Sprintf("mcp__%s__tool_%d", name, i), Namespace: ns, Exposure: tool.Codemode,
				Description: strings.Repeat("word ", i+1) + "does a thing.",
				Parameters:  json.RawMessage(`{"type":"object","properties":{"b":{"type":"number"},"a":{"type":"string"}},"required":["a"]}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return reg
}

// TestDescriptionRoundRobin: within a small budget every namespace is
// represented before any is complete, cheapest tools first, and the
// namespaces that lost tools say so.
func TestDescriptionRoundRobin(t *testing.T) {
	reg := manyTools(t, 5, "beta", "alpha")
	r, err := codemode.New(codemode.Config{Registry: reg, Budget: 80,
		Namespaces: []tool.Namespace{{Name: "mcp__gamma", Description: "Not connected yet"}}})
	if err != nil {
		t.Fatal(err)
	}
	d := r.Description()
	for _, want := range []string{
		"## mcp__alpha: The alpha server (some tools not listed)\n- tools.mcp__alpha__tool_0({a: string, b?: number}): word does a thing.",
		"## mcp__beta: The beta server (some tools not listed)\n- tools.mcp__beta__tool_0({a: string, b?: number}): word does a thing.",
		"## mcp__gamma: Not connected yet (tools not listed)",
		"30s, 256 MiB of memory, 10000 output tokens, 1000 tool calls (8 at a time)",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("the description lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "tool_4") {
		t.Errorf("the most expensive tools are listed within a budget of 80 tokens:\n%s", d)
	}
	if a, b := strings.Count(d, "tools.mcp__alpha__"), strings.Count(d, "tools.mcp__beta__"); a < 1 || b < 1 || a-b > 1 || b-a > 1 {
		t.Errorf("alpha lists %d tools and beta %d, want at least one each and a round apart at most:\n%s", a, b, d)
	}
	whole, err := codemode.New(codemode.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if d := whole.Description(); strings.Contains(d, "not listed)") || !strings.Contains(d, "mcp__beta__tool_4") {
		t.Errorf("with the default budget every tool is listed:\n%s", d)
	}
}

// TestDescriptionIsComputedOnce: tools registered, loaded or withdrawn
// after the Runner is made do not change its description, nor its
// tool's.
func TestDescriptionIsComputedOnce(t *testing.T) {
	reg := manyTools(t, 2, "alpha")
	r, err := codemode.New(codemode.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	before := r.Tool().Description
	reg.Activate("mcp__alpha__tool_0")
	if err := reg.Register(tool.Tool{Name: "mcp__late__x", Exposure: tool.Codemode, Namespace: &tool.Namespace{Name: "mcp__late"}},
		tool.Tool{Name: "mcp__alpha__tool_1", Exposure: tool.Hidden}); err != nil {
		t.Fatal(err)
	}
	if after := r.Tool().Description; after != before || r.Description() != before {
		t.Errorf("the description changed:\n%s\n----\n%s", before, after)
	}
}

// TestReachOfAScript: a script reaches the MCP names its code contains,
// or everything when it searches or describes; the tool's reach of a
// call reads its arguments.
func TestReachOfAScript(t *testing.T) {
	r, err := codemode.New(codemode.Config{Registry: tool.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	reach := r.Tool().Reaches
	if !reach.IsZero() {
		t.Errorf("without arguments the tool reaches %+v, want nothing", reach)
	}
	for code, want := range map[string]tool.Reach{
		`return await tools.mcp__fs__read_file({path: "x"})`:                                       {Names: []string{"mcp__fs__read_file"}},
		`const a = await tools.mcp__a__x({}); await tools.mcp__b__y(a); await tools.mcp__a__x({})`: {Names: []string{"mcp__a__x", "mcp__b__y"}},
		`return (await describeNamespace("mcp__fs")).tools`:                                        {All: true},
		`return await searchTools("issue")`:                                                        {All: true},
		`return 1 + 1`:                                                                             {},
	} {
		got := codemode.Reach(code)
		if got.All != want.All || fmt.Sprint(got.Names) != fmt.Sprint(want.Names) {
			t.Errorf("Reach(%s) = %+v, want %+v", code, got, want)
		}
		got = reach.For(codemode.Arguments(code))
		if got.All != want.All || fmt.Sprint(got.Names) != fmt.Sprint(want.Names) {
			t.Errorf("the tool's reach of %s = %+v, want %+v", code, got, want)
		}
	}
}
