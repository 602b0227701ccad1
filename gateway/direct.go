package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/tool"
)

// directServer is the direct surface: an MCP server whose tools follow
// the registry's callable tools.
type directServer struct {
	g   *Gateway
	srv *mcp.Server

	// started follows the registry, once: the surface's tools are made
	// when a client first asks for the surface ([directServer.start]).
	started sync.Once

	mu     sync.Mutex
	cancel func()               // stops following the registry; nil until started
	closed bool                 // set by stop: start follows nothing after it
	rev    uint64               // the registry revision sync last followed
	seed   maphash.Seed         // of the hashes in shown
	shown  map[string]uint64    // name → a hash of the definition last added, as JSON
	defs   map[string]*mcp.Tool // name → that definition

	// waited is set once a tools/list has waited for the servers that
	// were connecting (see [FirstListWait]); later lists answer at once.
	waited atomic.Bool
}

// FirstListWait bounds, from the gateway's start ([New]), how long the
// direct surface's first tools/list and a client's initialize wait for
// upstream servers still connecting; it also bounds how long a call of a
// tool the surface does not list yet waits for them. Each server's own
// connect timeout ends its attempt sooner when it is shorter. A client
// such as Claude Code lists the tools once, right after it starts the
// gateway, while the servers are still starting: without the wait it
// would see no tool at all. It is below Claude Code's own bound on
// connecting to an MCP server (5 s, MCP_CONNECT_TIMEOUT_MS), which
// covers the gateway's start and its initialize: a gateway that waited
// longer was dropped by Claude Code, and its tools with it.
const FirstListWait = 4 * time.Second

func (g *Gateway) newDirect() *directServer {
	d := &directServer{g: g, seed: maphash.MakeSeed(), shown: map[string]uint64{}, defs: map[string]*mcp.Tool{}}
	// The tools capability is declared from the start: the surface has no
	// tool until an upstream server connects, and a client that reads
	// capabilities would otherwise never list them. (Logging, which the
	// SDK declares by default, is left out: the gateway sends clients no
	// log messages, and the feature is deprecated.)
	d.srv = mcp.NewServer(g.impl(), &mcp.ServerOptions{Logger: g.cfg.Logger,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	d.srv.AddReceivingMiddleware(d.awaitServers)
	return d
}

// start makes the surface's tools and follows the registry from then on,
// the first time it is called: the tools are made only for a gateway
// whose direct surface is served, since on a shelf of 100,000 tools they
// cost seconds and heap that the meta and codemode surfaces do not need.
// Every way to reach the surface (Server, Tools, the HTTP route) calls
// it before a client can see the tools.
func (d *directServer) start() {
	d.started.Do(func() {
		// Upstream changes (a server connecting, list_changed, a
		// reconnect) reach every client as tools/list_changed.
		cancel := d.g.reg.Subscribe(func(tool.Change) { d.sync() })
		d.mu.Lock()
		closed := d.closed
		if !closed {
			d.cancel = cancel
		}
		d.mu.Unlock()
		if closed {
			cancel()
			return
		}
		d.sync()
	})
}

// stop stops following the registry.
func (d *directServer) stop() {
	d.mu.Lock()
	cancel := d.cancel
	d.cancel, d.closed = nil, true
	d.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// sync brings the server's tools in step with the registry. It looks only
// at the tools registered or re-registered since the last sync
// ([tool.Registry.ChangedSince]), so a registry change costs in proportion
// to what changed, not to the shelf's size; a re-registered tool whose
// definition is the one shown is left as it is.
func (d *directServer) sync() {
	d.mu.Lock()
	defer d.mu.Unlock()
	changed, rev := d.g.reg.ChangedSince(d.rev)
	d.rev = rev
	var gone []string
	for _, t := range changed {
		if !callable(t) {
			if _, ok := d.shown[t.Name]; ok {
				gone = append(gone, t.Name)
			}
			continue
		}
		mt := d.g.mcpTool(t)
		b, _ := json.Marshal(mt)
		h := maphash.Bytes(d.seed, b)
		if old, ok := d.shown[t.Name]; ok && old == h {
			continue
		}
		d.shown[t.Name], d.defs[t.Name] = h, mt
		name := t.Name
		d.srv.AddTool(mt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return d.g.dispatch(ctx, Direct, name, req.Params.Arguments, func(t tool.Tool, err error) string {
				return fmt.Sprintf("Invalid arguments for %s: %v", t.Name, err)
			})
		})
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		for _, n := range gone {
			delete(d.shown, n)
			delete(d.defs, n)
		}
		d.srv.RemoveTools(gone...)
	}
}

// awaitServers is the direct surface's receiving middleware: the first
// tools/list, and a tools/call of a tool not listed yet, wait (at most
// [FirstListWait]) for the servers still connecting, so that the answer
// holds their tools.
func (d *directServer) awaitServers(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			d.firstList(ctx)
		case "tools/call":
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				d.awaitTool(ctx, r.Params.Name)
			}
		}
		return next(ctx, method, req)
	}
}

