package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolshelf/toolshelf/tool"
)

// State is where a server's connection stands.
type State string

// The states of a server. A server starts Connecting (or Disabled); a
// connection attempt ends Connected or Failed; a connected session that ends
// leaves the server Disconnected until the next call of one of its tools
// reconnects it.
const (
	Connecting   State = "connecting"
	Connected    State = "connected"
	Failed       State = "failed"
	Disconnected State = "disconnected"
	Disabled     State = "disabled"
	// NeedsLogin is a server that asks for sign-in (OAuth) that no person
	// could give: toolshelf mcp login, or [Manager.Login], signs in. Its
	// error wraps [ErrNeedsLogin] and names the command. A call of one of
	// its tools connects again once a token is stored.
	NeedsLogin State = "needs login"
)

// Status describes one configured server.
type Status struct {
	// Name is the server's name in the configuration.
	Name string
	// State is where its connection stands.
	State State
	// Tools is the number of its tools in the registry that are not
	// hidden.
	Tools int
	// Err is why the server failed or disconnected; nil otherwise. The
	// values its configuration took from the environment are redacted
	// from the message.
	Err error
	// Exposure is the server's configured exposure.
	Exposure tool.Exposure
}

// StillConnectingNotice is what [Manager.WaitDirect] returns when servers
// with direct tools are still connecting after the wait.
const StillConnectingNotice = "MCP servers are still connecting; their tools become available once connected."

// Options configures a [Manager].
type Options struct {
	// Logger receives connection events, tool problems and the standard
	// error of stdio servers. Nil discards them.
	Logger *slog.Logger
	// OutputDir is where the full text of truncated outputs is saved, in
	// files only the user can read. Empty means
	// $XDG_STATE_HOME/toolshelf/outputs (~/.local/state/toolshelf/outputs).
	// The folder is created with mode 0700; a folder that is a symbolic
	// link, another user's or open to group or others is refused (the
	// result says why, and the output is not saved). The first save of a
	// Manager removes saved outputs older than [OutputMaxAge].
	OutputDir string
	// ClientName and ClientVersion identify the client to servers
	// (default "toolshelf" and "dev").
	ClientName, ClientVersion string
	// Progress, when set, receives the progress notifications of tool
	// calls, on the goroutine that reads the server's messages: it must
	// return quickly.
	Progress func(Progress)
	// Authorize, when set, is asked to show a person the URL where they
	// sign in to an HTTP server that asks for authorization (OAuth): it
	// should print the URL, and may open a browser, and return. The
	// Manager then waits for the redirect to its loopback listener, at
	// most [LoginTimeout], and stores the tokens. Without it, such a
	// server becomes [NeedsLogin] (unless a stored token serves), and the
	// other servers are not held up.
	Authorize func(ctx context.Context, server, url string) error
	// TokenDir is the private folder where OAuth tokens are stored, a
	// file per server and URL, mode 0600 (checked like OutputDir's).
	// Empty means $XDG_STATE_HOME/toolshelf/oauth.
	TokenDir string
}

// Manager connects to the configured MCP servers and keeps their tools in a
// registry: it registers each server's tools when it connects, follows
// changes of its tool list, and runs calls through its session.
//
// A Manager is safe for concurrent use.
type Manager struct {
	reg     *tool.Registry
	namer   *tool.Namer
	opts    Options
	log     *slog.Logger
	servers []*server // sorted by name
	byName  map[string]*server

	// Seams for tests, set before Start.
	transport     func(s *server) (transport, error)
	retryDelays   []time.Duration
	terminate     time.Duration
	onListChanged func(server string)

	mu        sync.Mutex // guards the fields below and the mutable fields of every server
	started   bool
	closed    bool
	ctx       context.Context
	cancel    context.CancelFunc
	listeners map[int]func()
	// listListeners are the OnListChanged functions, numbered by nextID.
	listListeners map[int]func(server string)
	nextID        int
	wg            sync.WaitGroup // background goroutines

	cleanOnce sync.Once // old saved outputs are removed at the first save
}

