package gateway_test

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// TestRepairedNameWaitsForALateServer: a call_tool whose name must be
// repaired (no mcp__<server>__ prefix, another case) names no server, so
// any server still connecting may hold its tool: the call waits for them
// and then runs the tool. Before, a client's first call after the gateway
// started got "No tool named" while the server was still starting.
func TestRepairedNameWaitsForALateServer(t *testing.T) {
	for _, name := range []string{"echo", "MCP__LATE__ECHO"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st, ct := mcp.NewInMemoryTransports()
				ss, err := mcptest.NewServer("late", "").Connect(t.Context(), st, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ss.Close() })
				release := make(chan struct{})
				g := newGateway(t, mcpclient.ServerConfig{Name: "late", Transport: gated{ct, release}})
				cs := connect(t, g, gateway.Meta)
				type answer struct {
					text  string
					isErr bool
				}
				done := make(chan answer, 1)
				go func() {
					text, isErr := call(t, cs, "call_tool", map[string]any{"name": name, "arguments": map[string]any{"text": "hi"}})
					done <- answer{text, isErr}
				}()
				synctest.Wait() // the call has arrived; the server is still connecting
				select {
				case a := <-done:
					t.Fatalf("call_tool %s answered while its server was connecting: %q (error %v)", name, a.text, a.isErr)
				default:
				}
				close(release)
				if a := <-done; a.isErr || a.text != "echo: hi" {
					t.Errorf("call_tool %s after the server connected: %q (error %v), want the upstream's echo", name, a.text, a.isErr)
				}
			})
		})
	}
}

// TestDirectDeclaresToolsWhileServersConnect: a client that initializes
// the direct surface before any upstream server has connected (the usual
// case: the client starts the gateway and initializes at once) is told
// the surface has tools, and that their list changes, so that it lists
// them and follows tools/list_changed. Before, the capability was left out
// while the surface had no tool yet, and a client that reads capabilities
// never asked for the tools.
func TestDirectDeclaresToolsWhileServersConnect(t *testing.T) {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcptest.NewServer("late", "").Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	release := make(chan struct{})
	g := newGateway(t, mcpclient.ServerConfig{Name: "late", Transport: gated{ct, release}})
	direct := connect(t, g, gateway.Direct)
	if caps := direct.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Errorf("the direct surface's capabilities while its server connects: %+v, want tools with listChanged", caps)
	}
	close(release)
	call(t, connect(t, g, gateway.Meta), "tool_search", map[string]any{"query": "echo"}) // waits for the server
	if l := listBytes(t, direct); !strings.Contains(l, "mcp__late__echo") {
		t.Errorf("the direct list once the server connected: %s", l)
	}
}
