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
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/catalog/builtin"
	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/internal/standin"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/tool"
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
// answer over an upstream server of 10,000 tools that connects when the
// gateway starts. The client's initialize waits for the upstream to
// connect and be listed (at most gateway.FirstListWait), so this is the
// time until a client can use the upstream's tools. (An upstream that is
// still connecting holds the answer for FirstListWait, by design.)
func BenchmarkFirstList(b *testing.B) {
	srv := bigUpstream(b, benchTools)
	for _, over := range []string{"stdio", "http"} {
		b.Run(over, func(b *testing.B) {
			for b.Loop() {
				servers, _ := gateway.ShelfConfig([]mcpclient.ServerConfig{{Name: "big", Server: srv}})
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

// profilePerServer is how many tools each upstream server of a shelf
// profile holds.
const profilePerServer = 5000

// profile returns in-process upstream servers holding n tools in all,
// made of renamed copies of the built-in corpus: copy c of the corpus's
// server "github" contributes tools named "github-c_<tool>" (the first copy
// keeps "github_<tool>"), and the tools are dealt in order to servers of
// profilePerServer tools, named "up1", "up2", .... It also returns the
// bytes of the tools' definitions (name, description and input schema).
func profile(b *testing.B, n int) (servers []mcpclient.ServerConfig, defBytes int) {
	b.Helper()
	corpus, err := builtin.Servers()
	if err != nil {
		b.Fatal(err)
	}
	var srv *mcp.Server
	echo := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok " + string(req.Params.Arguments)}}}, nil
	}
	added := 0
	for c := 1; added < n; c++ {
		for _, s := range corpus {
			prefix := s.Name
			if c > 1 {
				prefix = fmt.Sprintf("%s-%d", s.Name, c)
			}
			for _, t := range s.Tools {
				if added == n {
					break
				}
				if added%profilePerServer == 0 {
					name := fmt.Sprintf("up%d", len(servers)+1)
					srv = mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
					servers = append(servers, mcpclient.ServerConfig{Name: name, Server: srv})
				}
				name := prefix + "_" + t.Name
				srv.AddTool(&mcp.Tool{Name: name, Description: t.Description, InputSchema: json.RawMessage(t.InputSchema)}, echo)
				defBytes += len(name) + len(t.Description) + len(t.InputSchema)
				added++
			}
		}
	}
	return servers, defBytes
}

// startShelf starts a gateway over servers and waits for their tools to be
// registered. Sync says whether to index them too before returning.
func startShelf(b *testing.B, servers []mcpclient.ServerConfig) (*gateway.Gateway, *toolshelf.Shelf) {
	b.Helper()
	cfg, _ := gateway.ShelfConfig(servers)
	shelf, err := toolshelf.New(b.Context(), toolshelf.Config{Servers: cfg})
	if err != nil {
		b.Fatal(err)
	}
	if err := shelf.MCP().WaitAll(b.Context()); err != nil {
		b.Fatal(err)
	}
	g, err := gateway.New(shelf, gateway.Config{})
	if err != nil {
		b.Fatal(err)
	}
	return g, shelf
}

// search calls tool_search once and returns its text.
func search(b *testing.B, cs *mcp.ClientSession, query string) string {
	b.Helper()
	res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "tool_search", Arguments: map[string]any{"query": query}})
	if err != nil || res.IsError {
		b.Fatal(err, res)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text.WriteString(t.Text)
		}
	}
	return text.String()
}

// BenchmarkStartToFirstSearch measures a gateway's start (the shelf's
// construction, the upstream servers' connections and tool lists) to its
// first tool_search answer over stdio, which indexes the tools, for shelf
// profiles of 10,000 and 100,000 tools (s/first-search; the upstream
// servers are built beforehand and live in this process).
func BenchmarkStartToFirstSearch(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			servers, _ := profile(b, n)
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				g, shelf := startShelf(b, servers)
				cs := serve(b, g, "stdio")
				if got := search(b, cs, "create an issue in a repository"); !strings.Contains(got, "issue") {
					b.Fatalf("first search answered %q", got)
				}
				total += time.Since(start)
				cs.Close()
				g.Close()
				shelf.Close()
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "s/first-search")
		})
	}
}

