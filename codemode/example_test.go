package codemode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// A Runner over a registry and tool_search's index runs a script without
// an agent, as a gateway would: the script searches for a tool, calls it
// for each item and returns a summary.
func ExampleRunner() {
	reg := tool.NewRegistry()
	if err := reg.Register(tool.Tool{Name: "upper", Description: "Convert text to upper case.", Exposure: tool.Codemode,
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Handler: tool.HandlerFunc(func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
			var a struct{ Text string }
			if err := json.Unmarshal(args, &a); err != nil {
				return nil, err
			}
			return tool.TextResult(strings.ToUpper(a.Text)), nil
		})}); err != nil {
		panic(err)
	}
	ranker, err := search.New(search.ModeToolshelf, nil)
	if err != nil {
		panic(err)
	}
	r, err := codemode.New(codemode.Config{Registry: reg, Searcher: toolsearch.New(reg, ranker)})
	if err != nil {
		panic(err)
	}
	res := r.Run(context.Background(), `
		const [hit] = await searchTools("upper case text");
		const out = [];
		for (const w of ["a", "b"]) out.push(await tools[hit.name]({text: w}));
		return hit.name + ": " + out.join(",");`)
	fmt.Println(res.Text(), len(res.Calls), res.Err)
	// Output:
	// upper: A,B 2 <nil>
}
