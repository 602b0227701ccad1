package mcpclient_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/tool"
)

// A server in the same process, connected in memory: its tools register on
// the shelf under mcp__<server>__ names, deferred until something loads
// them, and calls go through the MCP session.
func ExampleNewManager() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "add_note", Description: "Add a note."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "saved: " + in.Text}}}, nil, nil
		})

	ctx := context.Background()
	reg := tool.NewRegistry()
	m, err := mcpclient.NewManager(&mcpclient.Config{Servers: []mcpclient.ServerConfig{
		{Name: "notes", Server: srv},
	}}, reg, nil, mcpclient.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	m.Start(ctx)
	if err := m.WaitAll(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range m.Servers() {
		fmt.Println(st.Name, st.State, st.Tools, "tool,", st.Exposure)
	}
	t, _ := reg.Get("mcp__notes__add_note")
	fmt.Println(t.Name, t.Exposure, "active:", reg.IsActive(t.Name))
	res, err := t.Handler.Call(ctx, []byte(`{"text":"buy milk"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].Text)
	// Output:
	// notes connected 1 tool, deferred
	// mcp__notes__add_note deferred active: false
	// saved: buy milk
}

// A configuration built in a program is checked when the Manager is made:
// a server with nothing to connect to is an error, not a silent failure.
func ExampleServerConfig_Check() {
	_, err := mcpclient.NewManager(&mcpclient.Config{Servers: []mcpclient.ServerConfig{{Name: "notes"}}},
		tool.NewRegistry(), nil, mcpclient.Options{})
	fmt.Println(err)
	// Output:
	// MCP server "notes": nothing to connect to: set Command (a stdio server), URL (streamable HTTP), Server (an *mcp.Server in this process) or Transport
}
