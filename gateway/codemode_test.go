package gateway_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/tool"
)

// code calls the codemode surface's code tool with a script.
func code(t *testing.T, cs *mcp.ClientSession, script string) (string, bool) {
	t.Helper()
	return call(t, cs, gateway.CodeName, map[string]any{"code": script})
}

// TestCodemodeSurface: the codemode surface lists code and tool_search; a
// search says how a script calls the found tools; a script chains upstream
// calls (a structured result arrives as an object) and only its value comes
// back; a script's failure — an unknown tool, a hidden one, no code — is an
// error result that says why.
func TestCodemodeSurface(t *testing.T) {
	g := newGateway(t, mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", ""), Description: "Notes for tests",
		ToolExposure: []mcpclient.ToolExposure{{Pattern: "pid", Exposure: tool.Hidden}}})
	cs := connect(t, g, gateway.Codemode)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if slices.Sort(names); !slices.Equal(names, []string{gateway.CodeName, gateway.SearchName}) {
		t.Fatalf("the codemode surface lists %v, want code and tool_search", names)
	}
	text, isErr := call(t, cs, gateway.SearchName, map[string]any{"query": "echo the text back"})
	if isErr || !strings.Contains(text, "## mcp__notes__echo") || !strings.Contains(text, "In a script: await tools.mcp__notes__echo({...})") ||
		!strings.Contains(text, "in a script with code") || strings.Contains(text, "call_tool") {
		t.Errorf("tool_search on the codemode surface: %q", text)
	}
	if text, isErr := code(t, cs, `const e = await tools.mcp__notes__echo({text: "a"});
const s = await tools.mcp__notes__structured({});
console.log("two calls");
return e + " / " + s.answer;`); isErr || text != "two calls\necho: a / 42" {
		t.Errorf("a script of two calls: %q (error %v), want its log and value", text, isErr)
	}
	for script, want := range map[string]string{
		`return await tools.mcp__notes__ecko({text: "a"});`: "did you mean tools.mcp__notes__echo",
		`return await tools.mcp__notes__pid({});`:           "not a tool a script can call",
		`return await tools.mcp__notes__fail({});`:          "it failed",
		` `: "the code is empty",
	} {
		if text, isErr := code(t, cs, script); !isErr || !strings.Contains(text, want) {
			t.Errorf("script %q: %q (error %v), want an error with %q", script, text, isErr, want)
		}
	}
	if text, isErr := call(t, cs, gateway.CodeName, map[string]any{"script": "return 1"}); !isErr || !strings.Contains(text, `{"code"`) {
		t.Errorf("code without code: %q (error %v), want the shape of the arguments", text, isErr)
	}
	desc := res.Tools[slices.IndexFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == gateway.CodeName })].Description
	if !strings.Contains(desc, "## mcp__notes: Notes for tests") || !strings.Contains(desc, "searchTools") {
		t.Errorf("the code tool's description does not list the server: %s", desc)
	}
}

// TestCodemodeListNeverChanges: the codemode surface's tools/list is the
// same bytes while its upstream server is still connecting, once it has
// connected, after searches, scripts and an upstream list change (whose
// new tool a script calls), and it
// promises no list_changed; it lists the configured server before the
// server is up.
func TestCodemodeListNeverChanges(t *testing.T) {
	st, ct := mcp.NewInMemoryTransports()
	up := mcptest.NewServer("late", "")
	ss, err := up.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	release := make(chan struct{})
	servers, _ := gateway.ShelfConfig([]mcpclient.ServerConfig{{Name: "late", Transport: gated{ct, release}}})
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shelf.Close() })
	registered := make(chan struct{})
	var once sync.Once
	defer shelf.Registry().Subscribe(func(c tool.Change) {
		if slices.Contains(c.Registered, "mcp__late__later") {
			once.Do(func() { close(registered) })
		}
	})()
	g, err := gateway.New(shelf, gateway.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	cs := connect(t, g, gateway.Codemode)
	before := listBytes(t, cs)
	if !strings.Contains(before, "## mcp__late (tools not listed)") {
		t.Errorf("the list while the server connects does not name it: %s", before)
	}
	close(release)
	if text, isErr := code(t, cs, `return (await searchTools("echo the text")).map(t => t.name).includes("mcp__late__echo");`); isErr || text != "true" {
		t.Errorf("a script's search once the server connected: %q (error %v)", text, isErr)
	}
	call(t, cs, gateway.SearchName, map[string]any{"query": "echo"})
	up.AddTool(&mcp.Tool{Name: "later", Description: "A tool added later.", InputSchema: mcptest.ObjectSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "later"}}}, nil
		})
	<-registered
	if text, isErr := code(t, cs, `return await tools.mcp__late__later({});`); isErr || text != "later" {
		t.Errorf("a script calling the upstream's new tool: %q (error %v)", text, isErr)
	}
	if after := listBytes(t, cs); after != before {
		t.Errorf("tools/list changed:\n%s\n%s", before, after)
	}
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || caps.Tools.ListChanged {
		t.Errorf("codemode capabilities %+v: want tools without listChanged", caps.Tools)
	}
	if got := g.Tools(gateway.Codemode); len(got) != 2 {
		t.Errorf("Tools(codemode) = %d tools, want 2", len(got))
	}
}

