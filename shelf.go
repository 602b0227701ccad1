package toolshelf

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// Config configures a [Shelf]. The zero value is a shelf with tool_search
// and nothing else; every field adds to it.
type Config struct {
	// MCPFile is a servers file in the mcpServers format (Claude Desktop's,
	// with toolshelf's exposure fields); empty means none. The command line
	// looks in ./.toolshelf/mcp.json and the XDG config folder; a program
	// names its file.
	MCPFile string
	// Servers are MCP servers configured in the program, connected beside
	// the file's: a command, a URL, an *mcp.Server served in memory or the
	// caller's transport (see [mcpclient.ServerConfig]). Each is checked
	// when the shelf is made.
	Servers []mcpclient.ServerConfig
	// Tools are the program's own tools. Each needs a Handler and an
	// explicit Exposure, or New fails: tool.Direct is declared from the
	// first request, tool.Deferred waits on the shelf until tool_search
	// loads it (as an MCP server's tools do unless its configuration says
	// otherwise). The front door asks, because the zero value means direct
	// in package tool and deferred in a servers file. A gateway (package
	// gateway) searches the shelf only: its tool_search finds a program's
	// tool only when it is deferred.
	Tools []tool.Tool
	// Ranker is the search ranker: "toolshelf" (the default) or "pi" (the
	// reference's BM25).
	Ranker string
	// Load is how many of a search's hits tool_search loads; nil means
	// [toolsearch.DefaultLoad].
	Load *toolsearch.LoadPolicy
	// Metrics is a JSON Lines file that receives a [tokens.Record] per
	// model request (read it with toolshelf stats); empty means none.
	Metrics string
	// Lexicon is the user's file of learned aliases (package
	// internal/lexicon; the command line's is in the state folder): what
	// a conversation's failed searches taught, which tool_search reads
	// and each conversation adds to as it closes. Empty means none.
	Lexicon string
	// Logger receives the MCP servers' connection events and standard
	// error; nil discards them. A server that fails to connect is reported
	// to conversations whatever the logger ([NoteServerFailed]).
	Logger *slog.Logger
	// ClientName and ClientVersion identify the shelf to MCP servers;
	// empty means "toolshelf" and "dev".
	ClientName, ClientVersion string
	// Progress, when set, receives the progress notifications MCP
	// servers send during tool calls (see [mcpclient.Options]).
	Progress func(mcpclient.Progress)
	// Authorize, when set, shows a person the address where they sign in
	// to an MCP server that asks for authorization (OAuth); without it
	// such a server needs login ([mcpclient.Options.Authorize]).
	Authorize func(ctx context.Context, server, url string) error
	// TokenDir is where MCP servers' OAuth tokens are stored; empty means
	// the state folder's ([mcpclient.Options.TokenDir]).
	TokenDir string
	// Codemode configures the codemode tool, which runs the model's
	// scripts against the shelf's tools.
	Codemode CodemodeConfig
}

// CodemodeConfig configures the codemode tool. It is registered when
// some tool or server has codemode exposure, or when Enable or Mode
// [CodemodeOnly] says so; a conversation declares it when some tool or
// server has codemode exposure, or with CodemodeOnly (a program or
// --tools +codemode can activate it otherwise).
type CodemodeConfig struct {
	// Enable registers the codemode tool even without codemode tools.
	Enable bool
	// Limits bound each script; zero fields take
	// [codemode.DefaultLimits].
	Limits codemode.Limits
	// Budget bounds the tool listing of its description, in tokens; zero
	// means [codemode.DefaultBudget].
	Budget int
	// Mode is how the declared tools and the codemode tool share the
	// model's attention while the codemode tool is declared, as the
	// reference's codemode.mode: [CodemodeOn] (the default, also "") or
	// [CodemodeOnly].
	Mode string
}

// The values of CodemodeConfig.Mode.
const (
	// CodemodeOn declares the tools as usual, but every declared tool a
	// script can call (an active direct tool, a loaded codemode or
	// deferred one) gets a one-line description that says how a script
	// calls it ("Call from codemode: await tools.<identifier>({...})");
	// the codemode tool's description lists the codemode tools.
	CodemodeOn = "on"
	// CodemodeOnly hides the declarations of the active direct tools,
	// which stay callable from scripts, and the codemode tool's
	// description lists them beside the codemode tools: the model reaches
	// them through scripts only.
	CodemodeOnly = "only"
)

