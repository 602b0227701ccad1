package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

func memServer(name string) ServerConfig {
	return ServerConfig{Name: name, Type: "stdio", Command: "unused"}
}

func TestConnectRegistersTools(t *testing.T) {
	cfg := memServer("mem")
	cfg.Description = "In memory."
	f := newFixture(t, cfg)
	useMemServers(f.m, map[string]*mcp.Server{"mem": mcptest.NewServer("mem", "Use echo.\nSecond line.")})
	f.m.Start(f.ctx())
	f.waitAll()
	st := f.status("mem")
	if st.State != Connected || st.Err != nil || st.Tools != mcptest.Tools || st.Exposure != tool.Deferred {
		t.Fatalf("status = %+v", st)
	}
	echo, ok := f.reg.Get("mcp__mem__echo")
	if !ok {
		t.Fatalf("echo not registered: %v", f.reg.Tools())
	}
	yes := true
	want := tool.Tool{
		Name:        "mcp__mem__echo",
		Description: "Echo the text.",
		Parameters:  json.RawMessage(`{"properties":{"text":{"type":"string"}},"type":"object"}`),
		Exposure:    tool.Deferred,
		Namespace:   &tool.Namespace{Name: "mcp__mem", Description: "In memory.", Instructions: "Use echo.\nSecond line."},
		Annotations: &tool.Annotations{ReadOnly: &yes},
		Origin:      tool.Origin{Server: "mem", Tool: "echo"},
	}
	echo.Handler = nil
	if diff := cmp.Diff(want, echo); diff != "" {
		t.Errorf("echo (-want +got):\n%s", diff)
	}
	if len(f.reg.ActiveNames()) != 0 {
		t.Errorf("deferred tools are active: %v", f.reg.ActiveNames())
	}
	if got := text(f.call("mcp__mem__echo", `{"text":"hi"}`)); got != "echo: hi" {
		t.Errorf("echo = %q", got)
	}
	if got := f.call("mcp__mem__pid", ``); got.IsError {
		t.Errorf("a call without arguments failed: %q", text(got))
	}
}