// firstList waits, for the first tools/list, until no server is still
// connecting or [FirstListWait] has passed since the gateway's start, then
// logs the servers left
// out: those that failed and those still connecting. A list whose client
// gave up first leaves the wait to the next one.
func (d *directServer) firstList(ctx context.Context) {
	if d.waited.Load() {
		return
	}
	wctx, cancel := context.WithDeadline(ctx, d.g.settleBy)
	defer cancel()
	_ = d.g.mcp.WaitAll(wctx)
	if ctx.Err() != nil {
		return
	}
	d.sync()
	if d.waited.Swap(true) {
		return
	}
	for _, st := range d.g.mcp.Servers() {
		switch st.State {
		case mcpclient.Connecting:
			d.g.cfg.Logger.Warn("the direct surface's first tools/list leaves out a server still connecting; "+
				"its tools follow with tools/list_changed once it connects", "server", st.Name, "waited", FirstListWait)
		case mcpclient.Failed:
			d.g.cfg.Logger.Warn("the direct surface's first tools/list leaves out a server that failed to connect",
				"server", st.Name, "error", st.Err)
		}
	}
}

// awaitTool waits, before a call of a tool the surface does not list
// (yet), for the server its name belongs to, then for every server still
// connecting, at most [FirstListWait] in all.
func (d *directServer) awaitTool(ctx context.Context, name string) {
	if d.lists(name) {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, FirstListWait)
	defer cancel()
	if d.g.mcp.WaitFor(wctx, name) == nil {
		if d.sync(); d.lists(name) {
			return
		}
	}
	_ = d.g.mcp.WaitAll(wctx)
	d.sync()
}

// lists reports whether the surface lists the tool now.
func (d *directServer) lists(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.shown[name]
	return ok
}

// mcpTool is a registry tool as the direct surface lists it.
func (g *Gateway) mcpTool(t tool.Tool) *mcp.Tool {
	mt := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema(t)}
	if a := t.Annotations; a != nil {
		mt.Annotations = &mcp.ToolAnnotations{Title: a.Title, DestructiveHint: a.Destructive, IdempotentHint: derefBool(a.Idempotent),
			OpenWorldHint: a.OpenWorld, ReadOnlyHint: derefBool(a.ReadOnly)}
	}
	if (t.Origin.Server != "" && slices.Contains(g.cfg.AlwaysLoad, t.Origin.Server)) || slices.Contains(g.cfg.AlwaysLoadTools, t.Name) {
		mt.Meta = mcp.Meta{"anthropic/alwaysLoad": true}
	}
	return mt
}

func derefBool(b *bool) bool { return b != nil && *b }

// tools returns the tools the surface lists, by name.
func (d *directServer) tools() []*mcp.Tool {
	d.mu.Lock()
	defer d.mu.Unlock()
	names := make([]string, 0, len(d.shown))
	for n := range d.shown {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]*mcp.Tool, 0, len(names))
	for _, n := range names {
		out = append(out, d.defs[n])
	}
	return out
}
