package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
)

func memServer(name string) ServerConfig {
	return ServerConfig{Name: name, Type: "stdio", Command: "unused"}
}

func TestConnectRegistersTools(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

func TestCatalogToolsTheServerDropsAreHidden(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

func TestCloseIsIdempotentAndStartAfterCloseDoesNothing(t *testing.T) {
	t.Parallel()
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
