package tokens_test

import (
	"testing"

	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
)

// TestBreakdownCorpus checks the sum on every tool of the built-in
// catalog and that the corpus has every field.
func TestBreakdownCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("breaks down every tool of the corpus; go test without -short runs it")
	}
	c, err := tokens.Default()
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	if err := builtin.Load(reg, tool.NewNamer()); err != nil {
		t.Fatal(err)
	}
	var sum tokens.Breakdown
	total := 0
	for _, tl := range reg.Tools() {
		d := tl.Declaration()
		b := c.Breakdown(d)
		if n := c.Tool(d); b.Total() != n {
			t.Errorf("%s: Breakdown %+v sums to %d, want %d", tl.Name, b, b.Total(), n)
		}
		if b.Name == 0 {
			t.Errorf("%s: no name tokens: %+v", tl.Name, b)
		}
		sum.Add(b)
		total += c.Tool(d)
	}
	if reg.Len() < 1500 {
		t.Fatalf("%d tools, %d tokens, breakdown %+v", reg.Len(), total, sum)
	}
	for _, f := range tokens.Fields() {
		if sum.Get(f) == 0 {
			t.Errorf("the corpus has no %s tokens: %+v", f, sum)
		}
	}
	t.Logf("%d tools, %d tokens: %+v", reg.Len(), total, sum)
}
