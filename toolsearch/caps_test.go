package toolsearch_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// wideShelf returns a registry with tool_search and n deferred tools
// whose descriptions' first lines are desc.
func wideShelf(t *testing.T, n int, desc func(i int) string) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry()
	tools := make([]tool.Tool, n)
	for i := range tools {
		tools[i] = tool.Tool{Name: fmt.Sprintf("mcp__wide__tool_%04d", i), Description: desc(i), Exposure: tool.Deferred}
	}
	if err := reg.Register(tools...); err != nil {
		t.Fatal(err)
	}
	r, err := search.NewBM25F(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := toolsearch.New(reg, r)
	s.SetLoadPolicy(toolsearch.ReferenceLoad)
	if err := reg.Register(s.Tool()); err != nil {
		t.Fatal(err)
	}
	return reg
}

// loaded returns the active tools but tool_search itself.
func loaded(reg *tool.Registry) []string {
	var out []string
	for _, n := range reg.ActiveNames() {
		if n != toolsearch.Name {
			out = append(out, n)
		}
	}
	return out
}

func queryArgs(q string, limit int) string {
	b, _ := json.Marshal(map[string]any{"query": q, "limit": limit})
	return string(b)
}

// TestHugeInputsGetBoundedResults checks that a 200 KB query and a
// select: of 20,000 names get a short error that does not repeat them,
// that a select: at the bound loads, and that nothing is loaded by the
// refused calls.
func TestHugeInputsGetBoundedResults(t *testing.T) {
	reg := wideShelf(t, 100, func(i int) string { return fmt.Sprintf("Handle widget number %d.", i) })
	names := make([]string, 20000)
	for i := range names {
		names[i] = fmt.Sprintf("mcp__wide__tool_%04d", i%100)
	}
	for _, c := range []struct {
		name, query, want string
	}{
		{"200 KB query", strings.Repeat("widget ", 200<<10/7), "query is 204799 bytes long; at most 4096"},
		{"20,000 select: names", "select:" + strings.Join(names, ","), "query is 420006 bytes long; at most 4096"},
		{"2,000 short select: names", "select:" + strings.Repeat("x,", 2000), "select: names 2000 tools; at most 32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, reg, queryArgs(c.query, 8))
			if !res.IsError || !strings.Contains(text(res), c.want) || len(text(res)) > 400 {
				t.Errorf("result %q (error %v), want a short error containing %q", text(res), res.IsError, c.want)
			}
			if n := len(loaded(reg)); n != 0 {
				t.Errorf("%d tools loaded", n)
			}
		})
	}
	res := call(t, reg, queryArgs("select:"+strings.Join(names[:toolsearch.MaxSelect], ","), 8))
	if res.IsError || !strings.HasPrefix(text(res), fmt.Sprintf("Loaded %d tools.", toolsearch.MaxSelect)) {
		t.Errorf("a select: of %d names: %.200q", toolsearch.MaxSelect, text(res))
	}
}

// TestResultTextIsBounded checks that the text the model sees is at most
// MaxResultBytes whatever the limit and the descriptions, with a last line
// saying what was left out, and that long first lines are cut.
func TestResultTextIsBounded(t *testing.T) {
	long := strings.Repeat("Handle every gadget and widget under the sun. ", 300) // one 14 KB line
	reg := wideShelf(t, 200, func(i int) string { return fmt.Sprintf("Widget %d. ", i) + long + "\nSecond line." })
	res := call(t, reg, queryArgs("widget gadget", 1000000))
	got := text(res)
	if res.IsError || !strings.HasPrefix(got, fmt.Sprintf("Loaded %d tools.", toolsearch.MaxLimit)) {
		t.Fatalf("result %.200q: want %d tools loaded (the limit is lowered to MaxLimit)", got, toolsearch.MaxLimit)
	}
	if len(loaded(reg)) != toolsearch.MaxLimit {
		t.Errorf("%d tools loaded, want %d", len(loaded(reg)), toolsearch.MaxLimit)
	}
	if len(got) > toolsearch.MaxResultBytes {
		t.Errorf("the result is %d bytes long", len(got))
	}
	lines := strings.Split(got, "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "(… ") || !strings.Contains(last, fmt.Sprintf("a result is limited to %d bytes", toolsearch.MaxResultBytes)) {
		t.Errorf("last line %q: want the note", last)
	}
	for _, l := range lines[1 : len(lines)-1] {
		if len(l) > toolsearch.MaxBriefBytes+100 || !strings.HasSuffix(l, "…") || strings.Contains(l, "Second line") {
			t.Errorf("line of %d bytes: %.100q…", len(l), l)
		}
	}
	// An ordinary result is untouched.
	reg = wideShelf(t, 3, func(i int) string { return fmt.Sprintf("Handle widget %d.\nDetails.", i) })
	if got := text(call(t, reg, queryArgs("widget", 8))); strings.Contains(got, "not shown") || strings.Count(got, "\n") != 3 {
		t.Errorf("ordinary result %q", got)
	}
}
