package toolshelf_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/transcript"
)

// An MCP server's tools wait on the shelf; the model finds one with
// tool_search and calls it. The tool is declared by an update appended to
// the transcript, so every request extends the one before it: the
// provider's prompt cache keeps serving the prefix.
func Example() {
	ctx := context.Background()

	// An MCP server in this process, with one tool.
	srv := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "add_note", Description: "Add a note to the notebook."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "saved: " + in.Text}}}, nil, nil
		})

	shelf, err := toolshelf.New(ctx, toolshelf.Config{
		Servers: []mcpclient.ServerConfig{{Name: "notes", Server: srv}},
	})
	if err != nil {
		panic(err)
	}
	defer shelf.Close()

	// A scripted model stands in for a provider's: it searches, calls
	// what it found, and answers.
	model := llmtest.New(
		llmtest.Call(llm.ToolCall{ID: "c1", Name: "tool_search", Arguments: []byte(`{"query":"add a note"}`)}),
		llmtest.Call(llm.ToolCall{ID: "c2", Name: "mcp__notes__add_note", Arguments: []byte(`{"text":"buy milk"}`)}),
		llmtest.Say("Noted."),
	)
	a, err := shelf.Agent(ctx, toolshelf.AgentConfig{Model: model, SystemPrompt: "You keep notes."})
	if err != nil {
		panic(err)
	}
	for ev, err := range a.Run(ctx, "remember to buy milk") {
		if err != nil {
			panic(err)
		}
		if ev.Type == agent.EventToolEnd {
			fmt.Printf("%s → %s\n", ev.Call.Name, llm.ContentText(ev.Message.Content, " "))
		}
	}

	reqs := model.Requests()
	for i, r := range reqs {
		var names []string
		for _, t := range transcript.CurrentTools(r.Messages) {
			names = append(names, t.Name)
		}
		kept := i == 0 || slices.EqualFunc(reqs[i-1].Messages, r.Messages[:len(reqs[i-1].Messages)], equal)
		fmt.Printf("request %d declares %v; extends the previous one: %v\n", i+1, names, kept)
	}
	// Output:
	// tool_search → Loaded 1 tool. They are available from your next call:
	// - mcp__notes__add_note: Add a note to the notebook.
	// mcp__notes__add_note → saved: buy milk
	// request 1 declares [tool_search]; extends the previous one: true
	// request 2 declares [tool_search mcp__notes__add_note]; extends the previous one: true
	// request 3 declares [tool_search mcp__notes__add_note]; extends the previous one: true
}

// equal compares two messages by their JSON form.
func equal(a, b llm.Message) bool {
	x, _ := a.MarshalJSON()
	y, _ := b.MarshalJSON()
	return string(x) == string(y)
}
