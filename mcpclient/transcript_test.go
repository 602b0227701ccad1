package mcpclient

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/tool"
)

// TestListChangedInTheTranscript follows a tools/list_changed refresh into
// the transcript the agent writes: a changed tool is removed and added
// again, a vanished one removed, and an unchanged one not mentioned; a
// refresh that changes nothing declares nothing.
func TestListChangedInTheTranscript(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewServer("live", "")
	f := newFixture(t, memServer("live"))
	useMemServers(f.m, map[string]*mcp.Server{"live": srv})
	refreshed := make(chan struct{}, 8)
	f.m.OnChange(func() { refreshed <- struct{}{} })
	f.m.Start(f.ctx())
	// wait fails the test, rather than hanging it, when no change comes.
	wait := func(what string) {
		t.Helper()
		select {
		case <-refreshed:
		case <-f.ctx().Done():
			t.Fatalf("no change notification: %s", what)
		}
	}
	wait("the connection")
	// Loaded by tool_search:
	f.reg.Activate("mcp__live__echo", "mcp__live__pid", "mcp__live__fail")

	model := llmtest.New(llmtest.Say("1"), llmtest.Say("2"), llmtest.Say("3"))
	a, err := agent.New(agent.Config{Model: model, Tools: f.reg, SystemPrompt: "base"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(text string) []llm.Message {
		t.Helper()
		n := len(a.Messages())
		for _, err := range a.Run(f.ctx(), llm.UserText(text, 1)) {
			if err != nil {
				t.Fatal(err)
			}
		}
		return a.Messages()[n:]
	}
	run("first")

	// A refresh that lists the same tools declares nothing.
	srv.AddTool(&mcp.Tool{Name: "extra", Description: "Extra.", InputSchema: mcptest.ObjectSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	wait("the refresh after a new tool")
	if added := run("second"); len(added) != 2 || added[0].Role != llm.RoleUser {
		t.Errorf("after a refresh that changed no active tool, the run appended %+v", added)
	}

	srv.RemoveTools("pid")
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Echo, changed.", InputSchema: mcptest.ObjectSchema("text")},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	f.eventually("the refresh", func() bool {
		echo, _ := f.reg.Get("mcp__live__echo")
		pid, _ := f.reg.Get("mcp__live__pid")
		return echo.Description == "Echo, changed." && pid.Exposure == tool.Hidden
	})
	added := run("third")
	if len(added) != 3 || added[0].Role != llm.RoleSystem {
		t.Fatalf("the run appended %+v, want a system message first", added)
	}
	var removed, declared []string
	for _, r := range added[0].ToolsRemoved {
		removed = append(removed, r.Name)
	}
	for _, d := range added[0].ToolsAdded {
		declared = append(declared, d.Name+": "+d.Description)
	}
	slices.Sort(removed)
	if diff := cmp.Diff([]string{"mcp__live__echo", "mcp__live__pid"}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"mcp__live__echo: Echo, changed."}, declared); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
}
