package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// Surface is what a gateway shows its clients.
type Surface string

// The surfaces.
const (
	// Meta shows tool_search and call_tool, a list that never changes.
	Meta Surface = "meta"
	// Direct shows every upstream tool, typed.
	Direct Surface = "direct"
	// Codemode shows tool_search and code, which runs a script that calls
	// the upstream tools: a list that never changes.
	Codemode Surface = "codemode"
)

// Surfaces lists the surfaces, the default first.
var Surfaces = []Surface{Meta, Direct, Codemode}

// ParseSurface reads a surface's name.
func ParseSurface(s string) (Surface, error) {
	for _, x := range Surfaces {
		if string(x) == s {
			return x, nil
		}
	}
	return "", fmt.Errorf("unknown surface %q: use meta (tool_search and call_tool, a fixed list), direct (every upstream tool) "+
		"or codemode (tool_search and code, which runs a script that calls the tools)", s)
}

// Config configures a [Gateway].
type Config struct {
	// Name and Version identify the gateway to its clients; empty means
	// "toolshelf" and "dev".
	Name, Version string
	// AlwaysLoad names the upstream servers whose tools the direct surface
	// marks for clients to declare up front (Claude Code reads
	// _meta["anthropic/alwaysLoad"]).
	AlwaysLoad []string
	// AlwaysLoadTools names tools (model-facing names) the direct surface
	// marks the same way: the always-load suggestions of toolshelf shelf
	// suggest --apply.
	AlwaysLoadTools []string
	// Logger receives the gateway's own log; nil discards it.
	Logger *slog.Logger
	// Limits bound each script of the codemode surface's code tool; zero
	// fields take [codemode.DefaultLimits].
	Limits codemode.Limits
	// MaxScripts bounds the scripts that run at once, over every client;
	// zero means [codemode.DefaultMaxScripts]. A script past it waits for
	// a turn for at most QueueWait (zero means
	// [codemode.DefaultQueueWait]), then is refused with an error result
	// that says so ([codemode.ErrBusy]).
	MaxScripts int
	// QueueWait bounds a script's wait for a turn; see MaxScripts.
	QueueWait time.Duration
	// CapabilityWait bounds how long a client's initialize waits for the
	// upstream servers still connecting to be listed, so that the
	// capabilities it gets say whether they have prompts, resources and
	// completions; zero means [DefaultCapabilityWait], negative no wait.
	CapabilityWait time.Duration
}

// Gateway serves a shelf to MCP clients. Make one with [New]; it is safe
// for concurrent use and keeps no state per client but the values the
// scripts of a connected (stdio) session store, for at most 1,024
// sessions at once and dropped when the session ends.
type Gateway struct {
	shelf     *toolshelf.Shelf
	reg       *tool.Registry
	mcp       *mcpclient.Manager
	searcher  *toolsearch.Searcher
	cfg       Config
	validator tool.Validator

	// runner runs the codemode surface's scripts; script is its tool,
	// whose handler and reach the code tool uses.
	runner *codemode.Runner
	script tool.Tool
	// stores holds each client session's stored values (store/load).
	stores *sessionStores

	once     sync.Once
	meta     *mcp.Server
	direct   *directServer
	codemode *mcp.Server
	// upstream follows the upstreams' prompts and resources onto every
	// surface (upstream.go).
	upstream *upstreams
	// settleBy ends the waits for upstreams still connecting of a
	// client's initialize and of the direct surface's first list:
	// [FirstListWait] after New.
	settleBy time.Time
}

