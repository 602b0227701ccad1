package tool_test

import (
	"fmt"

	"github.com/toolshelf/toolshelf/tool"
)

// This example registers a direct tool and two deferred server tools,
// loads one of the deferred tools as tool_search would, and withdraws the
// direct tool by re-registering it as hidden.
func ExampleRegistry() {
	reg := tool.NewRegistry()
	namer := tool.NewNamer()

	names := namer.Names("github", []string{"create_issue", "list-issues"})
	err := reg.Register(
		tool.Tool{Name: "read", Description: "Read a file."},
		tool.Tool{Name: names[0], Description: "Create an issue.", Exposure: tool.Deferred,
			Origin: tool.Origin{Server: "github", Tool: "create_issue"}},
		tool.Tool{Name: names[1], Description: "List issues.", Exposure: tool.Deferred,
			Origin: tool.Origin{Server: "github", Tool: "list-issues"}},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("registered:", len(reg.Tools()))
	fmt.Println("active:", reg.ActiveNames())

	fmt.Println("loaded:", reg.Activate("mcp__github__list_issues", "no_such_tool"))
	fmt.Println("active:", reg.ActiveNames())

	reg.Register(tool.Tool{Name: "read", Exposure: tool.Hidden})
	fmt.Println("active:", reg.ActiveNames())

	o, _ := namer.Lookup("mcp__github__list_issues")
	fmt.Println("origin:", o)
	// Output:
	// registered: 3
	// active: [read]
	// loaded: [mcp__github__list_issues]
	// active: [read mcp__github__list_issues]
	// active: [mcp__github__list_issues]
	// origin: github/list-issues
}