func TestRegistrationNamingAndInvalidTools(t *testing.T) {
	srv := mcptest.NewServer("odd", "")
	megabyte := strings.Repeat("x", 1<<20)
	long := strings.Repeat("n", 60)
	rewriteList(srv, func(tools []*mcp.Tool) []*mcp.Tool {
		obj := map[string]any{"type": "object"}
		return append(tools[:1:1], // keep the first listed tool (big)
			&mcp.Tool{Name: "read-file", Description: "Dash.", InputSchema: obj},
			&mcp.Tool{Name: "read_file", Description: "Underscore.", InputSchema: obj},
			&mcp.Tool{Name: "dup", Description: "First.", InputSchema: obj},
			&mcp.Tool{Name: "dup", Description: "Second.", InputSchema: obj},
			&mcp.Tool{Name: "array", Description: "Array schema.", InputSchema: map[string]any{"type": "array"}},
			&mcp.Tool{Name: "text", Description: "String schema.", InputSchema: "not a schema"},
			&mcp.Tool{Name: "noschema", Description: "No schema."},
			&mcp.Tool{Name: "huge", Description: megabyte, InputSchema: obj},
			&mcp.Tool{Name: "ctl\x01name\n", Description: "bell\x07 and nul\x00\nsecond line", InputSchema: obj},
			&mcp.Tool{Name: strings.Repeat("x", 200), Description: "Name too long for MCP.", InputSchema: obj},
			&mcp.Tool{Name: long, InputSchema: obj, Title: "Long Title"},
		)
	})
	f := newFixture(t, memServer("odd"))
	useMemServers(f.m, map[string]*mcp.Server{"odd": srv})
	f.m.Start(f.ctx())
	f.waitAll()
	if st := f.status("odd"); st.State != Connected {
		t.Fatalf("status = %+v", st)
	}
	byOrigin := map[string]tool.Tool{}
	for _, tl := range f.reg.Tools() {
		byOrigin[tl.Origin.Tool] = tl
	}
	var origins []string
	for o := range byOrigin {
		origins = append(origins, o)
	}
	slices.Sort(origins)
	// huge is refused: a megabyte description would overflow every request
	// that declares it (TestRefusedToolsAreSkipped).
	wantOrigins := []string{"big", "ctl\x01name\n", "dup", long, "noschema", "read-file", "read_file"}
	slices.Sort(wantOrigins)
	if diff := cmp.Diff(wantOrigins, origins); diff != "" {
		t.Errorf("registered tools (-want +got):\n%s", diff)
	}
	if got := byOrigin["dup"].Description; got != "First." {
		t.Errorf("duplicate: kept %q, want the first", got)
	}
	dash, under := byOrigin["read-file"].Name, byOrigin["read_file"].Name
	if dash == under || !strings.HasPrefix(dash, "mcp__odd__read_file_") || !strings.HasPrefix(under, "mcp__odd__read_file_") {
		t.Errorf("colliding names: %q and %q, want both suffixed", dash, under)
	}
	if got := byOrigin["ctl\x01name\n"].Name; got != "mcp__odd__ctl_name_" {
		t.Errorf("control characters: name %q", got)
	}
	if got := byOrigin[long].Name; len(got) != 64 || got != f.namer.Name("odd", long) {
		t.Errorf("long name: %q", got)
	}
	if got := byOrigin[long].Description; got != "Long Title" {
		t.Errorf("description from title: %q", got)
	}
	if got := string(byOrigin["noschema"].Parameters); got != `{"type":"object","properties":{}}` {
		t.Errorf("missing schema became %s", got)
	}
	if got := string(byOrigin["read-file"].Parameters); got != `{"properties":{},"type":"object"}` {
		t.Errorf("schema without properties became %s", got)
	}
	log := f.log.String()
	for _, want := range []string{`tool=array`, `tool=text`, `tool=dup`, `characters long`, `the description is 1048576 bytes`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log does not mention %q:\n%.2000s", want, log)
		}
	}
	// Calls use the server's own name.
	if got := text(f.call(byOrigin["big"].Name, `{"n":20}`)); !strings.HasPrefix(got, "<start>") {
		t.Errorf("big = %q", got)
	}
}

