package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/tool"
)

// directServer is the direct surface: an MCP server whose tools follow
// the registry's callable tools.
type directServer struct {
	g      *Gateway
	srv    *mcp.Server
	cancel func()

	mu    sync.Mutex
	shown map[string]string    // name → the definition last added, as JSON
	defs  map[string]*mcp.Tool // name → that definition
}

func (g *Gateway) newDirect() *directServer {
	d := &directServer{g: g, shown: map[string]string{}, defs: map[string]*mcp.Tool{}}
	// The tools capability is declared from the start: the surface has no
	// tool until an upstream server connects, and a client that reads
	// capabilities would otherwise never list them. (Logging, which the
	// SDK declares by default, is left out: the gateway sends clients no
	// log messages, and the feature is deprecated.)
	d.srv = mcp.NewServer(g.impl(), &mcp.ServerOptions{Logger: g.cfg.Logger,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	d.sync()
	// Upstream changes (a server connecting, list_changed, a reconnect)
	// reach every client as tools/list_changed.
	d.cancel = g.reg.Subscribe(func(tool.Change) { d.sync() })
	return d
}

// sync brings the server's tools in step with the registry.
func (d *directServer) sync() {
	d.mu.Lock()
	defer d.mu.Unlock()
	want := map[string]bool{}
	for _, t := range d.g.reg.Tools() {
		if !callable(t) {
			continue
		}
		want[t.Name] = true
		mt := d.g.mcpTool(t)
		b, _ := json.Marshal(mt)
		if d.shown[t.Name] == string(b) {
			continue
		}
		d.shown[t.Name], d.defs[t.Name] = string(b), mt
		name := t.Name
		d.srv.AddTool(mt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return d.g.dispatch(ctx, Direct, name, req.Params.Arguments, func(t tool.Tool, err error) string {
				return fmt.Sprintf("Invalid arguments for %s: %v", t.Name, err)
			})
		})
	}
	var gone []string
	for name := range d.shown {
		if !want[name] {
			gone = append(gone, name)
		}
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

// mcpTool is a registry tool as the direct surface lists it.
func (g *Gateway) mcpTool(t tool.Tool) *mcp.Tool {
	mt := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema(t)}
	if a := t.Annotations; a != nil {
		mt.Annotations = &mcp.ToolAnnotations{Title: a.Title, DestructiveHint: a.Destructive, IdempotentHint: derefBool(a.Idempotent),
			OpenWorldHint: a.OpenWorld, ReadOnlyHint: derefBool(a.ReadOnly)}
	}
	if t.Origin.Server != "" && slices.Contains(g.cfg.AlwaysLoad, t.Origin.Server) {
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
