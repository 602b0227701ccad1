package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// gatedTransports holds each named server's connection until its gate is
// closed.
func gatedTransports(m *Manager, names ...string) map[string]chan struct{} {
	gates := map[string]chan struct{}{}
	for _, n := range names {
		gates[n] = make(chan struct{})
	}
	base := m.transport
	m.transport = func(s *server) (transport, error) {
		if g := gates[s.cfg.Name]; g != nil {
			<-g
		}
		return base(s)
	}
	return gates
}

func TestWaitFor(t *testing.T) {
	t.Parallel()
	f := newFixture(t, memServer("a"), memServer("b"))
	useMemServers(f.m, map[string]*mcp.Server{"a": mcptest.NewServer("a", ""), "b": mcptest.NewServer("b", "")})
	gates := gatedTransports(f.m, "a", "b")
	f.reg.Register(tool.Tool{Name: "read", Description: "Read."},
		tool.Tool{Name: "find", Description: "Find anything.", Reaches: tool.Reach{All: true}},
		tool.Tool{Name: "report", Description: "Report on b.", Reaches: tool.Reach{Names: []string{"mcp__b"}}},
		tool.Tool{Name: "relay", Description: "Relay to b's echo.", Reaches: tool.Reach{Names: []string{"mcp__b__echo", "mcp__c"}}},
		// A script reaches what its arguments name (as codemode's does).
		tool.Tool{Name: "script", Description: "Run a script.", Reaches: tool.Reach{Of: func(args json.RawMessage) tool.Reach {
			return tool.Reach{Names: strings.Fields(string(args))}
		}}})
	f.m.Start(f.ctx())

	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	for name, wantWait := range map[string]bool{
		"read":               false, // not an MCP tool, reaches nothing
		"unknown":            false,
		toolsearch.Name:      false, // a name means nothing: tool_search is not registered here
		"find":               true,  // reaches every tool
		"report":             true,  // reaches b's namespace
		"relay":              true,  // reaches one of b's tools (and a server that does not exist)
		"mcp__a__echo":       true,  // by its prefix: not registered yet
		"mcp__b__later_tool": true,
		"mcp__c__echo":       false, // no such server
	} {
		err := f.m.WaitFor(done, name)
		if got := errors.Is(err, context.Canceled); got != wantWait {
			t.Errorf("WaitFor(%s) with a finished context = %v; waiting = %v, want %v", name, err, got, wantWait)
		}
	}

	// A wait ends when its context does.
	ctx, cancel := context.WithCancel(f.ctx())
	result := make(chan error, 1)
	go func() { result <- f.m.WaitFor(ctx, "mcp__a__echo") }()
	cancel()
	if err := <-result; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait = %v", err)
	}

	// A tool waits for its own server only.
	close(gates["a"])
	if err := f.m.WaitFor(f.ctx(), "mcp__a__echo"); err != nil {
		t.Fatal(err)
	}
	if a, b := f.status("a").State, f.status("b").State; a != Connected || b != Connecting {
		t.Errorf("after the wait for a's tool: a %s, b %s", a, b)
	}
	// Registered tools are found by origin; b's tools still wait.
	if err := f.m.WaitFor(done, "mcp__a__pid"); err != nil {
		t.Errorf("WaitFor(a's tool) after a connected = %v", err)
	}

	// A call reaches what its arguments name: a script naming only a's
	// tools goes ahead, one naming b waits; without arguments it reaches
	// nothing.
	if err := f.m.WaitForCall(done, "script", json.RawMessage("mcp__a__echo")); err != nil {
		t.Errorf("WaitForCall(script naming a) after a connected = %v", err)
	}
	if err := f.m.WaitForCall(done, "script", json.RawMessage("mcp__a__echo mcp__b")); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitForCall(script naming b) while b connects = %v, want it to wait", err)
	}
	if err := f.m.WaitFor(done, "script"); err != nil {
		t.Errorf("WaitFor(script) without arguments = %v, want no wait", err)
	}

	// Tools that reach b still wait for it.
	for _, name := range []string{"find", "report", "relay"} {
		if err := f.m.WaitFor(done, name); !errors.Is(err, context.Canceled) {
			t.Errorf("WaitFor(%s) while b connects = %v, want it to wait", name, err)
		}
	}

	// A tool that reaches every tool waits for every pending server.
	type outcome struct {
		err        error
		registered bool
	}
	searched := make(chan outcome, 1)
	go func() {
		err := f.m.WaitFor(f.ctx(), "find")
		_, ok := f.reg.Get("mcp__b__echo")
		searched <- outcome{err, ok}
	}()
	close(gates["b"])
	if o := <-searched; o.err != nil || !o.registered {
		t.Errorf("tool_search's wait = %+v, want it to end after b's tools registered", o)
	}
	for _, name := range []string{"find", "report", "relay"} {
		if err := f.m.WaitFor(done, name); err != nil {
			t.Errorf("WaitFor(%s) with nothing pending = %v", name, err)
		}
	}
	if err := f.m.WaitAll(done); err != nil {
		t.Errorf("WaitAll with nothing pending = %v", err)
	}
}

