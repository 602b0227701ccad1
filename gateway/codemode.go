package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/tool"
)

// CodeName is the codemode surface's script tool: it runs JavaScript in
// which the upstream tools are functions (package codemode).
const CodeName = "code"

// codemodeSearchDescription is the codemode surface's tool_search: the
// meta surface's search, pointing at code instead of call_tool.
const codemodeSearchDescription = "Search the tools this gateway can reach and return the best matches with their " +
	"definitions: name, description and the JSON Schema of their arguments. Search first, then call the found tools " +
	"from a script with code (await tools.<name>(args)); a script can search too, with searchTools. Describe the " +
	"action in a few words (\"read a file\", \"create github issue\"); \"select:<name>,<name>\" returns those tools by name."

// codemodeTools are the codemode surface's tools/list entries: its
// tool_search and code, whose description is the Runner's (computed once,
// from the configuration), so the list never changes.
func (g *Gateway) codemodeTools() []*mcp.Tool {
	open := true
	return []*mcp.Tool{
		{Name: SearchName, Description: codemodeSearchDescription, InputSchema: json.RawMessage(searchSchema),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &open}},
		{Name: CodeName, Description: g.runner.Description(), InputSchema: json.RawMessage(codemode.Parameters),
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: &open}},
	}
}

func (g *Gateway) newCodemode() *mcp.Server {
	srv := mcp.NewServer(g.impl(), &mcp.ServerOptions{
		Instructions: "Find tools with tool_search, then run a script that calls them with code: " +
			"only what the script logs and returns comes back.",
		Logger: g.cfg.Logger,
		// The list never changes: no list_changed to promise.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	tools := g.codemodeTools()
	srv.AddTool(tools[0], g.searchOn(Codemode))
	srv.AddTool(tools[1], g.code)
	return srv
}

// code answers the code tool: it waits for the servers the script reaches
// (those its code names, every one when it searches or describes), runs
// it under the limits and returns what it logged and returned; a script
// that failed is an error result that says why, as is a panic of the
// runner. The request's context is the script's: a client that cancels
// the request or disconnects stops the script and its calls. Every script
// that ran, failed or was stopped leaves a metrics record. The values a
// script stores (store) are its session's: the session's later scripts
// load them (see sessionStores).
func (g *Gateway) code(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := orEmpty(req.Params.Arguments)
	code, errText := codemode.ReadCode(args)
	if errText != "" {
		return errorResult(errText), nil
	}
	if err := g.await(ctx, g.script.Reaches.For(args)); err != nil {
		g.record(Codemode, CodeName, nil, nil)
		return nil, err
	}
	if st := g.stores.of(ctx, req.Session); st != nil {
		ctx = codemode.WithStore(ctx, st)
	}
	res, panicked := g.run(ctx, code)
	if panicked != nil {
		g.record(Codemode, CodeName, nil, nil)
		g.cfg.Logger.Error("tool panicked", "tool", CodeName, "panic", panicked.Value, "stack", string(panicked.Stack))
		return errorResult(fmt.Sprintf("Tool %s failed: it panicked: %v", CodeName, panicked.Value)), nil
	}
	g.record(Codemode, CodeName, res.Calls, res.Searches)
	if ctx.Err() != nil && res.Err != nil {
		return nil, ctx.Err()
	}
	return convert(g.runner.Result(ctx, res)), nil
}

// run runs a script, a panic of the runner caught.
func (g *Gateway) run(ctx context.Context, code string) (res *codemode.Result, panicked *tool.PanicError) {
	defer func() {
		if p := recover(); p != nil {
			res, panicked = nil, &tool.PanicError{Tool: CodeName, Value: p, Stack: debug.Stack()}
		}
	}()
	return g.runner.Run(ctx, code), nil
}

// await waits for the servers still connecting that provide what reach
// names, or for every one.
func (g *Gateway) await(ctx context.Context, reach tool.Reach) error {
	if reach.All {
		return g.mcp.WaitAll(ctx)
	}
	for _, n := range reach.Names {
		if err := g.mcp.WaitFor(ctx, n); err != nil {
			return err
		}
	}
	return nil
}
