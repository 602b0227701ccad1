package gateway_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/tokens"
)

// protocolVersions are the MCP versions the SDK's clients speak: the last
// that initializes a session, and the first without sessions.
var protocolVersions = []string{"2025-11-25", "2026-07-28"}

// gate is an upstream server whose started tool reports each call on the
// channel it returns (which holds up to 1,024 reports), with the call's
// "kind" argument: a script that begins with
// await tools.mcp__gate__started({kind: "..."}) says it is running.
func gate() (*mcp.Server, <-chan string) {
	started := make(chan string, 1024)
	srv := mcp.NewServer(&mcp.Implementation{Name: "gate", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "started", Description: "Report that the script started.", InputSchema: mcptest.ObjectSchema("kind")},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct {
				Kind string `json:"kind"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &args)
			select {
			case started <- args.Kind:
			default:
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	return srv, started
}

// stdio returns the two ends of a stdio connection over OS pipes, and
// hangUp, which closes the client's end as a client process that exits
// does.
func stdio(t *testing.T) (server, client mcp.Transport, hangUp func()) {
	t.Helper()
	cr, sw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	sr, cw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, f := range []*os.File{cr, sw, sr, cw} {
			f.Close()
		}
	})
	return &mcp.IOTransport{Reader: sr, Writer: sw}, &mcp.IOTransport{Reader: cr, Writer: cw},
		func() { cr.Close(); cw.Close() }
}

// TestCodemodeBusyIsRefusedWithErrBusy: past MaxScripts a script waits for
// a turn, and once QueueWait has passed it is refused with an error result
// that says why (codemode.ErrBusy), not left hanging; when the running
// script ends, the next one runs.
func TestCodemodeBusyIsRefusedWithErrBusy(t *testing.T) {
	srv, started, cancelled := blocking()
	g := newGatewayWith(t, gateway.Config{MaxScripts: 1, QueueWait: 50 * time.Millisecond},
		mcpclient.ServerConfig{Name: "slow", Server: srv})
	holder, other := connect(t, g, gateway.Codemode), connect(t, g, gateway.Codemode)
	ctx, cancel := context.WithCancel(t.Context())
	returned := make(chan error, 1)
	go func() {
		_, err := holder.CallTool(ctx, &mcp.CallToolParams{Name: gateway.CodeName,
			Arguments: map[string]any{"code": `await tools.mcp__slow__block({}); return "not cancelled";`}})
		returned <- err
	}()
	<-started // the holder's script has the only turn, until it is cancelled
	if text, isErr := code(t, other, `return "ran";`); !isErr || !strings.Contains(text, codemode.ErrBusy.Error()) {
		t.Errorf("a script past MaxScripts: %q (error %v), want the ErrBusy refusal", text, isErr)
	}
	cancel()
	<-cancelled
	<-returned
	if text, isErr := code(t, other, `return "ran";`); isErr || text != "ran" {
		t.Errorf("a script once the turn was free: %q (error %v)", text, isErr)
	}
}

// TestCodemodeDisconnectStopsTheScript: a client that disconnects while
// its script runs (a loop that never yields) stops the script at once, for
// both protocol versions, over stdio and over HTTP. The script holds the
// only turn (MaxScripts 1), so another client's script runs as soon as it
// has stopped; before, over HTTP, it ran to its 30 s time limit.
func TestCodemodeDisconnectStopsTheScript(t *testing.T) {
	for _, over := range []string{"stdio", "http"} {
		for _, version := range protocolVersions {
			t.Run(over+"/"+version, func(t *testing.T) {
				up, started := gate()
				g := newGatewayWith(t, gateway.Config{MaxScripts: 1, QueueWait: 5 * time.Second},
					mcpclient.ServerConfig{Name: "gate", Server: up})
				var ct mcp.Transport
				var hangUp func()
				switch over {
				case "stdio":
					var st mcp.Transport
					st, ct, hangUp = stdio(t)
					ss, err := g.Server(gateway.Codemode).Connect(t.Context(), st, nil)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { ss.Close() })
				case "http":
					hs := httptest.NewServer(g.Handler(gateway.HTTPConfig{}))
					t.Cleanup(hs.Close)
					ct = &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp/codemode"}
					hangUp = hs.CloseClientConnections
				}
				c := mcp.NewClient(&mcp.Implementation{Name: "leaving", Version: "1"}, nil)
				cs, err := c.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				if got := cs.InitializeResult().ProtocolVersion; got != version {
					t.Fatalf("the client speaks %s, want %s", got, version)
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				go cs.CallTool(ctx, &mcp.CallToolParams{Name: gateway.CodeName,
					Arguments: map[string]any{"code": `await tools.mcp__gate__started({}); while (true) {}`}})
				next := connect(t, g, gateway.Codemode)
				<-started
				begin := time.Now()
				hangUp()
				text, isErr := code(t, next, `return "next";`)
				stopped := time.Since(begin)
				if isErr || text != "next" {
					t.Fatalf("the next script after the client left: %q (error %v): the script still held the turn", text, isErr)
				}
				// What the next script takes by itself (a VM's start is slow
				// under -race) is not the stopped script's.
				begin = time.Now()
				code(t, next, `return "next";`)
				alone := time.Since(begin)
				t.Logf("%s %s: the next script ran %v after the client disconnected (%v by itself)", over, version, stopped, alone)
				if stopped-alone > time.Second {
					t.Errorf("the script stopped %v after the client disconnected, want within 1 s", stopped-alone)
				}
			})
		}
	}
}

// connectSession is connect that also returns the server's end, whose
// Wait returns once the session's handlers have all returned.
func connectSession(t *testing.T, g *gateway.Gateway, s gateway.Surface) (*mcp.ClientSession, *mcp.ServerSession) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := g.Server(s).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ss
}

// records returns the records of a metrics log.
func records(t *testing.T, log string) []tokens.Record {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, bad, err := tokens.ReadLog(f)
	if err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	return recs
}

// TestCodemodeScriptsAreRecorded: every script leaves a metrics record
// naming its calls: one that failed, one the client cancelled (before, a
// cancelled script left none), and one that searched, whose searchTools
// calls count as tool_search, as the surface's own searches do.
func TestCodemodeScriptsAreRecorded(t *testing.T) {
	log := t.TempDir() + "/metrics.jsonl"
	srv, started, cancelled := blocking()
	servers, _ := gateway.ShelfConfig([]mcpclient.ServerConfig{{Name: "notes", Server: mcptest.NewServer("notes", "")}, {Name: "slow", Server: srv}})
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Servers: servers, Metrics: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shelf.Close() })
	g, err := gateway.New(shelf, gateway.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	cs, ss := connectSession(t, g, gateway.Codemode)
	if text, isErr := code(t, cs, `await tools.mcp__notes__echo({text: "1"}); throw new Error("boom");`); !isErr || !strings.Contains(text, "boom") {
		t.Errorf("the failing script: %q (error %v)", text, isErr)
	}
	if text, isErr := code(t, cs, `const a = await searchTools("echo the text"); const b = await searchTools("process id");
return a.length > 0 && b.length > 0;`); isErr || text != "true" {
		t.Errorf("the searching script: %q (error %v)", text, isErr)
	}
	ctx, cancel := context.WithCancel(t.Context())
	returned := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: gateway.CodeName,
			Arguments: map[string]any{"code": `await tools.mcp__notes__echo({text: "2"}); await tools.mcp__slow__block({});`}})
		returned <- err
	}()
	<-started
	cancel()
	<-cancelled
	<-returned
	cs.Close()
	ss.Wait() // the cancelled script's handler has returned
	var got []string
	for _, r := range records(t, log) {
		got = append(got, r.Strategy+":"+strings.Join(r.Called, ",")+strings.Join(append([]string{""}, r.Inner...), " "))
		if r.ToolTokens == 0 || !slices.Equal(r.Declared, []string{"tool_search", "code"}) {
			t.Errorf("a codemode record declares %v (%d tokens), want tool_search and code", r.Declared, r.ToolTokens)
		}
	}
	want := []string{"gateway-codemode:code mcp__notes__echo", "gateway-codemode:code tool_search tool_search",
		"gateway-codemode:code mcp__notes__echo mcp__slow__block"}
	if !slices.Equal(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
}

// TestCodemodeStoreIsPerSession: the values a session's script stores are
// what that session's later scripts load, not another session's; a
// script that fails stores nothing; a session's store is dropped when the
// session ends, and past the bound the store used longest ago is dropped.
// Over HTTP, which keeps no session, a value lives for its one script.
func TestCodemodeStoreIsPerSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGateway(t, mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", "")})
		a, b := connect(t, g, gateway.Codemode), connect(t, g, gateway.Codemode)
		for _, step := range []struct {
			cs           *mcp.ClientSession
			script, want string
		}{
			{a, `store("k", {n: 1}); return "stored";`, "stored"},
			{a, `return load("k").n;`, "1"},
			{b, `return load("k") === undefined;`, "true"},
			{b, `store("k", "b's"); return "stored";`, "stored"},
			{a, `return load("k").n;`, "1"},
			{b, `return load("k");`, "b's"},
		} {
			if text, isErr := code(t, step.cs, step.script); isErr || text != step.want {
				t.Errorf("%s: %q (error %v), want %q", step.script, text, isErr, step.want)
			}
		}
		if text, isErr := code(t, a, `store("k", 2); throw new Error("no");`); !isErr || !strings.Contains(text, "no") {
			t.Errorf("the failing script: %q (error %v)", text, isErr)
		}
		if text, _ := code(t, a, `return load("k").n;`); text != "1" {
			t.Errorf("after a failing script stored 2: %q, want the value before", text)
		}
		if n := gateway.SessionStores(g); n != 2 {
			t.Errorf("%d stores held for two sessions", n)
		}
		a.Close()
		synctest.Wait() // the session has ended
		if n := gateway.SessionStores(g); n != 1 {
			t.Errorf("%d stores held once one of two sessions ended, want 1", n)
		}
		gateway.SetMaxSessionStores(g, 2)
		c, d := connect(t, g, gateway.Codemode), connect(t, g, gateway.Codemode)
		code(t, c, `store("k", "c's"); return "";`)
		code(t, d, `return "";`) // b's store, used longest ago, is dropped
		if n := gateway.SessionStores(g); n != 2 {
			t.Errorf("%d stores held past the bound of 2", n)
		}
		if text, _ := code(t, c, `return load("k");`); text != "c's" {
			t.Errorf("a session held within the bound: %q, want its value", text)
		}
		if text, _ := code(t, b, `return load("k") === undefined;`); text != "true" {
			t.Errorf("the dropped session's value: %q, want none", text)
		}
	})
	t.Run("http", func(t *testing.T) {
		g := newGateway(t, mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", "")})
		hs := httptest.NewServer(g.Handler(gateway.HTTPConfig{}))
		t.Cleanup(hs.Close)
		for _, version := range protocolVersions {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, nil).Connect(t.Context(),
				&mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp/codemode"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			if text, isErr := code(t, cs, `store("k", 1); return load("k");`); isErr || text != "1" {
				t.Errorf("%s: a value within its script: %q (error %v)", version, text, isErr)
			}
			if text, _ := code(t, cs, `return load("k") === undefined;`); text != "true" {
				t.Errorf("%s: a value in the next script over HTTP: %q, want none", version, text)
			}
		}
		if n := gateway.SessionStores(g); n != 0 {
			t.Errorf("%d stores held for HTTP requests, want none", n)
		}
	})
}
