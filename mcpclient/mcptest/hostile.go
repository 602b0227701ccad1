package mcptest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Payload is text that acts on a terminal when it is printed raw: it
// clears the screen, sets the window title with a bell, returns the cursor
// to overwrite the line, starts a colour with the C1 control sequence
// introducer and reverses the direction of what follows.
const Payload = "\x1b[2J\x1b]0;owned\a\rX\u009b31m\u202eY"

// The values of ServerEnv that make the stdio server misbehave (any other
// non-empty value serves [NewServer]).
const (
	// ServeHostile serves [NewHostileServer], after writing Payload to
	// standard error.
	ServeHostile = "hostile"
	// ServeExit writes the server's arguments to standard error and exits
	// with status 1 without serving.
	ServeExit = "exit"
	// ServeRejectInitialize answers every request, initialize first, with
	// a JSON-RPC error whose message carries Payload.
	ServeRejectInitialize = "reject-initialize"
)

// NewHostileServer returns a server whose instructions, tool names, tool
// descriptions and results carry [Payload]:
//
//   - inject {text}: described with Payload; returns two lines that carry it
//   - "bad" + Payload: a tool whose name carries it
func NewHostileServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1.0.0"},
		&mcp.ServerOptions{Instructions: "Instructions " + Payload})
	srv.AddTool(&mcp.Tool{Name: "inject", Description: "Inject a payload " + Payload + " into the answer.", InputSchema: ObjectSchema("text")},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "injected " + Payload + "\nsecond line " + Payload}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "bad" + Payload, Description: "Carry a payload in the name.", InputSchema: ObjectSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "bad " + Payload}}}, nil
		})
	return srv
}

// misbehave runs the stdio server modes that do not serve the test tools;
// done is false for the others.
func misbehave(mode string) (code int, done bool) {
	switch mode {
	case ServeExit:
		fmt.Fprintln(os.Stderr, "arguments:", strings.Join(os.Args[1:], " "))
		return 1, true
	case ServeRejectInitialize:
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.ID) == 0 {
				continue // a notification
			}
			resp, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID,
				"error": map[string]any{"code": -32603, "message": "refused: " + Payload}})
			os.Stdout.Write(append(resp, '\n'))
		}
		return 0, true
	}
	return 0, false
}
