package toolshelf_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/adapter"
	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/tool"
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

// An MCP server with codemode exposure: the model writes one script that
// calls the server's tool in a loop, and only the script's result reaches
// it. The result's details keep the calls for the session and the
// metrics log.
func Example_codemode() {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "add_note", Description: "Add a note to the notebook."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "saved: " + in.Text}}}, nil, nil
		})

	shelf, err := toolshelf.New(ctx, toolshelf.Config{
		Servers: []mcpclient.ServerConfig{{Name: "notes", Server: srv, Exposure: tool.Codemode}},
	})
	if err != nil {
		panic(err)
	}
	defer shelf.Close()

	model := llmtest.New(
		llmtest.Call(llm.ToolCall{ID: "c1", Name: codemode.Name, Arguments: codemode.Arguments(`
			const saved = [];
			for (const item of ["milk", "eggs", "bread"]) {
				saved.push(await tools.mcp__notes__add_note({text: item}));
			}
			return saved.join("; ");`)}),
		llmtest.Say("Noted all three."),
	)
	a, err := shelf.Agent(ctx, toolshelf.AgentConfig{Model: model})
	if err != nil {
		panic(err)
	}
	for ev, err := range a.Run(ctx, "remember milk, eggs and bread") {
		if err != nil {
			panic(err)
		}
		if ev.Type == agent.EventToolEnd {
			d, _ := codemode.ReadDetails(ev.Message.Details)
			fmt.Printf("%s → %s (%d calls inside)\n", ev.Call.Name, llm.ContentText(ev.Message.Content, " "), len(d.Calls))
		}
	}
	// Output:
	// codemode → saved: milk; saved: eggs; saved: bread (3 calls inside)
}

// The offline provider: no key and no network. adapter.New builds its
// model: the built-in emulator answers in process, behind the adapter of
// the model's API, and its stand-in model finds the program's tool with
// tool_search, calls it and reports what it returned. Agent.Usage sums
// the requests' tokens, every part of the prompt named.
func Example_offline() {
	ctx := context.Background()
	forecast := tool.Tool{Name: "get_forecast", Description: "Get the weather forecast.", Exposure: tool.Deferred,
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("Sunny, 21 °C."), nil
		})}
	shelf, err := toolshelf.New(ctx, toolshelf.Config{Tools: []tool.Tool{forecast}})
	if err != nil {
		panic(err)
	}
	defer shelf.Close()
	a, err := shelf.Agent(ctx, toolshelf.AgentConfig{Provider: toolshelf.Provider{Name: toolshelf.Emulator}, NewModel: adapter.New})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	for ev, err := range a.Run(ctx, "what is the weather forecast") {
		if err != nil {
			panic(err)
		}
		switch {
		case ev.Type == agent.EventToolStart:
			fmt.Println("→", ev.Call.Name)
		case ev.Type == agent.EventStream && ev.Stream.Type == llm.EventTextDelta:
			fmt.Print(ev.Stream.Delta)
		}
	}
	u := a.Usage()
	fmt.Printf("\n%d requests; every prompt token is uncached, read or written: %v\n",
		u.Requests, u.TotalInput == u.Uncached+u.CacheRead+u.CacheWrite)
	// Output:
	// → tool_search
	// → get_forecast
	// get_forecast returned:
	// Sunny, 21 °C.
	// 3 requests; every prompt token is uncached, read or written: true
}