// TestCodemodeScriptWaitsForItsServer: a script that names a server still
// connecting waits for it (its tools are not registered before), then
// calls them.
func TestCodemodeScriptWaitsForItsServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		late, release := lateServer(t)
		g := newGateway(t, late)
		cs := connect(t, g, gateway.Codemode)
		type answer struct {
			text  string
			isErr bool
		}
		done := make(chan answer, 1)
		go func() {
			text, isErr := code(t, cs, `return await tools.mcp__late__echo({text: "hi"});`)
			done <- answer{text, isErr}
		}()
		synctest.Wait() // the script has arrived; the server is still connecting
		select {
		case a := <-done:
			t.Fatalf("the script answered while its server was connecting: %q (error %v)", a.text, a.isErr)
		default:
		}
		close(release)
		if a := <-done; a.isErr || a.text != "echo: hi" {
			t.Errorf("the script after its server connected: %q (error %v), want the upstream's echo", a.text, a.isErr)
		}
	})
}

// blocking is an upstream server whose block tool reports its start, waits
// for its call to be cancelled and reports that.
func blocking() (srv *mcp.Server, started, cancelled chan struct{}) {
	srv = mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	started, cancelled = make(chan struct{}), make(chan struct{})
	srv.AddTool(&mcp.Tool{Name: "block", Description: "Block until cancelled.", InputSchema: mcptest.ObjectSchema()},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return nil, ctx.Err()
		})
	return srv, started, cancelled
}

// TestCodemodeClientCancelStopsTheScript: a client that cancels its code
// request stops the script: the upstream call the script was awaiting is
// cancelled, the client's call returns, and the gateway goes on serving.
func TestCodemodeClientCancelStopsTheScript(t *testing.T) {
	srv, started, cancelled := blocking()
	g := newGateway(t, mcpclient.ServerConfig{Name: "slow", Server: srv}, mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", "")})
	cs := connect(t, g, gateway.Codemode)
	ctx, cancel := context.WithCancel(t.Context())
	returned := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: gateway.CodeName,
			Arguments: map[string]any{"code": `await tools.mcp__slow__block({}); return "not cancelled";`}})
		returned <- err
	}()
	<-started
	cancel()
	<-cancelled // the script's call was cancelled upstream
	if err := <-returned; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled call returned %v, want the cancellation", err)
	}
	if text, isErr := code(t, cs, `return await tools.mcp__notes__echo({text: "after"});`); isErr || text != "echo: after" {
		t.Errorf("a script after the cancelled one: %q (error %v)", text, isErr)
	}
}

// TestCodemodeLimits: the gateway's scripts run under its limits, and a
// script past one stops with the error that names it; limits that cannot
// be are refused when the gateway is made.
func TestCodemodeLimits(t *testing.T) {
	servers, _ := gateway.ShelfConfig([]mcpclient.ServerConfig{{Name: "notes", Server: mcptest.NewServer("notes", "")}})
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shelf.Close() })
	if _, err := gateway.New(shelf, gateway.Config{Limits: codemode.Limits{Calls: -1}}); err == nil || !strings.Contains(err.Error(), "Limits.Calls is -1") {
		t.Errorf("New with a negative call limit: %v, want the limit named", err)
	}
	g, err := gateway.New(shelf, gateway.Config{Limits: codemode.Limits{Calls: 2}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	cs := connect(t, g, gateway.Codemode)
	text, isErr := code(t, cs, `for (let i = 0; i < 3; i++) await tools.mcp__notes__echo({text: String(i)}); return "all three";`)
	if !isErr || !strings.Contains(text, "tool-call limit of 2") || !strings.Contains(text, "2 tool calls made before it stopped") {
		t.Errorf("a script past the call limit: %q (error %v)", text, isErr)
	}
	desc := g.Tools(gateway.Codemode)[1].Description
	if !strings.Contains(desc, "2 tool calls") {
		t.Errorf("the code tool's description does not state the limit: %s", desc)
	}
}