// server is the Manager's view of one configured server.
type server struct {
	cfg ServerConfig
	// log is the server's logger and redact its redactor (nil when the
	// configuration took nothing from the environment): log redacts what
	// it logs, errors are redacted where they are kept.
	log    *slog.Logger
	redact *redactor
	// listMu serialises listing and registering the server's tools.
	listMu sync.Mutex
	// stepUp are the scopes the server asked for in insufficient_scope
	// challenges, kept for the next sign-in (guarded by stepMu).
	stepMu sync.Mutex
	stepUp []string

	// Guarded by Manager.mu.
	state        State
	err          error
	conn         *conn
	ready        chan struct{} // closed when the server leaves Connecting
	instructions string
	registered   map[string]registration // last registration per server tool name
}

// registration is what a server remembers of one of its tools' last
// registration; the registry holds the tool itself (under name).
type registration struct {
	name     string // the registry's name of the tool
	exposure tool.Exposure
	handled  bool // registered with a handler (not a catalog entry)
}

// registrationOf returns what a server remembers of registered t.
func registrationOf(t tool.Tool) registration {
	return registration{name: t.Name, exposure: t.Exposure, handled: t.Handler != nil}
}

// hidden returns the registry's tool of a server's registration r of its
// tool named tl, as hidden, and whether there is one to hide: the registry
// still holds it under r.name, from that server, not hidden.
func (m *Manager) hidden(s *server, tl string, r registration) (tool.Tool, bool) {
	t, ok := m.reg.Get(r.name)
	if !ok || t.Origin != (tool.Origin{Server: s.cfg.Name, Tool: tl}) || t.Exposure == tool.Hidden {
		return tool.Tool{}, false
	}
	t.Exposure = tool.Hidden
	return t, true
}

// NewManager returns a Manager for the servers of cfg that registers their
// tools in reg, named by namer (a new Namer when nil). Call Start to
// connect. It checks every server configuration ([ServerConfig.Check]) and
// fails, naming each problem, when one is invalid or two share a name; reg
// is required.
func NewManager(cfg *Config, reg *tool.Registry, namer *tool.Namer, opts Options) (*Manager, error) {
	if reg == nil {
		return nil, errors.New("mcpclient.NewManager: no registry (pass tool.NewRegistry())")
	}
	var configs []ServerConfig
	if cfg != nil {
		var errs []error
		seen := map[string]bool{}
		for _, sc := range cfg.Servers {
			checked, err := sc.Check()
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if seen[sc.Name] {
				errs = append(errs, fmt.Errorf("MCP server %q is configured twice; give each server its own name", sc.Name))
			}
			seen[sc.Name] = true
			configs = append(configs, checked)
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
	}
	if namer == nil {
		namer = tool.NewNamer()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ClientName == "" {
		opts.ClientName = "toolshelf"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	m := &Manager{
		reg:         reg,
		namer:       namer,
		opts:        opts,
		log:         opts.Logger,
		byName:      make(map[string]*server),
		retryDelays: []time.Duration{250 * time.Millisecond, time.Second},
		terminate:   2 * time.Second,
		listeners:   make(map[int]func()),
	}
	m.transport = m.newTransport
	for _, sc := range configs {
		if sc.Timeout <= 0 {
			sc.Timeout = DefaultTimeout
		}
		if sc.Exposure == "" {
			sc.Exposure = tool.Deferred
		}
		red := newRedactor(sc.Expanded)
		if sc.mayAuthorize() {
			// Tokens are added as the server's sign-in gets them.
			if red == nil {
				red = &redactor{}
			}
			if sc.OAuth != nil {
				red.addSecret(sc.OAuth.ClientSecret)
			}
		}
		log := m.log
		if red != nil {
			log = slog.New(&redactHandler{next: m.log.Handler(), r: red})
		}
		s := &server{cfg: sc, log: log.With("server", sc.Name), redact: red, state: Connecting,
			ready: make(chan struct{}), registered: make(map[string]registration)}
		if sc.Disabled {
			s.state = Disabled
			close(s.ready)
		}
		m.servers = append(m.servers, s)
		m.byName[sc.Name] = s
	}
	slices.SortFunc(m.servers, func(a, b *server) int { return strings.Compare(a.cfg.Name, b.cfg.Name) })
	return m, nil
}

// Start connects every enabled server in the background and returns at
// once. ctx bounds the background work (connection attempts, reconnections
// and tool list refreshes); Close ends the sessions. The tools a disabled
// server had in the registry (from a catalog, say) are hidden.
//
// Start does nothing when called again or after Close.
func (m *Manager) Start(ctx context.Context) {
	m.mu.Lock()
	if m.started || m.closed {
		m.mu.Unlock()
		return
	}
	m.started = true
	m.ctx, m.cancel = context.WithCancel(ctx)
	// Tools already in the registry under a configured server's name are
	// that server's as far as refreshes go: the live list replaces them.
	for _, t := range m.reg.Tools() {
		if s := m.byName[t.Origin.Server]; s != nil && !t.Origin.IsZero() {
			s.registered[t.Origin.Tool] = registrationOf(t)
		}
	}
	var hide []tool.Tool
	for _, s := range m.servers {
		if s.state != Disabled {
			continue
		}
		for name, r := range s.registered {
			if t, ok := m.hidden(s, name, r); ok {
				r.exposure = tool.Hidden
				s.registered[name] = r
				hide = append(hide, t)
			}
		}
	}
	m.mu.Unlock()
	if len(hide) > 0 {
		slices.SortFunc(hide, func(a, b tool.Tool) int { return strings.Compare(a.Name, b.Name) })
		if err := m.reg.Register(hide...); err != nil {
			m.log.Warn("hiding the tools of disabled servers", "error", err)
		}
	}
	for _, s := range m.servers {
		if s.state == Connecting {
			m.spawn(func() { m.connect(s) })
		}
	}
}

// Close ends every session (stdio servers are asked to exit, then
// terminated) and waits for the background work to stop. Calls made after
// Close return error results.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	var conns []*conn
	for _, s := range m.servers {
		if !m.started && s.state == Connecting {
			s.state, s.err = Failed, ErrStopped
			close(s.ready)
		}
		if s.conn != nil {
			conns = append(conns, s.conn)
			s.conn = nil
			s.state, s.err = Disconnected, errClosed
		}
	}
	cancel := m.cancel
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() { errs[i] = c.close() })
	}
	wg.Wait()
	m.wg.Wait()
	m.changed()
	return errors.Join(errs...)
}

