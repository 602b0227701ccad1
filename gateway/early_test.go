package gateway_test

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

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
				late, release := lateServer(t)
				g := newGateway(t, late)
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
	late, release := lateServer(t)
	g := newGateway(t, late)
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

// logRecords is a log handler that keeps its records' messages with their
// attributes, for a test to read.
type logRecords struct {
	mu    sync.Mutex
	lines []string
}

func (r *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *logRecords) WithGroup(string) slog.Handler            { return r }
func (r *logRecords) Handle(_ context.Context, rec slog.Record) error {
	line := rec.Message
	rec.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, line)
	return nil
}

func (r *logRecords) matching(s string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, l := range r.lines {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// toolNames lists a direct surface's tools by name, and how long the
// list took.
func toolNames(t *testing.T, cs *mcp.ClientSession) ([]string, time.Duration) {
	t.Helper()
	start := time.Now()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names, time.Since(start)
}

// TestDirectFirstListWaitsForALateServer: the direct surface's first
// tools/list, sent while an upstream server is still connecting (a client
// that starts the gateway lists at once), waits for it and holds its
// tools. Before, it answered no tool, and a client that lists once (claude
// -p) then had none to call. The initialize here does not wait
// (CapabilityWait < 0), so the list is the first to wait, as for a client
// that lists without initializing.
func TestDirectFirstListWaitsForALateServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late, release := lateServer(t)
		g := newGatewayWith(t, gateway.Config{CapabilityWait: -1}, late)
		direct := connect(t, g, gateway.Direct)
		listed := make(chan []string, 1)
		go func() {
			names, _ := toolNames(t, direct)
			listed <- names
		}()
		synctest.Wait() // the list has arrived; the server is still connecting
		select {
		case names := <-listed:
			t.Fatalf("the first list answered while its server was connecting: %v", names)
		default:
		}
		close(release)
		if names := <-listed; !slices.Contains(names, "mcp__late__echo") {
			t.Errorf("the first list once the server connected: %v, want mcp__late__echo", names)
		}
	})
}

// TestDirectFirstListIsBounded: a server that never connects holds the
// first tools/list for FirstListWait at most; the list then has the tools
// of the servers that connected, the one left out is logged, and later
// lists answer at once.
func TestDirectFirstListIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, ct := mcp.NewInMemoryTransports()
		log := &logRecords{}
		g := newGatewayWith(t, gateway.Config{Logger: slog.New(log)},
			mcpclient.ServerConfig{Name: "stuck", Transport: gated{ct, make(chan struct{})}}, // never released
			mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", "")})
		direct := connect(t, g, gateway.Direct)
		names, took := toolNames(t, direct)
		if took > gateway.FirstListWait {
			t.Errorf("the first list took %v, want at most %v", took, gateway.FirstListWait)
		}
		if !slices.Contains(names, "mcp__notes__echo") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "mcp__stuck__") }) {
			t.Errorf("the first list %v, want the tools of notes only", names)
		}
		if got := log.matching("leaves out a server still connecting"); len(got) != 1 || !strings.Contains(got[0], "server=stuck") {
			t.Errorf("the log of the server left out: %q", got)
		}
		if _, took := toolNames(t, direct); took != 0 {
			t.Errorf("a later list waited %v", took)
		}
		if _, took := toolNames(t, connect(t, g, gateway.Direct)); took != 0 {
			t.Errorf("another client's first list waited %v", took)
		}
	})
}

// TestDirectCallWaitsForALateServer: a tools/call of a tool the direct
// surface does not list yet, because its server is still connecting,
// waits for the server and runs the tool; a call of a tool of a server
// that never connects is answered "unknown tool" after FirstListWait.
func TestDirectCallWaitsForALateServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late, release := lateServer(t)
		_, stuck := mcp.NewInMemoryTransports()
		g := newGateway(t, late,
			mcpclient.ServerConfig{Name: "stuck", Transport: gated{stuck, make(chan struct{})}})
		direct := connect(t, g, gateway.Direct)
		type answer struct {
			text  string
			isErr bool
		}
		done := make(chan answer, 1)
		go func() {
			text, isErr := call(t, direct, "mcp__late__echo", map[string]any{"text": "hi"})
			done <- answer{text, isErr}
		}()
		synctest.Wait()
		select {
		case a := <-done:
			t.Fatalf("the call answered while its server was connecting: %q (error %v)", a.text, a.isErr)
		default:
		}
		close(release)
		if a := <-done; a.isErr || a.text != "echo: hi" {
			t.Errorf("the call once its server connected: %q (error %v), want the upstream's echo", a.text, a.isErr)
		}
		start := time.Now()
		_, err := direct.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp__stuck__echo", Arguments: map[string]any{}})
		if took := time.Since(start); err == nil || !strings.Contains(err.Error(), "unknown tool") || took != gateway.FirstListWait {
			t.Errorf("a call of a server that never connects: %v after %v, want unknown tool after %v", err, took, gateway.FirstListWait)
		}
	})
}

// TestUpstreamWaitsShareOneBound: a client's initialize and its first
// tools/list of the direct surface, sent while an upstream server never
// connects, wait FirstListWait in all, not each: Claude Code drops a
// gateway that takes longer than its own connect bound (5 s) to answer.
func TestUpstreamWaitsShareOneBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, ct := mcp.NewInMemoryTransports()
		g := newGateway(t, mcpclient.ServerConfig{Name: "stuck", Transport: gated{ct, make(chan struct{})}, Timeout: time.Minute})
		start := time.Now()
		direct := connect(t, g, gateway.Direct)
		toolNames(t, direct)
		if took := time.Since(start); took != gateway.FirstListWait {
			t.Errorf("initialize and the first list took %v, want %v in all", took, gateway.FirstListWait)
		}
	})
}
