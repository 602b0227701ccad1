package toolsearch_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

func ExampleSearcher() {
	reg := tool.NewRegistry()
	reg.Register(
		tool.Tool{Name: "read", Description: "Read a file."},
		tool.Tool{Name: "mcp__tracker__create_issue", Description: "Create an issue.", Exposure: tool.Deferred},
		tool.Tool{Name: "mcp__tracker__close_issue", Description: "Close an issue.", Exposure: tool.Deferred},
	)
	ranker, _ := search.NewBM25F(nil)
	s := toolsearch.New(reg, ranker)
	reg.Register(s.Tool())

	fmt.Println("active:", reg.ActiveNames())
	ts, _ := reg.Get(toolsearch.Name)
	res, _ := ts.Handler.Call(context.Background(), json.RawMessage(`{"query": "open a new issue", "limit": 1}`))
	fmt.Println(res.Content[0].Text)
	fmt.Println("active:", reg.ActiveNames())
	// Output:
	// active: [read tool_search]
	// Loaded 1 tool. They are available from your next call:
	// - mcp__tracker__create_issue: Create an issue.
	// active: [read tool_search mcp__tracker__create_issue]
}