var errClosed = errors.New("the MCP client was closed")

// ErrStopped is the error of a server whose connection attempt toolshelf
// itself stopped — the Manager was closed, or the context given to Start
// ended, before the server had answered — rather than one that failed.
var ErrStopped = errors.New("connecting was stopped before the server answered: toolshelf was shutting down")

// spawn runs f in a goroutine that Close waits for. It reports false, and
// does not run f, once the Manager is closed. It must not be called with
// m.mu held.
func (m *Manager) spawn(f func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		f()
	}()
	return true
}

// Servers returns the status of every configured server, sorted by name.
// Tool counts are read from the registry, so they agree with what a
// reader of the registry sees at the same moment, even while a refresh is
// registering a server's new list.
func (m *Manager) Servers() []Status {
	counts := m.toolCounts()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Status, len(m.servers))
	for i, s := range m.servers {
		out[i] = Status{Name: s.cfg.Name, State: s.state, Tools: counts[s.cfg.Name], Err: s.err, Exposure: s.cfg.Exposure}
	}
	return out
}

// toolCounts returns, per server name, the number of the registry's tools
// from that server that are not hidden.
func (m *Manager) toolCounts() map[string]int {
	counts := m.reg.ServerCounts()
	for name := range counts {
		if m.byName[name] == nil {
			delete(counts, name)
		}
	}
	return counts
}

// OnChange registers fn to be called after a server's state or tool list
// changes, so the caller can refresh what depends on it (the mcp_servers
// section). fn runs outside the Manager's locks, possibly on several
// goroutines at once. The returned function cancels the registration.
func (m *Manager) OnChange(fn func()) (cancel func()) {
	m.mu.Lock()
	id := m.nextID
	m.nextID++
	m.listeners[id] = fn
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		delete(m.listeners, id)
		m.mu.Unlock()
	}
}

