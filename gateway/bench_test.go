package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/internal/standin"
	"github.com/toolshelf/toolshelf/mcpclient"
)

// benchTools is the size of the upstream server the benchmarks use.
const benchTools = 10000

// bigUpstream returns an in-process MCP server with n tools made from the
// built-in corpus (names suffixed so each is distinct), each echoing its
// arguments.
func bigUpstream(b *testing.B, n int) *mcp.Server {
	b.Helper()
	servers, err := builtin.Servers()
	if err != nil {
		b.Fatal(err)
	}
	type def struct {
		name, desc string
		schema     []byte
	}
	var defs []def
	for _, s := range servers {
		for _, t := range s.Tools {
			defs = append(defs, def{t.Name, t.Description, t.InputSchema})
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
	for i := range n {
		d := defs[i%len(defs)]
		srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("%s_%d", d.name, i), Description: d.desc, InputSchema: json.RawMessage(d.schema)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok " + string(req.Params.Arguments)}}}, nil
			})
	}
	return srv
}

// pipeTransports returns the two ends of a stdio-like connection: JSON-RPC
// as newline-delimited JSON over OS pipes, as a client that starts the
// gateway as a process sees it.
func pipeTransports(b *testing.B) (server, client mcp.Transport) {
	b.Helper()
	cr, sw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	sr, cw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	return &mcp.IOTransport{Reader: sr, Writer: sw}, &mcp.IOTransport{Reader: cr, Writer: cw}
}

// serve connects a client to a gateway's meta surface over stdio-like
// pipes or HTTP.
func serve(b *testing.B, g *gateway.Gateway, over string) *mcp.ClientSession {
	b.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	var ct mcp.Transport
	if over == "http" {
		srv := httptest.NewServer(g.Handler(gateway.HTTPConfig{}))
		b.Cleanup(srv.Close)
		ct = &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}
	} else {
		st, client := pipeTransports(b)
		ss, err := g.Server(gateway.Meta).Connect(b.Context(), st, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ss.Close() })
		ct = client
	}
	cs, err := c.Connect(b.Context(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// connected returns a gateway whose upstream server of n tools has
// connected and registered them.
func connected(b *testing.B, up *mcp.Server) (*gateway.Gateway, *toolshelf.Shelf) {
	b.Helper()
	servers, _ := gateway.ShelfConfig([]mcpclient.ServerConfig{{Name: "big", Server: up}})
	shelf, err := toolshelf.New(b.Context(), toolshelf.Config{Servers: servers})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { shelf.Close() })
	if err := shelf.MCP().WaitAll(b.Context()); err != nil {
		b.Fatal(err)
	}
	shelf.Searcher().Sync()
	g, err := gateway.New(shelf, gateway.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(g.Close)
	return g, shelf
}

// BenchmarkFirstList measures a gateway's start to its first tools/list
// answer while its upstream server of 10,000 tools is still connecting
// (held at its transport): the answer must not wait for it.
func BenchmarkFirstList(b *testing.B) {
	for _, over := range []string{"stdio", "http"} {
		b.Run(over, func(b *testing.B) {
			for b.Loop() {
				// Never released: closing the shelf ends the attempt.
				_, ct := mcp.NewInMemoryTransports()
				servers, _ := gateway.ShelfConfig([]mcpclient.ServerConfig{{Name: "big", Transport: gated{ct, make(chan struct{})}}})
				shelf, err := toolshelf.New(b.Context(), toolshelf.Config{Servers: servers})
				if err != nil {
					b.Fatal(err)
				}
				g, err := gateway.New(shelf, gateway.Config{})
				if err != nil {
					b.Fatal(err)
				}
				cs := serve(b, g, over)
				if _, err := cs.ListTools(b.Context(), nil); err != nil {
					b.Fatal(err)
				}
				cs.Close()
				g.Close()
				shelf.Close()
			}
		})
	}
}

// BenchmarkSearch measures a tool_search round trip over 10,000 upstream
// tools.
func BenchmarkSearch(b *testing.B) {
	g, _ := connected(b, bigUpstream(b, benchTools))
	for _, over := range []string{"stdio", "http"} {
		b.Run(over, func(b *testing.B) {
			cs := serve(b, g, over)
			queries := []string{"create an issue in a repository", "read a file", "send a message to a channel", "list open pull requests"}
			i := 0
			for b.Loop() {
				res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "tool_search", Arguments: map[string]any{"query": queries[i%len(queries)]}})
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
				i++
			}
		})
	}
}

// BenchmarkCall measures a call_tool round trip (validation and dispatch
// to the upstream tool) over 10,000 upstream tools.
func BenchmarkCall(b *testing.B) {
	g, shelf := connected(b, bigUpstream(b, benchTools))
	// A tool with required arguments, called with arguments its schema
	// accepts: the call is validated, then dispatched.
	var name string
	var args json.RawMessage
	for _, t := range shelf.Registry().Tools() {
		if t.Origin.Server == "big" && strings.Contains(string(t.Parameters), `"required"`) {
			name, args = t.Name, standin.ExampleArguments(t.Parameters)
			break
		}
	}
	if name == "" {
		b.Fatal("no upstream tool with required arguments")
	}
	for _, over := range []string{"stdio", "http"} {
		b.Run(over, func(b *testing.B) {
			cs := serve(b, g, over)
			for b.Loop() {
				res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": name, "arguments": args}})
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkMemory reports the heap a gateway holds for an upstream server
// of 10,000 tools once they are registered and indexed (heap-MiB), beside
// the upstream server itself (upstream-MiB, in this process for the test).
func BenchmarkMemory(b *testing.B) {
	for b.Loop() {
		var m0, m1, m2 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		up := bigUpstream(b, benchTools)
		runtime.GC()
		runtime.ReadMemStats(&m1)
		g, shelf := connected(b, up)
		runtime.GC()
		runtime.ReadMemStats(&m2)
		b.ReportMetric(float64(m2.HeapAlloc-m1.HeapAlloc)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/(1<<20), "upstream-MiB")
		runtime.KeepAlive(g)
		runtime.KeepAlive(shelf)
	}
}