// checkMode returns the mode CodemodeConfig.Mode names, "" meaning on.
func checkMode(mode string) (string, error) {
	switch mode {
	case "", CodemodeOn:
		return CodemodeOn, nil
	case CodemodeOnly:
		return CodemodeOnly, nil
	}
	return "", fmt.Errorf("toolshelf: CodemodeConfig.Mode is %q: use %q (the default) or %q", mode, CodemodeOn, CodemodeOnly)
}

// A Shelf holds the tools — the program's, the MCP servers', tool_search —
// with their index, and hosts one conversation at a time ([Shelf.Agent]:
// a second one fails with [ErrBusy] until the first is closed). Make one
// with [New]; Close it when done. Its methods are safe for concurrent use.
type Shelf struct {
	reg      *tool.Registry
	mcp      *mcpclient.Manager
	searcher *toolsearch.Searcher
	codemode *codemode.Runner // nil when the codemode tool is not registered
	// codemodeMode is CodemodeConfig.Mode, checked: CodemodeOn or
	// CodemodeOnly.
	codemodeMode string
	// servers are the configured MCP servers: the file's and the
	// program's.
	servers []mcpclient.ServerConfig
	metrics *metricsLog
	// learning is the lexicon of learned aliases, nil without one.
	learning *learning
	// mcpFile is Config.MCPFile made absolute, "" without one: what the
	// shelf's sessions record.
	mcpFile string

	mu sync.Mutex // guards the fields below
	// baseline is the active set the first conversation started with;
	// each later conversation starts from it again.
	baseline []string
	started  bool
	// open is the conversation the shelf hosts, nil when none is open.
	open   *Agent
	cancel context.CancelFunc
}

// ErrBusy is the error of [Shelf.Agent] while another conversation on the
// shelf is open: the registry's active set is the conversation's, so a
// shelf hosts one at a time. Close the open [Agent] first, or make another
// shelf.
var ErrBusy = errors.New("toolshelf: the shelf already hosts an open conversation: Close that Agent first (a shelf hosts one at a time)")

// checkTools refuses program tools the front door cannot run as told:
// without a handler, or without an exposure.
func checkTools(tools []tool.Tool) error {
	var errs []error
	for _, t := range tools {
		switch {
		case t.Handler == nil:
			errs = append(errs, fmt.Errorf("toolshelf: %w %q: no Handler: a program's tool must run when the model calls it", tool.ErrInvalid, t.Name))
		case t.Exposure == "":
			errs = append(errs, fmt.Errorf("toolshelf: %w %q: no Exposure: set tool.Direct (declared from the first request) or tool.Deferred (on the shelf until tool_search loads it, as MCP servers' tools are by default)", tool.ErrInvalid, t.Name))
		}
	}
	return errors.Join(errs...)
}