// changed calls the OnChange listeners. It must not be called with m.mu
// held.
func (m *Manager) changed() {
	m.mu.Lock()
	ids := make([]int, 0, len(m.listeners))
	for id := range m.listeners {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	fns := make([]func(), len(ids))
	for i, id := range ids {
		fns[i] = m.listeners[id]
	}
	m.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// WaitFor waits, before a call of the tool named toolName, for the servers
// the call depends on to finish connecting: the tool's own server for an
// MCP tool (found by the tool's origin, the Namer, or its mcp__<server>__
// prefix when it has not registered yet), and the servers of what the
// tool's [tool.Reach] names — every server for a tool that reaches the
// whole shelf, such as tool_search. It returns ctx.Err() when ctx ends
// first.
func (m *Manager) WaitFor(ctx context.Context, toolName string) error {
	return m.await(ctx, m.reachedBy(toolName, nil), nil)
}

// WaitForCall is WaitFor for one call, whose arguments may say what it
// reaches ([tool.Reach.For]): a codemode script waits for the servers its
// code names only. It is the agent's Await.
func (m *Manager) WaitForCall(ctx context.Context, toolName string, args json.RawMessage) error {
	return m.await(ctx, m.reachedBy(toolName, args), nil)
}

// WaitAll waits until no server is still connecting, or ctx ends (its
// error is returned).
func (m *Manager) WaitAll(ctx context.Context) error {
	return m.await(ctx, m.servers, nil)
}

// reachedBy returns the servers a call of the named tool, with args (nil
// when not known), depends on.
func (m *Manager) reachedBy(toolName string, args json.RawMessage) []*server {
	servers := m.serversOf(toolName)
	t, ok := m.reg.Get(toolName)
	if !ok {
		return servers
	}
	reach := t.Reaches.For(args)
	if reach.All {
		return m.servers
	}
	for _, n := range reach.Names {
		for _, s := range m.serversOf(n) {
			if !slices.Contains(servers, s) {
				servers = append(servers, s)
			}
		}
	}
	return servers
}

// await waits until none of servers is connecting, ctx ends (its error is
// returned) or stop is closed (nil is returned).
func (m *Manager) await(ctx context.Context, servers []*server, stop <-chan time.Time) error {
	for {
		var ready chan struct{}
		m.mu.Lock()
		for _, s := range servers {
			if s.state == Connecting {
				ready = s.ready
				break
			}
		}
		m.mu.Unlock()
		if ready == nil {
			return nil
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return ctx.Err()
		case <-stop:
			return nil
		}
	}
}

// serversOf returns the configured servers a tool or namespace name
// belongs to.
func (m *Manager) serversOf(name string) []*server {
	if t, ok := m.reg.Get(name); ok && !t.Origin.IsZero() {
		if s := m.byName[t.Origin.Server]; s != nil {
			return []*server{s}
		}
		return nil
	}
	if o, ok := m.namer.Lookup(name); ok {
		if s := m.byName[o.Server]; s != nil {
			return []*server{s}
		}
		return nil
	}
	var out []*server
	for _, s := range m.servers {
		ns := tool.NamespaceName(s.cfg.Name)
		if name == ns || strings.HasPrefix(name, ns+"__") {
			out = append(out, s)
		}
	}
	return out
}

// WaitDirect is the first prompt's wait: it waits at most max (and no
// longer than ctx) for the enabled servers that have direct or always-loaded
// tools by configuration, so their tools are declared from the first
// request, and for the servers whose tools may match one of named: tool
// names or patterns (* matches any run of characters, case is ignored)
// that the caller activates before the first request, such as the command
// line's --tools +mcp__memory__read_graph. Other servers, whose tools are
// loaded on demand, are not waited for. If some of the awaited servers
// are still connecting afterwards, it returns [StillConnectingNotice];
// otherwise "".
func (m *Manager) WaitDirect(ctx context.Context, max time.Duration, named ...string) (notice string) {
	var servers []*server
	for _, s := range m.servers {
		if !s.cfg.Disabled && (s.cfg.AlwaysLoad || s.cfg.hasExposure(tool.Direct) ||
			slices.ContainsFunc(named, func(p string) bool { return s.mayProvide(p) })) {
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 {
		return ""
	}
	timer := time.NewTimer(max)
	defer timer.Stop()
	_ = m.await(ctx, servers, timer.C)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range servers {
		if s.state == Connecting {
			return StillConnectingNotice
		}
	}
	return ""
}

// mayProvide reports whether a tool of the server may match pattern, a
// tool name or a * pattern, ignoring case, before the server has listed
// its tools: the pattern's text before its first * and the server's
// mcp__<server>__ prefix agree as far as both go.
func (s *server) mayProvide(pattern string) bool {
	lit, _, wild := strings.Cut(strings.ToLower(pattern), "*")
	prefix := strings.ToLower(tool.NamespaceName(s.cfg.Name) + "__")
	// A name without * must start with the server's prefix; one with *
	// may also end its literal part inside the prefix (mcp__my*).
	return strings.HasPrefix(lit, prefix) || (wild && strings.HasPrefix(prefix, lit))
}

// NeedsSearch reports whether some enabled server has tools that wait on the
// shelf by configuration (deferred or codemode, not always loaded): the
// caller should then activate tool_search.
func (m *Manager) NeedsSearch() bool {
	for _, s := range m.servers {
		if s.onShelf() {
			return true
		}
	}
	return false
}

// CodemodeNamespaces returns the namespaces of the enabled servers that
// have tools of codemode exposure by configuration, in the manager's
// order of servers (by name), with their configured descriptions: what the codemode tool's
// description lists before (and whether or not) the servers connect.
func (m *Manager) CodemodeNamespaces() []tool.Namespace {
	return m.namespaces(tool.Codemode)
}

// Namespaces returns the namespaces of the enabled servers that have tools
// that are not hidden by configuration, in the manager's order of servers
// (by name), with their configured descriptions: what the gateway's
// codemode surface lists, the same before and after the servers connect.
func (m *Manager) Namespaces() []tool.Namespace {
	return m.namespaces(tool.Direct, tool.ModelOnly, tool.Deferred, tool.Codemode)
}

// namespaces returns the namespaces of the enabled servers that have tools
// of one of the exposures by configuration.
func (m *Manager) namespaces(exposures ...tool.Exposure) []tool.Namespace {
	var out []tool.Namespace
	for _, s := range m.servers {
		if !s.cfg.Disabled && s.cfg.hasExposure(exposures...) {
			out = append(out, tool.Namespace{Name: tool.NamespaceName(s.cfg.Name), Description: s.cfg.Description})
		}
	}
	return out
}

// onShelf reports whether the server is enabled and some of its tools are
// loaded on demand.
func (s *server) onShelf() bool {
	return !s.cfg.Disabled && !s.cfg.AlwaysLoad && s.cfg.hasExposure(tool.Deferred, tool.Codemode)
}

// lineWriter logs what a stdio server writes to its standard error, a line
// at a time.
type lineWriter struct {
	mu  sync.Mutex
	log *slog.Logger
	buf []byte
}

// maxLogLine bounds a logged line of standard error.
const maxLogLine = 4096

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := slices.Index(w.buf, '\n')
		if i < 0 {
			if len(w.buf) > maxLogLine {
				w.emit(w.buf)
				w.buf = w.buf[:0]
			}
			return len(p), nil
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
}

func (w *lineWriter) emit(line []byte) {
	s := strings.TrimRight(string(line), "\r")
	if len(s) > maxLogLine {
		s = s[:maxLogLine]
	}
	if s != "" {
		w.log.Info("stderr", "line", s)
	}
}

// commandEnv returns the environment of a stdio server: this process's,
// with the configured variables added (replacing those of the same name).
func commandEnv(env map[string]string) []string {
	out := os.Environ()
	if len(env) == 0 {
		return out
	}
	out = slices.DeleteFunc(out, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, ok := env[k]
		return ok
	})
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// newCommand returns the command that starts a stdio server.
func newCommand(s *server) *exec.Cmd {
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Env = commandEnv(s.cfg.Env)
	cmd.Dir = s.cfg.Cwd
	cmd.Stderr = &lineWriter{log: s.log}
	// A grandchild that keeps standard error open must not hold up Wait.
	cmd.WaitDelay = 2 * time.Second
	ownProcessGroup(cmd)
	return cmd
}

// describe names a server and where it is configured, for messages.
func (s *server) describe() string {
	if s.cfg.File == "" {
		return fmt.Sprintf("MCP server %q", s.cfg.Name)
	}
	return fmt.Sprintf("MCP server %q (%s)", s.cfg.Name, s.cfg.File)
}

var _ io.Writer = (*lineWriter)(nil)
