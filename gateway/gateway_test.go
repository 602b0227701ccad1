package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
)

// newGateway returns a gateway over upstream servers, through the same
// shelf configuration serve uses.
func newGateway(t *testing.T, servers ...mcpclient.ServerConfig) *gateway.Gateway {
	t.Helper()
	return newGatewayWith(t, gateway.Config{}, servers...)
}

// newGatewayWith is newGateway with a configuration (whose AlwaysLoad
// the servers set).
func newGatewayWith(t *testing.T, gc gateway.Config, servers ...mcpclient.ServerConfig) *gateway.Gateway {
	t.Helper()
	cfg, always := gateway.ShelfConfig(servers)
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Servers: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shelf.Close() })
	gc.AlwaysLoad = always
	g, err := gateway.New(shelf, gc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

// connect returns a client session of a gateway's surface, in memory.
func connect(t *testing.T, g *gateway.Gateway, s gateway.Surface) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := g.Server(s).Connect(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func listBytes(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMetaSearchThenCall: a search returns the upstream tool's definition,
// and call_tool runs it and returns the upstream result, also when the
// model drops the prefix and sends the arguments as a string.
func TestMetaSearchThenCall(t *testing.T) {
	g := newGateway(t, mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", "")})
	cs := connect(t, g, gateway.Meta)
	text, isErr := call(t, cs, "tool_search", map[string]any{"query": "echo the text back"})
	if isErr || !strings.Contains(text, "## mcp__notes__echo") || !strings.Contains(text, `"text"`) {
		t.Fatalf("tool_search: %q", text)
	}
	for _, args := range []map[string]any{
		{"name": "mcp__notes__echo", "arguments": map[string]any{"text": "hi"}},
		{"name": "echo", "arguments": `{"text":"hi"}`},
		{"name": "MCP__NOTES__ECHO", "arguments": map[string]any{"text": "hi"}},
	} {
		if text, isErr := call(t, cs, "call_tool", args); isErr || text != "echo: hi" {
			t.Errorf("call_tool %v = %q (error %v), want the upstream's echo", args, text, isErr)
		}
	}
}

// TestMalformedCallGetsTheSchema: arguments that do not match the target's
// schema get the schema and a one-line fix; the corrected retry works.
func TestMalformedCallGetsTheSchema(t *testing.T) {
	g := newGateway(t, mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", "")})
	cs := connect(t, g, gateway.Meta)
	text, isErr := call(t, cs, "call_tool", map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": 7}})
	if !isErr || !strings.Contains(text, "Invalid arguments for mcp__notes__echo") || !strings.Contains(text, "JSON Schema") ||
		!strings.Contains(text, `"properties"`) || !strings.Contains(text, "call again") {
		t.Errorf("a malformed call: %q (error %v)", text, isErr)
	}
	if text, isErr := call(t, cs, "call_tool", map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": "7"}}); isErr || text != "echo: 7" {
		t.Errorf("the corrected retry: %q", text)
	}
	if text, isErr := call(t, cs, "call_tool", map[string]any{"name": "nosuch"}); !isErr || !strings.Contains(text, "tool_search") {
		t.Errorf("an unknown name: %q", text)
	}
}

// TestMetaListNeverChanges: the meta surface's tools/list is the same bytes
// before and after searches, calls, an upstream list change, and on a
// second replica with other upstream servers.
func TestMetaListNeverChanges(t *testing.T) {
	up := mcptest.NewServer("notes", "")
	g := newGateway(t, mcpclient.ServerConfig{Name: "notes", Server: up})
	cs := connect(t, g, gateway.Meta)
	before := listBytes(t, cs)
	call(t, cs, "tool_search", map[string]any{"query": "echo"})
	call(t, cs, "call_tool", map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": "x"}})
	up.AddTool(&mcp.Tool{Name: "later", Description: "A tool added later.", InputSchema: mcptest.ObjectSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	if text, _ := call(t, cs, "tool_search", map[string]any{"query": "select:mcp__notes__later"}); !strings.Contains(text, "mcp__notes__later") {
		t.Errorf("the upstream's new tool is not found: %q", text)
	}
	if after := listBytes(t, cs); after != before {
		t.Errorf("tools/list changed:\n%s\n%s", before, after)
	}
	replica := newGateway(t, mcpclient.ServerConfig{Name: "other", Server: mcptest.NewServer("other", "")})
	if other := listBytes(t, connect(t, replica, gateway.Meta)); other != before {
		t.Errorf("a replica lists other bytes:\n%s\n%s", before, other)
	}
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || caps.Tools.ListChanged {
		t.Errorf("meta capabilities %+v: want tools without listChanged", caps.Tools)
	}
	if strings.Contains(before, "notes") || strings.Contains(before, "echo") {
		t.Errorf("the meta list names an upstream tool or server: %s", before)
	}
}

// gated is a transport whose connection waits for release.
type gated struct {
	mcp.Transport
	release chan struct{}
}

func (g gated) Connect(ctx context.Context) (mcp.Connection, error) {
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Transport.Connect(ctx)
}

// lateServer returns an upstream server "late" (the mcptest server, in
// memory) whose connection waits until release is closed.
func lateServer(t *testing.T) (late mcpclient.ServerConfig, release chan struct{}) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcptest.NewServer("late", "").Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	release = make(chan struct{})
	return mcpclient.ServerConfig{Name: "late", Transport: gated{ct, release}}, release
}

// TestSearchFindsALateServer: a search issued while an upstream server is
// still starting waits for it and finds its tools.
func TestSearchFindsALateServer(t *testing.T) {
	late, release := lateServer(t)
	g := newGateway(t, late)
	cs := connect(t, g, gateway.Meta)
	// The list answers at once, before the server is up.
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tool_search", Arguments: map[string]any{"query": "echo the text"}})
		if err != nil {
			found <- err.Error()
			return
		}
		found <- res.Content[0].(*mcp.TextContent).Text
	}()
	close(release)
	if text := <-found; !strings.Contains(text, "mcp__late__echo") {
		t.Errorf("the search while late started: %q", text)
	}
}

// TestHiddenToolsAreDenied: a tool the servers file hides is denied through
// call_tool and absent from the direct surface.
func TestHiddenToolsAreDenied(t *testing.T) {
	g := newGateway(t, mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", ""),
		ToolExposure: []mcpclient.ToolExposure{{Pattern: "pid", Exposure: tool.Hidden}}})
	cs := connect(t, g, gateway.Meta)
	call(t, cs, "tool_search", map[string]any{"query": "echo"}) // waits for the server
	if text, isErr := call(t, cs, "call_tool", map[string]any{"name": "mcp__notes__pid"}); !isErr || !strings.Contains(text, "not available through this gateway") {
		t.Errorf("a hidden tool through call_tool: %q (error %v)", text, isErr)
	}
	if text, _ := call(t, cs, "tool_search", map[string]any{"query": "select:mcp__notes__pid"}); strings.Contains(text, "## mcp__notes__pid") {
		t.Errorf("a search shows the hidden tool: %q", text)
	}
	direct := connect(t, g, gateway.Direct)
	if l := listBytes(t, direct); strings.Contains(l, "mcp__notes__pid") || !strings.Contains(l, "mcp__notes__echo") {
		t.Errorf("the direct list: %s", l)
	}
}

// TestDirectSurfaceAlwaysLoadTools: the tools Config.AlwaysLoadTools
// names carry the alwaysLoad hint, the others of their server do not.
func TestDirectSurfaceAlwaysLoadTools(t *testing.T) {
	up := mcptest.NewServer("notes", "")
	g := newGatewayWith(t, gateway.Config{AlwaysLoadTools: []string{"mcp__notes__echo"}}, mcpclient.ServerConfig{Name: "notes", Server: up})
	call(t, connect(t, g, gateway.Meta), "tool_search", map[string]any{"query": "echo"}) // waits for the server
	res, err := connect(t, g, gateway.Direct).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	marked := map[string]bool{}
	for _, tl := range res.Tools {
		marked[tl.Name] = tl.Meta["anthropic/alwaysLoad"] == true
	}
	if len(marked) < 2 || !marked["mcp__notes__echo"] {
		t.Errorf("alwaysLoad hints %v, want mcp__notes__echo's", marked)
	}
	for name, m := range marked {
		if m && name != "mcp__notes__echo" {
			t.Errorf("%s carries the alwaysLoad hint", name)
		}
	}
}

// TestDirectSurface: every upstream tool, typed, callable by its name, and
// the list follows upstream changes; always-loaded servers' tools carry
// Claude Code's alwaysLoad hint.
func TestDirectSurface(t *testing.T) {
	up := mcptest.NewServer("notes", "")
	g := newGateway(t, mcpclient.ServerConfig{Name: "notes", Server: up, AlwaysLoad: true})
	cs := connect(t, g, gateway.Meta)
	call(t, cs, "tool_search", map[string]any{"query": "echo"}) // waits for the server
	direct := connect(t, g, gateway.Direct)
	res, err := direct.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if tl.Meta["anthropic/alwaysLoad"] != true {
			t.Errorf("%s lacks the alwaysLoad hint: %v", tl.Name, tl.Meta)
		}
	}
	if !slices.Contains(names, "mcp__notes__echo") || !slices.IsSorted(names) {
		t.Errorf("direct tools %v", names)
	}
	if text, isErr := call(t, direct, "mcp__notes__echo", map[string]any{"text": "d"}); isErr || text != "echo: d" {
		t.Errorf("a direct call: %q", text)
	}
	if text, isErr := call(t, direct, "mcp__notes__echo", map[string]any{"text": 1}); !isErr || !strings.Contains(text, "Invalid arguments") {
		t.Errorf("a direct call with bad arguments: %q", text)
	}
}

// TestDirectSurfaceIsMadeWhenAsked: serving the meta surface (in
// memory or over HTTP) makes none of the direct surface's tools; asking
// for the direct surface makes them all, and from then on it follows the
// registry.
func TestDirectSurfaceIsMadeWhenAsked(t *testing.T) {
	up := mcptest.NewServer("notes", "")
	cfg, _ := gateway.ShelfConfig([]mcpclient.ServerConfig{{Name: "notes", Server: up}})
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Servers: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shelf.Close() })
	g, err := gateway.New(shelf, gateway.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	call(t, connect(t, g, gateway.Meta), "tool_search", map[string]any{"query": "echo"}) // waits for the server
	srv := httptest.NewServer(g.Handler(gateway.HTTPConfig{}))
	defer srv.Close()
	hc := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, nil)
	hs, err := hc.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	call(t, hs, "tool_search", map[string]any{"query": "echo"})
	if gateway.DirectFollows(g) {
		t.Fatal("the direct surface made its tools for meta clients")
	}

	names := func() []string {
		var out []string
		for _, tl := range g.Tools(gateway.Direct) {
			out = append(out, tl.Name)
		}
		return out
	}
	var want []string
	for _, tl := range shelf.Registry().Tools() {
		if tl.Origin.Server == "notes" {
			want = append(want, tl.Name)
		}
	}
	slices.Sort(want)
	if got := names(); !slices.Equal(got, want) {
		t.Fatalf("direct tools %v, want %v", got, want)
	}
	if !gateway.DirectFollows(g) {
		t.Fatal("the direct surface does not follow the registry once asked for")
	}

	registered := make(chan string, 4)
	cancel := shelf.Registry().Subscribe(func(c tool.Change) {
		for _, n := range c.Registered {
			registered <- n
		}
	})
	defer cancel()
	up.AddTool(&mcp.Tool{Name: "late", Description: "A tool added later.", InputSchema: mcptest.ObjectSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	for n := <-registered; n != "mcp__notes__late"; n = <-registered {
	}
	// The direct surface subscribed first, so it has synced by now.
	if got := names(); !slices.Contains(got, "mcp__notes__late") {
		t.Errorf("direct tools after an upstream change %v", got)
	}
}

// TestHTTPNeedsTheToken: with a token, a request without it gets 401 and a
// WWW-Authenticate header, one with it is served.
func TestHTTPNeedsTheToken(t *testing.T) {
	g := newGateway(t, mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", "")})
	srv := httptest.NewServer(g.Handler(gateway.HTTPConfig{Token: "s3cret"}))
	defer srv.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, c := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer wrong", http.StatusUnauthorized}, {"Bearer s3cret", http.StatusOK}} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("Authorization %q: %d, want %d", c.auth, resp.StatusCode, c.want)
		}
		if c.want == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without a Bearer challenge")
		}
	}
}

// TestReplicasAnswerAlternatingRequests: a client over HTTP whose requests
// alternate between two gateway replicas (each its own process state)
// searches on one and calls on the other.
func TestReplicasAnswerAlternatingRequests(t *testing.T) {
	var handlers []http.Handler
	for range 2 {
		g := newGateway(t, mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", "")})
		handlers = append(handlers, g.Handler(gateway.HTTPConfig{}))
	}
	n := 0
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := handlers[n%2]
		n++
		h.ServeHTTP(w, r)
	}))
	defer lb.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: lb.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if text, _ := call(t, cs, "tool_search", map[string]any{"query": "echo the text"}); !strings.Contains(text, "mcp__notes__echo") {
		t.Errorf("search: %q", text)
	}
	if text, isErr := call(t, cs, "call_tool", map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": "lb"}}); isErr || text != "echo: lb" {
		t.Errorf("call: %q", text)
	}
	if n < 3 {
		t.Errorf("only %d requests reached the replicas", n)
	}
}

// TestMetaListSurvivesAnUpstreamCrash: an upstream stdio server that dies
// during a call is reconnected on the next call, and the meta surface's
// tools/list is the same bytes throughout.
func TestMetaListSurvivesAnUpstreamCrash(t *testing.T) {
	command, args, env := mcptest.Command(nil)
	g := newGateway(t, mcpclient.ServerConfig{Name: "proc", Command: command, Args: args, Env: env})
	cs := connect(t, g, gateway.Meta)
	before := listBytes(t, cs)
	if text, isErr := call(t, cs, "call_tool", map[string]any{"name": "mcp__proc__echo", "arguments": map[string]any{"text": "1"}}); isErr || text != "echo: 1" {
		t.Fatalf("before the crash: %q", text)
	}
	if _, isErr := call(t, cs, "call_tool", map[string]any{"name": "mcp__proc__crash"}); !isErr {
		t.Error("a call during which the server died is not an error")
	}
	if text, isErr := call(t, cs, "call_tool", map[string]any{"name": "mcp__proc__echo", "arguments": map[string]any{"text": "2"}}); isErr || text != "echo: 2" {
		t.Errorf("after the crash: %q (error %v), want the reconnected server's echo", text, isErr)
	}
	if after := listBytes(t, cs); after != before {
		t.Errorf("tools/list changed across the crash:\n%s\n%s", before, after)
	}
}

// TestSearchesAndCallsAreRecorded: every search and call through a surface
// is a metrics record naming the surface's declared tools with their
// tokens and the tool called; a script's record names its inner calls,
// with their result tokens.
func TestSearchesAndCallsAreRecorded(t *testing.T) {
	log := t.TempDir() + "/metrics.jsonl"
	servers, _ := gateway.ShelfConfig([]mcpclient.ServerConfig{{Name: "notes", Server: mcptest.NewServer("notes", "")}})
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Servers: servers, Metrics: log})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gateway.New(shelf, gateway.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, g, gateway.Meta)
	call(t, cs, "tool_search", map[string]any{"query": "echo"})
	call(t, cs, "call_tool", map[string]any{"name": "mcp__notes__echo", "arguments": map[string]any{"text": "x"}})
	call(t, connect(t, g, gateway.Direct), "mcp__notes__pid", map[string]any{})
	cm := connect(t, g, gateway.Codemode)
	call(t, cm, "tool_search", map[string]any{"query": "echo"})
	call(t, cm, gateway.CodeName, map[string]any{"code": `await tools.mcp__notes__echo({text: "1"}); return await tools.mcp__notes__pid({});`})
	g.Close()
	shelf.Close()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, bad, err := tokens.ReadLog(f)
	if err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	var got []string
	for _, r := range records {
		got = append(got, r.Strategy+":"+strings.Join(r.Called, ",")+strings.Join(append([]string{""}, r.Inner...), " "))
		if r.ToolTokens == 0 || len(r.Declared) != len(r.DeclaredTokens) {
			t.Errorf("record without declared tools: %+v", r)
		}
		if r.Strategy == "gateway-codemode" && !slices.Equal(r.Declared, []string{"tool_search", "code"}) {
			t.Errorf("a codemode record declares %v, want tool_search and code", r.Declared)
		}
		if (len(r.Inner) > 0) != (r.InnerTokens > 0) {
			t.Errorf("record with %d inner calls and %d inner tokens", len(r.Inner), r.InnerTokens)
		}
	}
	want := []string{"gateway-meta:tool_search", "gateway-meta:mcp__notes__echo", "gateway-direct:mcp__notes__pid",
		"gateway-codemode:tool_search", "gateway-codemode:code mcp__notes__echo mcp__notes__pid"}
	if !slices.Equal(got, want) {
		t.Errorf("records %v, want %v", got, want)
	}
}