func TestCallWaitsForConnectingServer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, memServer("a"))
	useMemServers(f.m, map[string]*mcp.Server{"a": mcptest.NewServer("a", "")})
	gates := gatedTransports(f.m, "a")
	// The tool is known from a catalog, so it can be called before the
	// server connects; the call waits for the connection.
	srv, err := catalog.Parse("a.json", []byte(`{"server":"a","tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tools := srv.AsTools(f.namer, tool.Deferred)
	if err := f.reg.Register(tools...); err != nil {
		t.Fatal(err)
	}
	f.m.Start(f.ctx())
	if _, ok := f.reg.Get("mcp__a__echo"); !ok {
		t.Fatal("catalog tool missing")
	}
	handlerReady := make(chan tool.Handler, 1)
	go func() {
		f.eventually("a's handler", func() bool {
			tl, _ := f.reg.Get("mcp__a__echo")
			return tl.Handler != nil
		})
		tl, _ := f.reg.Get("mcp__a__echo")
		handlerReady <- tl.Handler
	}()
	close(gates["a"])
	h := <-handlerReady
	res, err := h.Call(f.ctx(), json.RawMessage(`{"text":"x"}`))
	if err != nil || text(res) != "echo: x" {
		t.Errorf("call = %v, %v", res, err)
	}
	if st := f.status("a"); st.Tools != mcptest.Tools {
		t.Errorf("tools = %d", st.Tools)
	}
}

// TestUnavailable: why a declared tool that has not registered cannot be
// called — by the state of the server its name belongs to.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	off := memServer("off")
	off.Disabled = true
	f := newFixture(t, memServer("up"), memServer("starting"), off,
		ServerConfig{Name: "broken", Type: "stdio", Command: "toolshelf-no-such-command"})
	useMemServers(f.m, map[string]*mcp.Server{"up": mcptest.NewServer("up", ""), "starting": mcptest.NewServer("starting", "")})
	mem := f.m.transport
	f.m.transport = func(s *server) (transport, error) {
		if s.cfg.Name == "broken" {
			return transport{}, exec.ErrNotFound
		}
		return mem(s)
	}
	gate := gatedTransports(f.m, "starting")["starting"]
	t.Cleanup(func() { close(gate) }) // before the fixture's Close, which waits for the attempt
	f.m.Start(f.ctx())
	for _, name := range []string{"up", "broken"} {
		if err := f.m.WaitFor(f.ctx(), "mcp__"+name+"__echo"); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{
		"mcp__up__echo":           "", // registered
		"mcp__up__gone":           `MCP server "up" does not list it`,
		"mcp__starting__echo":     "", // may yet come
		"mcp__off__echo":          `MCP server "off" is disabled in the servers file`,
		"mcp__broken__echo":       `MCP server "broken" failed to connect (its command was not found)`,
		"mcp__memory__read_graph": "no MCP server configured in this run provides the mcp__memory tools",
		"read_file":               "", // not an MCP tool's name
	} {
		if got := f.m.Unavailable(name); got != want {
			t.Errorf("Unavailable(%s) = %q, want %q", name, got, want)
		}
	}
	if !f.m.Provides("mcp__off__echo") || !f.m.Provides("mcp__up") || f.m.Provides("mcp__memory__read_graph") {
		t.Errorf("Provides: off %v, up %v, memory %v", f.m.Provides("mcp__off__echo"), f.m.Provides("mcp__up"), f.m.Provides("mcp__memory__read_graph"))
	}
}

// TestMayProvide: which servers the first prompt waits for, for a tool
// name or pattern that will be activated before the first request.
func TestMayProvide(t *testing.T) {
	t.Parallel()
	s := &server{cfg: ServerConfig{Name: "my-memory"}}
	for pattern, want := range map[string]bool{
		"mcp__my_memory__read_graph": true,
		"MCP__My_Memory__Read_Graph": true, // --tools ignores case
		"mcp__my_memory__*":          true,
		"mcp__my*":                   true,
		"*read*":                     true,
		"mcp__*__read_graph":         true,
		"mcp__memory__read_graph":    false,
		"mcp__my_memory_x__read":     false,
		"tool_search":                false,
		"mcp__my":                    false, // a whole name, not a prefix
	} {
		if got := s.mayProvide(pattern); got != want {
			t.Errorf("mayProvide(%q) = %v, want %v", pattern, got, want)
		}
	}
}