func TestExposureMapping(t *testing.T) {
	direct := memServer("direct")
	direct.Exposure = tool.Direct
	direct.ToolExposure = []ToolExposure{{Pattern: "crash", Exposure: tool.Hidden}}
	mixed := memServer("mixed")
	mixed.ToolExposure = []ToolExposure{
		{Pattern: "e*", Exposure: tool.Direct},
		{Pattern: "echo", Exposure: tool.Codemode}, // exact wins over the earlier pattern
		{Pattern: "*", Exposure: tool.Hidden},
		{Pattern: "pid", Exposure: tool.Deferred},
	}
	always := memServer("always")
	always.AlwaysLoad = true
	always.Briefs = map[string]string{"echo": "Repeat what you are told"}
	always.ToolExposure = []ToolExposure{{Pattern: "hang", Exposure: tool.Hidden}}
	f := newFixture(t, direct, mixed, always)
	useMemServers(f.m, map[string]*mcp.Server{
		"direct": mcptest.NewServer("d", ""), "mixed": mcptest.NewServer("m", ""), "always": mcptest.NewServer("a", ""),
	})
	f.m.Start(f.ctx())
	f.waitAll()
	exposure := func(name string) tool.Exposure {
		tl, ok := f.reg.Get(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		return tl.Exposure
	}
	for name, want := range map[string]tool.Exposure{
		"mcp__direct__echo":  tool.Direct,
		"mcp__direct__crash": tool.Hidden,
		"mcp__mixed__echo":   tool.Codemode,
		"mcp__mixed__pid":    tool.Deferred,
		"mcp__mixed__fail":   tool.Hidden,
		"mcp__always__echo":  tool.Deferred,
		"mcp__always__hang":  tool.Hidden,
	} {
		if got := exposure(name); got != want {
			t.Errorf("%s: exposure %s, want %s", name, got, want)
		}
	}
	for name, want := range map[string]bool{
		"mcp__direct__echo": true, "mcp__direct__crash": false, "mcp__mixed__echo": false,
		"mcp__mixed__pid": false, "mcp__always__echo": true, "mcp__always__pid": true, "mcp__always__hang": false,
	} {
		if got := f.reg.IsActive(name); got != want {
			t.Errorf("%s: active %v, want %v", name, got, want)
		}
	}
	if echo, _ := f.reg.Get("mcp__always__echo"); echo.Brief != "Repeat what you are told" {
		t.Errorf("configured brief: %q", echo.Brief)
	}
	if pid, _ := f.reg.Get("mcp__always__pid"); pid.Brief != "" {
		t.Errorf("unconfigured brief: %q", pid.Brief)
	}
	// tool_search is needed: mixed has deferred and codemode tools.
	if !f.m.NeedsSearch() {
		t.Errorf("NeedsSearch = false")
	}
}

func TestNeedsSearch(t *testing.T) {
	direct := memServer("d")
	direct.Exposure = tool.Direct
	always := memServer("a")
	always.AlwaysLoad = true
	off := memServer("off")
	off.Disabled = true
	overridden := memServer("o") // deferred, but every tool is direct
	overridden.ToolExposure = []ToolExposure{{Pattern: "*", Exposure: tool.Direct}}
	for _, tc := range []struct {
		name    string
		servers []ServerConfig
		want    bool
	}{
		{"none", nil, false},
		{"direct", []ServerConfig{direct}, false},
		{"always loaded", []ServerConfig{always}, false},
		{"disabled", []ServerConfig{off}, false},
		{"star override", []ServerConfig{overridden}, false},
		{"deferred", []ServerConfig{direct, memServer("x")}, true},
	} {
		m := mustManager(t, &Config{Servers: tc.servers})
		if got := m.NeedsSearch(); got != tc.want {
			t.Errorf("%s: NeedsSearch = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCodemodeNamespaces: the enabled servers with a codemode exposure,
// by the server's exposure or one tool's, by name.
func TestCodemodeNamespaces(t *testing.T) {
	whole := memServer("whole-server")
	whole.Exposure, whole.Description = tool.Codemode, "All of it"
	some := memServer("some")
	some.ToolExposure = []ToolExposure{{Pattern: "run_*", Exposure: tool.Codemode}}
	off := memServer("off")
	off.Exposure, off.Disabled = tool.Codemode, true
	m := mustManager(t, &Config{Servers: []ServerConfig{memServer("plain"), whole, off, some}})
	got := m.CodemodeNamespaces()
	want := []tool.Namespace{{Name: "mcp__some"}, {Name: "mcp__whole_server", Description: "All of it"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("CodemodeNamespaces = %+v, want %+v", got, want)
	}
}

// TestNamespaces: the enabled servers that have tools not hidden, by
// name, with their descriptions.
func TestNamespaces(t *testing.T) {
	plain := memServer("plain")
	plain.Description = "Plain tools"
	whole := memServer("whole-server")
	whole.Exposure = tool.Codemode
	hidden := memServer("hidden")
	hidden.Exposure = tool.Hidden
	partly := memServer("partly")
	partly.Exposure, partly.ToolExposure = tool.Hidden, []ToolExposure{{Pattern: "echo", Exposure: tool.Direct}}
	off := memServer("off")
	off.Disabled = true
	m := mustManager(t, &Config{Servers: []ServerConfig{plain, whole, hidden, partly, off}})
	got := m.Namespaces()
	want := []tool.Namespace{{Name: "mcp__partly"}, {Name: "mcp__plain", Description: "Plain tools"}, {Name: "mcp__whole_server"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Namespaces = %+v, want %+v", got, want)
	}
}

func TestListChangedStormCoalesces(t *testing.T) {
	srv := mcptest.NewServer("storm", "")
	count := countCalls(srv)
	var blocking atomic.Bool
	gateOpen := make(chan struct{})
	listing := make(chan struct{}, 100)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" && blocking.Load() {
				listing <- struct{}{}
				<-gateOpen
			}
			return next(ctx, method, req)
		}
	})
	f := newFixture(t, memServer("storm"))
	useMemServers(f.m, map[string]*mcp.Server{"storm": srv})
	notified := make(chan struct{}, 100)
	f.m.onListChanged = func(string) { notified <- struct{}{} }
	f.m.Start(f.ctx())
	f.waitAll()
	lists := count("tools/list")
	changes := 0
	cancel := f.m.OnChange(func() { changes++ })
	defer cancel()

	blocking.Store(true)
	add := func(i int) {
		srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("storm_%02d", i), InputSchema: mcptest.ObjectSchema()},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
		<-notified
	}
	add(0)
	<-listing // the first refresh is in the server, held there
	const storm = 30
	for i := 1; i < storm; i++ {
		add(i)
	}
	blocking.Store(false)
	close(gateOpen)
	f.eventually("the refreshes", func() bool {
		_, ok := f.reg.Get(fmt.Sprintf("mcp__storm__storm_%02d", storm-1))
		return ok && count("tools/list") == lists+2
	})
	// One more round trip, so a third refresh would have been asked for.
	f.call("mcp__storm__echo", `{"text":"x"}`)
	if got := count("tools/list") - lists; got != 2 {
		t.Errorf("%d notifications caused %d listings, want 2", storm, got)
	}
	if st := f.status("storm"); st.Tools != mcptest.Tools+storm {
		t.Errorf("tools = %d, want %d", st.Tools, mcptest.Tools+storm)
	}
}

func TestChangedAndVanishedTools(t *testing.T) {
	srv := mcptest.NewServer("live", "")
	f := newFixture(t, memServer("live"))
	useMemServers(f.m, map[string]*mcp.Server{"live": srv})
	f.m.Start(f.ctx())
	f.waitAll()
	f.reg.Activate("mcp__live__echo", "mcp__live__pid") // loaded by tool_search
	before, _ := f.reg.Get("mcp__live__fail")
	var changes []tool.Change
	var mu sync.Mutex
	cancel := f.reg.Subscribe(func(c tool.Change) {
		mu.Lock()
		changes = append(changes, c)
		mu.Unlock()
	})
	defer cancel()

	srv.RemoveTools("pid")
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Echo, changed.", InputSchema: mcptest.ObjectSchema("text")},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "changed"}}}, nil
		})
	f.eventually("the refresh", func() bool {
		pid, _ := f.reg.Get("mcp__live__pid")
		echo, _ := f.reg.Get("mcp__live__echo")
		return pid.Exposure == tool.Hidden && echo.Description == "Echo, changed."
	})
	if f.reg.IsActive("mcp__live__pid") {
		t.Errorf("the vanished tool is still active")
	}
	if !f.reg.IsActive("mcp__live__echo") {
		t.Errorf("the changed tool lost its active state")
	}
	if got := text(f.call("mcp__live__echo", `{}`)); got != "changed" {
		t.Errorf("changed tool answered %q", got)
	}
	after, _ := f.reg.Get("mcp__live__fail")
	after.Handler, before.Handler = nil, nil
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("unchanged tool was re-registered differently:\n%s", diff)
	}
	if st := f.status("live"); st.Tools != mcptest.Tools-1 {
		t.Errorf("tools = %d, want %d", st.Tools, mcptest.Tools-1)
	}
	mu.Lock()
	var deactivated []string
	for _, c := range changes {
		deactivated = append(deactivated, c.Deactivated...)
	}
	mu.Unlock()
	if !slices.Equal(deactivated, []string{"mcp__live__pid"}) {
		t.Errorf("deactivated %v", deactivated)
	}

	// The tool comes back: on the shelf again, not active.
	srv.AddTool(&mcp.Tool{Name: "pid", Description: "Back.", InputSchema: mcptest.ObjectSchema()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	f.eventually("the tool's return", func() bool {
		pid, _ := f.reg.Get("mcp__live__pid")
		return pid.Exposure == tool.Deferred
	})
	if f.reg.IsActive("mcp__live__pid") {
		t.Errorf("the returning tool became active")
	}
}

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

func TestCatalogToolsTheServerDropsAreHidden(t *testing.T) {
	f := newFixture(t, memServer("a"))
	useMemServers(f.m, map[string]*mcp.Server{"a": mcptest.NewServer("a", "")})
	srv, err := catalog.Parse("a.json", []byte(`{"server":"a","tools":[{"name":"echo"},{"name":"stale"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.reg.Register(srv.AsTools(f.namer, tool.Direct)...); err != nil {
		t.Fatal(err)
	}
	f.m.Start(f.ctx())
	f.waitAll()
	stale, _ := f.reg.Get("mcp__a__stale")
	if stale.Exposure != tool.Hidden || f.reg.IsActive("mcp__a__stale") {
		t.Errorf("stale catalog tool: exposure %s, active %v", stale.Exposure, f.reg.IsActive("mcp__a__stale"))
	}
	echo, _ := f.reg.Get("mcp__a__echo")
	if echo.Handler == nil || echo.Exposure != tool.Deferred {
		t.Errorf("listed tool: %+v", echo)
	}
}

func TestDisabledServer(t *testing.T) {
	off := memServer("off")
	off.Disabled = true
	f := newFixture(t, off)
	ms := useMemServers(f.m, map[string]*mcp.Server{"off": mcptest.NewServer("off", "")})
	srv, _ := catalog.Parse("off.json", []byte(`{"server":"off","tools":[{"name":"echo"}]}`))
	f.reg.Register(srv.AsTools(f.namer, tool.Direct)...)
	f.m.Start(f.ctx())
	f.waitAll()
	st := f.status("off")
	if st.State != Disabled || st.Tools != 0 {
		t.Errorf("status = %+v", st)
	}
	if tl, _ := f.reg.Get("mcp__off__echo"); tl.Exposure != tool.Hidden || f.reg.IsActive(tl.Name) {
		t.Errorf("a disabled server's tool is %s, active %v", tl.Exposure, f.reg.IsActive(tl.Name))
	}
	if ms.dialCount("off") != 0 {
		t.Errorf("a disabled server was connected")
	}
	r, err := f.m.call(f.ctx(), f.m.byName["off"], "echo", nil)
	if err != nil || !r.IsError || !strings.Contains(text(r), `"off"`) || !strings.Contains(text(r), "disabled") {
		t.Errorf("call = %+v, %v", r, err)
	}
	if f.m.Section().Text != nil {
		t.Errorf("a disabled server is in the section")
	}
}

func TestFailedServerCall(t *testing.T) {
	f := newFixture(t, memServer("down"))
	f.m.transport = func(*server) (transport, error) { return transport{}, errors.New("no route to the server") }
	f.m.Start(f.ctx())
	f.waitAll()
	st := f.status("down")
	if st.State != Failed || st.Err == nil || !strings.Contains(st.Err.Error(), "no route") {
		t.Fatalf("status = %+v", st)
	}
	r, err := f.m.call(f.ctx(), f.m.byName["down"], "echo", nil)
	if err != nil || !r.IsError || !strings.Contains(text(r), `"down"`) || !strings.Contains(text(r), "no route") {
		t.Errorf("call = %+v, %v", r, err)
	}
}

func TestLostSessionReconnectsOnNextCall(t *testing.T) {
	f := newFixture(t, memServer("mem"))
	ms := useMemServers(f.m, map[string]*mcp.Server{"mem": mcptest.NewServer("mem", "")})
	f.m.Start(f.ctx())
	f.waitAll()
	ms.kill("mem")
	f.eventually("the disconnection", func() bool { return f.status("mem").State == Disconnected })
	if err := f.status("mem").Err; err == nil || !strings.Contains(err.Error(), `"mem"`) {
		t.Errorf("Err = %v", err)
	}
	if got := text(f.call("mcp__mem__echo", `{"text":"back"}`)); got != "echo: back" {
		t.Errorf("call after reconnect = %q", got)
	}
	if n := ms.dialCount("mem"); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	if f.status("mem").State != Connected {
		t.Errorf("state = %s", f.status("mem").State)
	}
}

func TestRestoredNamesActivateOnConnect(t *testing.T) {
	f := newFixture(t, memServer("mem"))
	useMemServers(f.m, map[string]*mcp.Server{"mem": mcptest.NewServer("mem", "")})
	f.reg.Restore("mcp__mem__echo")
	f.m.Start(f.ctx())
	f.waitAll()
	if !f.reg.IsActive("mcp__mem__echo") || f.reg.IsActive("mcp__mem__pid") {
		t.Errorf("active = %v", f.reg.ActiveNames())
	}
}

func TestOnChange(t *testing.T) {
	f := newFixture(t, memServer("mem"))
	useMemServers(f.m, map[string]*mcp.Server{"mem": mcptest.NewServer("mem", "Instructions.")})
	gates := gatedTransports(f.m, "mem")
	var mu sync.Mutex
	calls := 0
	connected := make(chan struct{})
	cancel := f.m.OnChange(func() {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if f.status("mem").State == Connected && connected != nil {
			close(connected)
			connected = nil
		}
	})
	before := f.m.Section()
	f.m.Start(f.ctx())
	close(gates["mem"])
	select {
	case <-connected:
	case <-f.ctx().Done():
		t.Fatal("OnChange was not called after the server connected")
	}
	if after := f.m.Section(); *after.Text == *before.Text || !strings.Contains(*after.Text, "mcp__mem (tool_search): Instructions.") {
		t.Errorf("section after connecting:\n%s", *after.Text)
	}
	// The connection's notification has been delivered; after cancel, the
	// changes Close makes must not reach the listener.
	cancel()
	mu.Lock()
	n := calls
	mu.Unlock()
	f.m.Close()
	mu.Lock()
	defer mu.Unlock()
	if calls != n {
		t.Errorf("a cancelled listener was called %d more times", calls-n)
	}
}

func TestResults(t *testing.T) {
	f := newFixture(t, memServer("r"))
	useMemServers(f.m, map[string]*mcp.Server{"r": mcptest.NewServer("r", "")})
	f.m.Start(f.ctx())
	f.waitAll()

	mixed := f.call("mcp__r__mixed", `{}`)
	want := &tool.Result{Content: []tool.Content{
		{Text: "hello"},
		{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
		{Text: "[audio: audio/wav, 8 bytes, not shown]"},
		{Text: "[resource link: a.txt <file:///tmp/a.txt> (text/plain) A file.]"},
		{Text: "[resource <file:///tmp/b.txt> (text/plain)]\ncontents of b"},
		{Text: "[resource <file:///tmp/c.bin>, 3 bytes of binary data, not shown]"},
	}}
	if diff := cmp.Diff(want, mixed); diff != "" {
		t.Errorf("mixed (-want +got):\n%s", diff)
	}

	structured := f.call("mcp__r__structured", `{}`)
	want = &tool.Result{Content: []tool.Content{{Text: `{"answer":42}`}}, Structured: json.RawMessage(`{"answer":42}`)}
	if diff := cmp.Diff(want, structured); diff != "" {
		t.Errorf("structured (-want +got):\n%s", diff)
	}

	failed := f.call("mcp__r__fail", `{}`)
	if !failed.IsError || text(failed) != "it failed" {
		t.Errorf("fail = %+v", failed)
	}

	// A JSON-RPC error (bad arguments) is an error result; the session stays.
	bad := f.call("mcp__r__echo", `{"text": 7}`)
	if !bad.IsError || !strings.Contains(text(bad), "rejected") {
		t.Errorf("bad arguments = %+v", bad)
	}
	if f.status("r").State != Connected {
		t.Errorf("an error answer disconnected the server")
	}
}

func TestTruncation(t *testing.T) {
	f := newFixture(t, memServer("r"))
	dir := t.TempDir() + "/out"
	f.m.opts.OutputDir = dir
	useMemServers(f.m, map[string]*mcp.Server{"r": mcptest.NewServer("r", "")})
	f.m.Start(f.ctx())
	f.waitAll()

	small := f.call("mcp__r__big", fmt.Sprintf(`{"n":%d}`, MaxOutputBytes))
	if got := text(small); len(got) != MaxOutputBytes || strings.HasPrefix(got, "Warning") {
		t.Errorf("an output of exactly %d bytes was changed: %d bytes", MaxOutputBytes, len(got))
	}

	const n = 100_001
	r := f.call("mcp__r__big", fmt.Sprintf(`{"n":%d}`, n))
	if len(r.Content) != 1 {
		t.Fatalf("%d parts", len(r.Content))
	}
	out := r.Content[0].Text
	first, rest, _ := strings.Cut(out, "\n")
	var path string
	var kept int
	if _, err := fmt.Sscanf(first, "Warning: output truncated from 100001 to %d bytes; the full output is in %s", &kept, &path); err != nil {
		t.Fatalf("first line %q: %v", first, err)
	}
	if len(out) > MaxOutputBytes {
		t.Errorf("truncated output is %d bytes, over %d", len(out), MaxOutputBytes)
	}
	if !strings.HasPrefix(rest, "<start>") || !strings.HasSuffix(rest, "<end>") || !strings.Contains(rest, "[…]") {
		t.Errorf("the head or tail is missing: %.60q … %.60q", rest, rest[len(rest)-60:])
	}
	if got := len(rest) - len(omitted); got != kept {
		t.Errorf("the note says %d bytes kept; %d were", kept, got)
	}
	if !utf8Valid(rest) {
		t.Errorf("the truncated text cuts a rune")
	}
	full, err := readFileMode(path)
	if err != nil {
		t.Fatal(err)
	}
	if full.text != mcptest.BigText(n) {
		t.Errorf("saved file has %d bytes, want the full %d", len(full.text), n)
	}
	if full.mode != 0o600 {
		t.Errorf("file mode %o, want 600", full.mode)
	}
	if full.dirMode != 0o700 {
		t.Errorf("folder mode %o, want 700", full.dirMode)
	}
	if !strings.HasPrefix(path, dir) {
		t.Errorf("saved to %s, not under %s", path, dir)
	}
}

func TestTruncateMiddleSaveError(t *testing.T) {
	s := strings.Repeat("ab", MaxOutputBytes)
	out := truncateMiddle(s, "", errors.New("disk full"))
	if !strings.HasPrefix(out, fmt.Sprintf("Warning: output truncated from %d to ", len(s))) ||
		!strings.Contains(strings.SplitN(out, "\n", 2)[0], "could not be saved: disk full") {
		t.Errorf("note = %q", strings.SplitN(out, "\n", 2)[0])
	}
	if len(out) > MaxOutputBytes {
		t.Errorf("%d bytes", len(out))
	}
}

func TestCloseIsIdempotentAndStartAfterCloseDoesNothing(t *testing.T) {
	f := newFixture(t, memServer("mem"))
	ms := useMemServers(f.m, map[string]*mcp.Server{"mem": mcptest.NewServer("mem", "")})
	if err := f.m.Close(); err != nil {
		t.Fatal(err)
	}
	f.m.Start(f.ctx())
	if ms.dialCount("mem") != 0 {
		t.Errorf("Start after Close connected")
	}
	if err := f.m.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestUnavailable: why a declared tool that has not registered cannot be
// called — by the state of the server its name belongs to.
func TestUnavailable(t *testing.T) {
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
	} {
		if got := s.mayProvide(pattern); got != want {
			t.Errorf("mayProvide(%q) = %v, want %v", pattern, got, want)
		}
	}
}