// New returns a gateway over a shelf. Every upstream tool the shelf holds
// is reachable (hidden ones are denied); the shelf should keep them all on
// the shelf (deferred), as [ShelfConfig] makes it, so that one index serves
// every search. It fails only when cfg.Limits, cfg.MaxScripts or
// cfg.QueueWait is invalid (negative).
func New(shelf *toolshelf.Shelf, cfg Config) (*Gateway, error) {
	if cfg.Name == "" {
		cfg.Name = "toolshelf"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	g := &Gateway{shelf: shelf, reg: shelf.Registry(), mcp: shelf.MCP(), searcher: shelf.Searcher(), cfg: cfg,
		settleBy: time.Now().Add(FirstListWait)}
	// The code tool's description lists the configured servers, known
	// before any connects, so it is the same bytes for the life of the
	// process; their tools are found with searchTools or tool_search.
	r, err := codemode.New(codemode.Config{Registry: g.reg, Searcher: g.searcher, Validator: &g.validator,
		Wait: g.mcp.WaitFor, Limits: cfg.Limits, Namespaces: g.mcp.Namespaces(), MaxScripts: cfg.MaxScripts, QueueWait: cfg.QueueWait})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g.runner, g.script, g.stores = r, r.Tool(), newSessionStores()
	return g, nil
}

// ShelfConfig returns the shelf configuration a gateway wants for servers:
// every tool on the shelf (direct, model-only and codemode exposures and
// always-loaded servers become deferred: a gateway declares nothing
// itself, and the shelf registers no codemode tool of its own; the
// codemode surface runs scripts over every upstream tool), hidden tools
// kept hidden. It also returns the names of the servers that were always
// loaded, for [Config.AlwaysLoad].
func ShelfConfig(servers []mcpclient.ServerConfig) (out []mcpclient.ServerConfig, alwaysLoad []string) {
	for _, s := range servers {
		if s.AlwaysLoad {
			alwaysLoad = append(alwaysLoad, s.Name)
		}
		s.AlwaysLoad = false
		if s.Exposure != "" && s.Exposure != tool.Hidden {
			s.Exposure = tool.Deferred
		}
		te := slices.Clone(s.ToolExposure)
		for i := range te {
			if te[i].Exposure != tool.Hidden {
				te[i].Exposure = tool.Deferred
			}
		}
		s.ToolExposure = te
		out = append(out, s)
	}
	return out, alwaysLoad
}

// Server returns the MCP server of a surface, made once and shared by
// every client. The direct surface's tools are made on its first call
// for Direct.
func (g *Gateway) Server(s Surface) *mcp.Server {
	g.once.Do(func() {
		g.meta = g.newMeta()
		g.direct = g.newDirect()
		g.codemode = g.newCodemode()
		surfaces := []*mcp.Server{g.meta, g.direct.srv, g.codemode}
		g.upstream = g.followUpstreams(surfaces)
		for _, srv := range surfaces {
			srv.AddReceivingMiddleware(bound, g.upstream.middleware)
		}
	})
	switch s {
	case Direct:
		g.direct.start()
		return g.direct.srv
	case Codemode:
		return g.codemode
	}
	return g.meta
}

// Close stops following the registry and the upstreams' prompts and
// resources.
func (g *Gateway) Close() {
	if g.direct != nil {
		g.direct.stop()
	}
	if g.upstream != nil {
		g.upstream.stop()
	}
}

// impl is the gateway's implementation record.
func (g *Gateway) impl() *mcp.Implementation {
	return &mcp.Implementation{Name: g.cfg.Name, Version: g.cfg.Version}
}

// callable reports whether a registered tool may be called through the
// gateway: an upstream or program tool that is not hidden and is not a
// tool of the shelf's own (tool_search, the codemode tool of a shelf made
// with codemode enabled: the codemode surface has its own).
func callable(t tool.Tool) bool {
	return t.Exposure != tool.Hidden && !t.Reaches.All && t.Handler != nil && !codemode.Is(t)
}

// dispatch runs a call of a registered tool: it waits for the tool's
// server, then validates the arguments and calls it
// ([tool.Validator.Call]). The result is the MCP result the client gets
// (a handler's panic is an error result); a Go error only when ctx ended.
func (g *Gateway) dispatch(ctx context.Context, s Surface, name string, args json.RawMessage, fix func(t tool.Tool, err error) string) (*mcp.CallToolResult, error) {
	if err := g.mcp.WaitFor(ctx, name); err != nil {
		return nil, err
	}
	t, ok := g.reg.Get(name)
	if !ok || !callable(t) {
		return errorResult(fmt.Sprintf("Tool %s is not available through this gateway.", name)), nil
	}
	res, err := g.validator.Call(ctx, t, args)
	var panicked *tool.PanicError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case tool.RefusedArguments(err):
		return errorResult(fix(t, err)), nil
	case errors.As(err, &panicked):
		g.cfg.Logger.Error("tool panicked", "tool", name, "panic", panicked.Value, "stack", string(panicked.Stack))
		return errorResult(fmt.Sprintf("Tool %s failed: it panicked: %v", name, panicked.Value)), nil
	default:
		return errorResult(fmt.Sprintf("Tool %s failed: %v", name, err)), nil
	}
	g.record(s, name, nil, nil)
	return convert(res), nil
}

// schema is a tool's parameter schema as clients are shown it: the form
// providers get ([tool.RenderSchema]), since a client declares it to its
// model as it is.
func schema(t tool.Tool) json.RawMessage {
	if r, err := tool.RenderSchema(t.Parameters); err == nil && len(r.Schema) > 0 {
		return r.Schema
	}
	return t.Parameters
}

// convert turns a shelf result into an MCP result.
func convert(res *tool.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.IsError, Content: []mcp.Content{}}
	for _, c := range res.Content {
		if c.MIMEType != "" && len(c.Data) > 0 {
			out.Content = append(out.Content, &mcp.ImageContent{MIMEType: c.MIMEType, Data: c.Data})
			continue
		}
		out.Content = append(out.Content, &mcp.TextContent{Text: c.Text})
	}
	if len(res.Structured) > 0 && json.Valid(res.Structured) {
		out.StructuredContent = res.Structured
	}
	return out
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// declaration is a tool as an llm declaration, for token counts.
func declaration(t *mcp.Tool) llm.Tool {
	b, _ := json.Marshal(t.InputSchema)
	return llm.Tool{Name: t.Name, Description: t.Description, Parameters: b}
}

// Tools returns what a surface's tools/list holds now, in list order.
func (g *Gateway) Tools(s Surface) []*mcp.Tool {
	g.Server(s)
	switch s {
	case Direct:
		return g.direct.tools()
	case Codemode:
		return g.codemodeTools()
	}
	return metaTools()
}

// Tokens returns the o200k tokens of a tool's definition as a client
// declares it to its model.
func Tokens(t *mcp.Tool) (int, error) {
	counter, err := tokens.Default()
	if err != nil {
		return 0, err
	}
	return counter.Tool(declaration(t)), nil
}