// New makes a shelf: it registers cfg's tools and tool_search, reads the
// servers file and starts connecting the MCP servers in the background
// (ctx bounds that work; Close ends it). It returns at once; a
// conversation waits for the servers it needs.
func New(ctx context.Context, cfg Config) (*Shelf, error) {
	if err := checkTools(cfg.Tools); err != nil {
		return nil, err
	}
	cmMode, err := checkMode(cfg.Codemode.Mode)
	if err != nil {
		return nil, err
	}
	reg := tool.NewRegistry()
	if err := reg.Register(cfg.Tools...); err != nil {
		return nil, fmt.Errorf("toolshelf: %w", err)
	}
	mode := cfg.Ranker
	if mode == "" {
		mode = search.ModeToolshelf
	}
	ranker, err := search.New(mode, nil)
	if err != nil {
		return nil, fmt.Errorf("toolshelf: %w", err)
	}
	searcher := toolsearch.New(reg, ranker)
	if cfg.Load != nil {
		searcher.SetLoadPolicy(*cfg.Load)
	}
	// tool_search is declared only when some tool waits on the shelf;
	// the conversation decides (Shelf.Agent).
	ts := searcher.Tool()
	ts.StartInactive = true
	if err := reg.Register(ts); err != nil {
		return nil, fmt.Errorf("toolshelf: %w", err)
	}
	searcher.Sync()

	mcfg := &mcpclient.Config{}
	var mcpFile string
	if cfg.MCPFile != "" {
		if mcfg, err = mcpclient.LoadConfig(cfg.MCPFile); err != nil {
			return nil, err
		}
		if mcpFile, err = filepath.Abs(cfg.MCPFile); err != nil {
			return nil, fmt.Errorf("toolshelf: %w", err)
		}
	}
	mcfg.Servers = append(slices.Clone(mcfg.Servers), cfg.Servers...)
	m, err := mcpclient.NewManager(mcfg, reg, tool.NewNamer(), mcpclient.Options{
		Logger: cfg.Logger, ClientName: cfg.ClientName, ClientVersion: cfg.ClientVersion, Progress: cfg.Progress,
		Authorize: cfg.Authorize, TokenDir: cfg.TokenDir})
	if err != nil {
		return nil, fmt.Errorf("toolshelf: %w", err)
	}
	// A search says which servers failed to connect.
	searcher.SetNotes(m.SearchNotes)
	s := &Shelf{reg: reg, mcp: m, searcher: searcher, mcpFile: mcpFile, codemodeMode: cmMode, servers: mcfg.Servers}
	if cfg.Codemode.Enable || cmMode == CodemodeOnly || hasCodemode(reg) || len(m.CodemodeNamespaces()) > 0 {
		if err := s.registerCodemode(cfg.Codemode); err != nil {
			return nil, err
		}
	}
	if cfg.Metrics != "" {
		s.metrics = &metricsLog{path: cfg.Metrics}
	}
	if cfg.Lexicon != "" {
		s.openLearning(cfg.Lexicon)
	}
	ctx, s.cancel = context.WithCancel(ctx)
	m.Start(ctx)
	return s, nil
}

// Registry returns the shelf's tools: registered, active (declared to the
// model) and pending.
func (s *Shelf) Registry() *tool.Registry { return s.reg }

// MCP returns the shelf's MCP servers: their state, their waits and the
// mcp_servers section.
func (s *Shelf) MCP() *mcpclient.Manager { return s.mcp }

// MCPFile returns the absolute path of the shelf's servers file
// (Config.MCPFile), "" when it has none.
func (s *Shelf) MCPFile() string { return s.mcpFile }

// Searcher returns the shelf's tool_search, bound to its registry.
func (s *Shelf) Searcher() *toolsearch.Searcher { return s.searcher }

// NeedsSearch reports whether some tool waits on the shelf for
// tool_search — a registered tool of deferred exposure, or an MCP server
// whose tools are deferred by configuration (and not always loaded) — so
// that a conversation declares tool_search. Codemode tools do not count:
// scripts reach them, and find them with searchTools, so a shelf whose
// tools are all codemode tools declares the codemode tool alone, as the
// reference does.
func (s *Shelf) NeedsSearch() bool {
	for _, sc := range s.servers {
		if !sc.Disabled && !sc.AlwaysLoad && slices.Contains(exposures(sc), tool.Deferred) {
			return true
		}
	}
	for _, t := range s.reg.Tools() {
		if t.Exposure == tool.Deferred && !t.Reaches.All {
			return true
		}
	}
	return false
}

// exposures returns every exposure a server's tools may have by its
// configuration: the server's (deferred when unset), unless a "*" entry
// overrides it for every tool, and those of its ToolExposure entries.
func exposures(sc mcpclient.ServerConfig) []tool.Exposure {
	var out []tool.Exposure
	if !slices.ContainsFunc(sc.ToolExposure, func(te mcpclient.ToolExposure) bool { return te.Pattern == "*" }) {
		out = append(out, cmp.Or(sc.Exposure, tool.Deferred))
	}
	for _, te := range sc.ToolExposure {
		out = append(out, te.Exposure)
	}
	return out
}

// hasCodemode reports whether a registered tool has codemode exposure.
func hasCodemode(reg *tool.Registry) bool {
	for _, t := range reg.Tools() {
		if t.Exposure == tool.Codemode {
			return true
		}
	}
	return false
}