// TestCodemodeExposureStaysOnTheShelf: a server configured with codemode
// exposure is served like any other: its tools are deferred on the
// gateway's shelf, and the shelf registers no codemode tool of its own
// that the direct surface would list or call_tool would run. Before,
// ShelfConfig kept codemode exposure, so the shelf registered its
// codemode tool and the gateway served it as if it were upstream.
func TestCodemodeExposureStaysOnTheShelf(t *testing.T) {
	servers, _ := gateway.ShelfConfig([]mcpclient.ServerConfig{{Name: "notes", Server: mcptest.NewServer("notes", ""), Exposure: tool.Codemode,
		ToolExposure: []mcpclient.ToolExposure{{Pattern: "pid", Exposure: tool.Codemode}}}})
	if s := servers[0]; s.Exposure != tool.Deferred || s.ToolExposure[0].Exposure != tool.Deferred {
		t.Errorf("ShelfConfig kept codemode exposure: %q, %q", s.Exposure, s.ToolExposure[0].Exposure)
	}
	g := newGateway(t, mcpclient.ServerConfig{Name: "notes", Server: mcptest.NewServer("notes", ""), Exposure: tool.Codemode})
	meta := connect(t, g, gateway.Meta)
	call(t, meta, "tool_search", map[string]any{"query": "echo"}) // waits for the server
	if l := listBytes(t, connect(t, g, gateway.Direct)); strings.Contains(l, `"name":"codemode"`) || !strings.Contains(l, "mcp__notes__echo") {
		t.Errorf("the direct list: %s, want the upstream tools and no codemode tool", l)
	}
	if text, isErr := call(t, meta, "call_tool", map[string]any{"name": "codemode", "arguments": map[string]any{"code": "return 1"}}); !isErr || text == "1" {
		t.Errorf("call_tool codemode: %q (error %v), want no such tool", text, isErr)
	}
	// A program's shelf with the codemode tool enabled: the gateway does
	// not serve that tool either.
	cfg, _ := gateway.ShelfConfig([]mcpclient.ServerConfig{{Name: "notes", Server: mcptest.NewServer("notes", "")}})
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Servers: cfg, Codemode: toolshelf.CodemodeConfig{Enable: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shelf.Close() })
	if shelf.Codemode() == nil {
		t.Fatal("the shelf registered no codemode tool")
	}
	own, err := gateway.New(shelf, gateway.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(own.Close)
	meta = connect(t, own, gateway.Meta)
	call(t, meta, "tool_search", map[string]any{"query": "echo"})
	if l := listBytes(t, connect(t, own, gateway.Direct)); strings.Contains(l, `"name":"codemode"`) {
		t.Errorf("the direct list of a shelf with codemode enabled: %s, want no codemode tool", l)
	}
	if text, isErr := call(t, meta, "call_tool", map[string]any{"name": "codemode", "arguments": map[string]any{"code": "return 1"}}); !isErr || text == "1" {
		t.Errorf("call_tool codemode on a shelf with codemode enabled: %q (error %v), want no such tool", text, isErr)
	}
}