// BenchmarkMemory reports the heap a gateway holds for its upstream tools
// once they are registered and indexed (heap-MiB, and heap-B/tool beside
// the definitions' own def-B/tool), beside the upstream servers themselves
// (upstream-MiB, in this process for the test): for one server of 10,000
// tools (as before) and for shelf profiles of 10,000 and 100,000 tools.
func BenchmarkMemory(b *testing.B) {
	measure := func(b *testing.B, n int, build func() []mcpclient.ServerConfig, defBytes *int) {
		for b.Loop() {
			var m0, m1, m2 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			servers := build()
			runtime.GC()
			runtime.ReadMemStats(&m1)
			g, shelf := startShelf(b, servers)
			shelf.Searcher().Sync()
			runtime.GC()
			runtime.ReadMemStats(&m2)
			heap := float64(m2.HeapAlloc) - float64(m1.HeapAlloc)
			b.ReportMetric(heap/(1<<20), "heap-MiB")
			b.ReportMetric(heap/float64(n), "heap-B/tool")
			b.ReportMetric(float64(*defBytes)/float64(n), "def-B/tool")
			b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/(1<<20), "upstream-MiB")
			g.Close()
			shelf.Close()
			runtime.KeepAlive(servers)
		}
	}
	b.Run("one-server", func(b *testing.B) {
		defBytes := 0
		measure(b, benchTools, func() []mcpclient.ServerConfig {
			_, defBytes = profile(b, benchTools) // the same definitions, counted
			return []mcpclient.ServerConfig{{Name: "big", Server: bigUpstream(b, benchTools)}}
		}, &defBytes)
	})
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			defBytes := 0
			measure(b, n, func() []mcpclient.ServerConfig {
				var s []mcpclient.ServerConfig
				s, defBytes = profile(b, n)
				return s
			}, &defBytes)
		})
	}
}

// BenchmarkListChanged measures one upstream server's tool list change on
// a shelf of 100,000 tools: a server of 100 tools drops one tool and adds
// another, and the time runs until a tool_search over stdio finds the
// added tool (after the refresh registered it).
func BenchmarkListChanged(b *testing.B) {
	servers, _ := profile(b, 100000-100)
	corpus, err := builtin.Servers()
	if err != nil {
		b.Fatal(err)
	}
	changing := mcp.NewServer(&mcp.Implementation{Name: "changing", Version: "1"}, nil)
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil }
	for i, t := range corpus[0].Tools {
		if i == 99 {
			break
		}
		changing.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(t.InputSchema)}, noop)
	}
	changing.AddTool(&mcp.Tool{Name: "fresh_0", Description: "Fresh tool zero.", InputSchema: json.RawMessage(`{"type":"object"}`)}, noop)
	servers = append(servers, mcpclient.ServerConfig{Name: "changing", Server: changing})
	g, shelf := startShelf(b, servers)
	b.Cleanup(func() { g.Close(); shelf.Close() })
	cs := serve(b, g, "stdio")
	search(b, cs, "create an issue in a repository") // indexes the shelf

	registered := make(chan string, 16)
	cancel := shelf.Registry().Subscribe(func(c tool.Change) {
		for _, name := range c.Registered {
			registered <- name
		}
	})
	defer cancel()
	i := 0
	for b.Loop() {
		i++
		word := fmt.Sprintf("zq%dx", i) // a word no other tool has
		changing.RemoveTools(fmt.Sprintf("fresh_%d", i-1))
		changing.AddTool(&mcp.Tool{Name: fmt.Sprintf("fresh_%d", i), Description: "Fresh tool " + word + ".", InputSchema: json.RawMessage(`{"type":"object"}`)}, noop)
		want := fmt.Sprintf("mcp__changing__fresh_%d", i)
		for name := <-registered; name != want; name = <-registered {
		}
		if got := search(b, cs, word); !strings.Contains(got, want) {
			b.Fatalf("search for %s answered %q", word, got)
		}
	}
}