// registerCodemode registers the codemode tool, inactive: its runner
// calls the shelf's tools, validated as the agent validates them, each
// after its server connected; searchTools ranks with tool_search's index;
// the description lists the codemode tools registered now and the
// codemode servers of the configuration (with CodemodeOnly, the direct
// tools and servers too), and never changes afterwards.
func (s *Shelf) registerCodemode(cfg CodemodeConfig) error {
	only := s.codemodeMode == CodemodeOnly
	namespaces := s.mcp.CodemodeNamespaces()
	if only {
		// The direct servers' tools are the scripts' too: their
		// namespaces are listed before they connect.
		for _, sc := range s.servers {
			ns := tool.NamespaceName(sc.Name)
			if !sc.Disabled && slices.Contains(exposures(sc), tool.Direct) &&
				!slices.ContainsFunc(namespaces, func(n tool.Namespace) bool { return n.Name == ns }) {
				namespaces = append(namespaces, tool.Namespace{Name: ns, Description: sc.Description})
			}
		}
	}
	r, err := codemode.New(codemode.Config{Registry: s.reg, Searcher: s.searcher,
		Wait: s.mcp.WaitFor, Limits: cfg.Limits, Namespaces: namespaces, Budget: cfg.Budget, ListDirect: only})
	if err != nil {
		return fmt.Errorf("toolshelf: %w", err)
	}
	t := r.Tool()
	t.StartInactive = true
	if err := s.reg.Register(t); err != nil {
		return fmt.Errorf("toolshelf: %w", err)
	}
	s.codemode = r
	return nil
}

// Codemode returns the runner of the shelf's codemode tool, nil when the
// tool is not registered (no tool or server has codemode exposure and
// CodemodeConfig.Enable is off).
func (s *Shelf) Codemode() *codemode.Runner { return s.codemode }

// NeedsCodemode reports whether some tool or server has codemode
// exposure, or the mode is [CodemodeOnly], so that a conversation
// declares the codemode tool.
func (s *Shelf) NeedsCodemode() bool {
	return s.codemode != nil && (s.codemodeMode == CodemodeOnly || hasCodemode(s.reg) || len(s.mcp.CodemodeNamespaces()) > 0)
}

// CodemodeMode returns the shelf's CodemodeConfig.Mode: [CodemodeOn] or
// [CodemodeOnly].
func (s *Shelf) CodemodeMode() string { return s.codemodeMode }

// scriptCallPrefix starts the description a declared tool gets in
// [CodemodeOn], before the sample of how a script calls it.
const scriptCallPrefix = "Call from codemode: await "

// declaration is how a conversation declares the active tool t. While
// the codemode tool is declared, a tool a script can call (direct, or a
// loaded codemode or deferred tool) gets the one-line sample of how a
// script calls it as its description (CodemodeOn), or is not declared at
// all when it is direct (CodemodeOnly). The answer depends on t's name,
// exposure and definition, the mode and whether the codemode tool is
// active, so the declarations stay byte-stable from request to request.
func (s *Shelf) declaration(t tool.Tool) (llm.Tool, bool) {
	d := t.Declaration()
	if s.codemode == nil || !s.reg.IsActive(codemode.Name) {
		return d, true
	}
	switch t.Exposure {
	case tool.Direct, tool.Codemode, tool.Deferred:
	default: // model-only (tool_search, codemode) or hidden
		return d, true
	}
	if s.codemodeMode == CodemodeOnly {
		return d, t.Exposure != tool.Direct
	}
	d.Description = scriptCallPrefix + codemode.CallSample(t.Name)
	return d, true
}

// Close disconnects the MCP servers and closes the metrics log.
func (s *Shelf) Close() error {
	s.cancel()
	err := s.mcp.Close()
	if s.metrics != nil {
		err = errors.Join(err, s.metrics.close())
	}
	return err
}

// begin makes a the shelf's open conversation and prepares the registry
// for it: the first keeps the active set as it is (and records it), later
// ones start from that record. It fails with ErrBusy while another is
// open.
func (s *Shelf) begin(a *Agent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open != nil {
		return ErrBusy
	}
	s.open = a
	if !s.started {
		s.started = true
		s.baseline = s.reg.ActiveNames()
		return nil
	}
	s.reg.SetActive(s.baseline...)
	return nil
}

// end frees the shelf of conversation a, if it is the open one.
func (s *Shelf) end(a *Agent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == a {
		s.open = nil
	}
}

// Record appends rec to the shelf's metrics log (Config.Metrics), so that
// toolshelf stats counts it; without a log it does nothing. The gateway
// records its searches and calls this way.
func (s *Shelf) Record(rec tokens.Record) error {
	if s.metrics == nil {
		return nil
	}
	return s.metrics.append(rec)
}
