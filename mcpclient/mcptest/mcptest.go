package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The environment of the stdio server. When ServerEnv is set, ServeIfAsked
// serves the test tools on standard input and output. FIFOEnv names a FIFO
// the server reads to its end before it serves, so a test decides when the
// server finishes starting.
const (
	ServerEnv = "TOOLSHELF_MCPTEST_SERVER"
	FIFOEnv   = "TOOLSHELF_MCPTEST_FIFO"
)

// Tools is the number of tools of a server from NewServer.
const Tools = 10

// ServeIfAsked serves the test tools on standard input and output when the
// process was started as a stdio server (ServerEnv is set) and reports the
// exit code; otherwise it returns at once with served false. Call it first
// in TestMain:
//
//	if code, served := mcptest.ServeIfAsked(); served {
//		os.Exit(code)
//	}
func ServeIfAsked() (code int, served bool) {
	if os.Getenv(ServerEnv) == "" {
		return 0, false
	}
	return serveStdio(), true
}

func serveStdio() int {
	mode := os.Getenv(ServerEnv)
	if code, done := misbehave(mode); done {
		return code
	}
	if path := os.Getenv(FIFOEnv); path != "" {
		f, err := os.Open(path) // blocks until the test opens the FIFO for writing
		if err != nil {
			fmt.Fprintln(os.Stderr, "open fifo:", err)
			return 2
		}
		_, _ = io.ReadAll(f)
		f.Close()
	}
	fmt.Fprintln(os.Stderr, "test server starting")
	srv := NewServer("stdio test server", "Use echo to test.")
	if mode == ServeHostile {
		fmt.Fprintln(os.Stderr, "hostile server starting "+Payload)
		srv = NewHostileServer()
	}
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

// Command returns how to start the running test binary as a stdio server
// (its TestMain must call ServeIfAsked): the command, its arguments and the
// environment variables to add, with extra ones merged in.
func Command(extra map[string]string) (command string, args []string, env map[string]string) {
	env = map[string]string{ServerEnv: "1"}
	for k, v := range extra {
		env[k] = v
	}
	return os.Args[0], []string{"-test.run=^$"}, env
}

// ObjectSchema is an input schema with a string property for each name.
func ObjectSchema(props ...string) map[string]any {
	p := map[string]any{}
	for _, name := range props {
		p[name] = map[string]any{"type": "string"}
	}
	return map[string]any{"type": "object", "properties": p}
}

// NewServer returns a server with the test tools:
//
//   - echo {text}: returns "echo: " and the text
//   - pid: returns the server's process id
//   - cwd, getenv {name}: return the working folder, a variable
//   - crash: exits the process in the middle of the call (stdio servers
//     only; elsewhere the call fails)
//   - hang: never answers (until the call is cancelled)
//   - big {n}: returns BigText(n)
//   - mixed: returns text, image, audio, resource link and resources
//   - structured: returns structured content only
//   - fail: returns an error result
func NewServer(name, instructions string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, &mcp.ServerOptions{Instructions: instructions})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text.", InputSchema: ObjectSchema("text"),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Text string }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return text("echo: " + args.Text), nil
		})
	srv.AddTool(&mcp.Tool{Name: "pid", Description: "Return the process id.", InputSchema: ObjectSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strconv.Itoa(os.Getpid())), nil
		})
	srv.AddTool(&mcp.Tool{Name: "cwd", Description: "Return the working folder.", InputSchema: ObjectSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			dir, err := os.Getwd()
			return text(dir), err
		})
	srv.AddTool(&mcp.Tool{Name: "getenv", Description: "Return an environment variable.", InputSchema: ObjectSchema("name")},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Name string }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return text(os.Getenv(args.Name)), nil
		})
	srv.AddTool(&mcp.Tool{Name: "crash", Description: "Exit during the call.", InputSchema: ObjectSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if os.Getenv(ServerEnv) != "" {
				os.Exit(3)
			}
			return nil, fmt.Errorf("crash only works in a stdio server")
		})
	srv.AddTool(&mcp.Tool{Name: "hang", Description: "Never answer.", InputSchema: ObjectSchema()},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done() // the client gives up first
			return nil, ctx.Err()
		})
	srv.AddTool(&mcp.Tool{Name: "big", Description: "Return n bytes of text.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ N int }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return text(BigText(args.N)), nil
		})
	srv.AddTool(&mcp.Tool{Name: "mixed", Description: "Return every kind of content.", InputSchema: ObjectSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			size := int64(42)
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "hello"},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
				&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF1234")},
				&mcp.ResourceLink{URI: "file:///tmp/a.txt", Name: "a.txt", MIMEType: "text/plain", Description: "A file.", Size: &size},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///tmp/b.txt", MIMEType: "text/plain", Text: "contents of b"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///tmp/c.bin", Blob: []byte{1, 2, 3}}},
			}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "structured", Description: "Return structured content.", InputSchema: ObjectSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"answer": 42}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "fail", Description: "Fail.", InputSchema: ObjectSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := text("it failed")
			r.IsError = true
			return r, nil
		})
	return srv
}

// BigText returns n bytes of text: "<start>", two-byte runes (and a dot or
// two), "<end>".
func BigText(n int) string {
	const start, end = "<start>", "<end>"
	var b strings.Builder
	b.WriteString(start)
	for b.Len() < n-len(end)-1 {
		b.WriteString("é")
	}
	for b.Len() < n-len(end) {
		b.WriteByte('.')
	}
	b.WriteString(end)
	return b.String()
}
