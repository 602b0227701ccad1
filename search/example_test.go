package search_test

import (
	"fmt"

	"github.com/toolshelf/toolshelf/search"
)

func ExampleBM25F() {
	r, err := search.NewBM25F(nil)
	if err != nil {
		panic(err)
	}
	r.Add(
		search.Document{Name: "mcp__tracker__create_ticket", OriginalName: "create_ticket",
			Description: "Open a new ticket in the tracker.", Namespace: search.Namespace{Name: "mcp__tracker"}},
		search.Document{Name: "mcp__tracker__list_tickets", OriginalName: "list_tickets",
			Description: "List tickets.", Namespace: search.Namespace{Name: "mcp__tracker"}},
		search.Document{Name: "mcp__files__read_file", OriginalName: "read_file",
			Description: "Read a file from disk.", Namespace: search.Namespace{Name: "mcp__files"}},
	)
	for _, q := range []string{"create an issue", "在 tracker 里新建工单", "read_file", "zebra"} {
		res := r.Search(search.Query{Text: q, Limit: 1})
		if len(res.Hits) == 0 {
			fmt.Printf("%s → nothing. %s\n", q, res.Hint)
			continue
		}
		fmt.Printf("%s → %s (exact: %v)\n", q, res.Hits[0].Name, res.Hits[0].Exact)
	}
	// Output:
	// create an issue → mcp__tracker__create_ticket (exact: false)
	// 在 tracker 里新建工单 → mcp__tracker__create_ticket (exact: false)
	// read_file → mcp__files__read_file (exact: true)
	// zebra → nothing. No tool mentions "zebra".
}
