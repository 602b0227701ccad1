package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/catalog"
	"github.com/toolshelf/toolshelf/tool"
)

// noAnswer is a setup step that the server did not answer within its
// timeout, which bounds connecting (the initialize request) and listing
// tools as it bounds calls.
type noAnswer struct {
	step  string // "initialize" or "tools/list"
	after time.Duration
}

func (e *noAnswer) Error() string { return fmt.Sprintf("no answer to %s within %s", e.step, e.after) }

// transport is one attempt's way to reach a server.
type transport struct {
	mcp.Transport
	// transient, when set, reports whether a failed connection attempt
	// failed for a reason worth retrying.
	transient func() bool
	// lists, when set, reads the connection's tools/list answers before
	// the SDK (listbytes.go); a custom Transport has none.
	lists *listBytes
}

// conn is one session with a server.
type conn struct {
	session *mcp.ClientSession
	// ctx lives as long as the session is the server's current one.
	ctx    context.Context
	cancel context.CancelFunc
	// kick holds a token when a tools/list_changed notification arrived
	// that no refresh has handled yet.
	kick chan struct{}
	// progress maps the progress token of each call in flight to the
	// function that takes its progress notifications: it restarts the
	// call's timeout and reports the progress.
	progress     sync.Map
	instructions string
	// lists is the transport's (nil for a custom Transport).
	lists *listBytes
	// n numbers the session among every Manager's ([Offers.Session]).
	n         uint64
	closeOnce sync.Once
	closeErr  error
}

// close ends the session; for a stdio server it waits for the process to
// exit (asking, then terminating, then killing it).
func (c *conn) close() error {
	c.closeOnce.Do(func() {
		if c.cancel != nil {
			c.cancel()
		}
		err := c.session.Close()
		var exit *exec.ExitError
		if errors.As(err, &exit) || errors.Is(err, mcp.ErrConnectionClosed) {
			err = nil
		}
		c.closeErr = err
	})
	return c.closeErr
}

// newTransport returns the transport of the server's configuration.
func (m *Manager) newTransport(s *server) (transport, error) {
	switch s.cfg.Type {
	case TypeMemory:
		// A new session of the in-process server for every connection.
		t, _, err := memoryTransport(s.cfg.Server)
		if err != nil {
			return transport{}, fmt.Errorf("serving in memory: %w", err)
		}
		return t, nil
	case TypeTransport:
		return transport{Transport: s.cfg.Transport}, nil
	case "stdio":
		l := newListBytes()
		return transport{Transport: &commandTransport{cmd: newCommand(s), terminate: m.terminate, lists: l}, lists: l}, nil
	case "http":
		var show func(ctx context.Context, url string) error
		if m.opts.Authorize != nil {
			show = func(ctx context.Context, url string) error { return m.opts.Authorize(ctx, s.cfg.Name, url) }
		}
		h, err := m.oauthHandler(s, show)
		if err != nil {
			return transport{}, err
		}
		return m.httpTransport(s, h), nil
	}
	return transport{}, fmt.Errorf("unknown transport type %q", s.cfg.Type)
}

// memoryTransport connects a new session of an in-process server to a
// pipe, as mcp.NewInMemoryTransports makes one, and returns the client's
// end, read through a listBytes.
func memoryTransport(srv *mcp.Server) (transport, *mcp.ServerSession, error) {
	server, client := net.Pipe()
	ss, err := srv.Connect(context.Background(), &mcp.IOTransport{Reader: server, Writer: server}, nil)
	if err != nil {
		return transport{}, nil, err
	}
	l := newListBytes()
	return transport{Transport: &mcp.IOTransport{Reader: newListReader(client, l), Writer: listWriter{client, l}}, lists: l}, ss, nil
}

// httpTransport returns the streamable HTTP transport of a server, signing
// in through h (none when nil).
func (m *Manager) httpTransport(s *server, h auth.OAuthHandler) transport {
	l := newListBytes()
	rt := &httpRecorder{base: http.DefaultTransport, headers: s.cfg.Headers, lists: l}
	t := &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: &http.Client{Transport: rt}}
	if h != nil {
		t.OAuthHandler = h
	}
	return transport{Transport: t, transient: rt.transient, lists: l}
}

// httpRecorder adds the configured headers to every request and remembers
// how the last one went, so a failed connection can be classified. It
// reads the requests and answers through lists (listhttp.go).
type httpRecorder struct {
	base    http.RoundTripper
	headers map[string]string
	lists   *listBytes

	mu     sync.Mutex
	status int   // of the last response
	netErr error // of the last request that got no response
}

func (h *httpRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range h.headers {
			req.Header.Set(k, v)
		}
	}
	if h.lists != nil {
		h.lists.noteRequest(req)
	}
	resp, err := h.base.RoundTrip(req)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		if req.Context().Err() == nil {
			h.status, h.netErr = 0, err
		}
		return nil, err
	}
	h.status, h.netErr = resp.StatusCode, nil
	if h.lists != nil {
		resp = h.lists.readAnswer(resp)
	}
	return resp, nil
}

// transient reports whether the last request failed in a way worth
// retrying: a network error, 408, 429 or a 5xx other than 501.
func (h *httpRecorder) transient() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.netErr != nil || transientStatus(h.status)
}

// transientStatus reports whether an HTTP status is worth a retry.
func transientStatus(code int) bool {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return true
	case code >= 500 && code <= 599:
		return code != http.StatusNotImplemented
	}
	return false
}

// connect makes a connection attempt for a server in the Connecting state
// and leaves it Connected or Failed.
func (m *Manager) connect(s *server) {
	c, err := m.dial(m.ctx, s)
	if err == nil {
		if err = m.refresh(s, c); err != nil {
			err = fmt.Errorf("listing the tools of %s: %w", s.describe(), err)
		}
	}
	m.mu.Lock()
	stopped := m.closed || m.ctx.Err() != nil
	if err == nil && m.closed {
		err = errClosed
	}
	m.mu.Unlock()
	switch {
	case err != nil && stopped:
		// Closed, or the run ended, before the server answered: that is
		// toolshelf stopping, not the server failing.
		s.log.Debug("connecting stopped", "error", err)
		err = fmt.Errorf("%s: %w", s.describe(), ErrStopped)
	case errors.Is(err, ErrNeedsLogin):
		err = needsLogin(err)
		s.log.Warn("needs sign-in", "error", err)
	case err != nil:
		// Logged before the state is published, so whoever waits for the
		// server finds the failure in the log too.
		s.log.Warn("connection failed", "error", err)
	}
	m.mu.Lock()
	switch {
	case err != nil && errors.Is(err, ErrNeedsLogin) && !errors.Is(err, ErrStopped):
		s.state, s.err = NeedsLogin, s.redact.Err(err)
	case err != nil:
		s.state, s.err = Failed, s.redact.Err(err)
	default:
		s.state, s.err, s.conn = Connected, nil, c
	}
	close(s.ready)
	m.mu.Unlock()
	if err != nil {
		if c != nil {
			_ = c.close()
		}
		m.changed()
		return
	}
	s.log.Info("connected", "tools", m.toolCount(s))
	if !m.spawn(func() { m.watch(s, c) }) || !m.spawn(func() { m.refresher(s, c) }) {
		m.lost(s, c, errClosed)
	}
	m.changed()
	m.listsChanged(s.cfg.Name)
}

// dial connects to a server, retrying an HTTP server after 250 ms and 1 s
// when the failure looks transient.
func (m *Manager) dial(ctx context.Context, s *server) (*conn, error) {
	for attempt := 0; ; attempt++ {
		t, err := m.transport(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.describe(), err)
		}
		c, err := m.open(ctx, s, t, s.connectTimeout(m.opts.Authorize != nil))
		if err == nil {
			return c, nil
		}
		if errors.Is(err, ErrNeedsLogin) {
			return nil, err
		}
		if t.transient == nil || attempt >= len(m.retryDelays) || !t.transient() || ctx.Err() != nil {
			return nil, connectError(s, err)
		}
		s.log.Info("connection failed; retrying", "error", err, "after", m.retryDelays[attempt])
		timer := time.NewTimer(m.retryDelays[attempt])
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, connectError(s, err)
		}
	}
}

// connectError explains a failed connection attempt.
func connectError(s *server, err error) error {
	var fix string
	switch s.cfg.Type {
	case "stdio":
		fix = fmt.Sprintf("check that %q starts an MCP server on standard input and output", strings.Join(append([]string{s.cfg.Command}, s.cfg.Args...), " "))
		var pe *fs.PathError
		switch {
		case errors.As(err, &pe) && pe.Op == "chdir":
			fix = cwdFix(pe.Path)
		case s.cfg.Cwd != "" && !isDir(s.cfg.Cwd):
			// Started in a process group of its own, a server whose
			// folder is missing fails as fork/exec, not as chdir.
			fix = cwdFix(s.cfg.Cwd)
		case errors.Is(err, exec.ErrNotFound):
			fix = fmt.Sprintf("install %q or write its full path in \"command\"", s.cfg.Command)
		case errors.Is(err, fs.ErrNotExist) && s.cfg.File != "":
			fix = fmt.Sprintf("%s does not exist (a relative \"command\" is taken from the servers file's folder, "+
				"or from the project folder above .toolshelf); write the path from there, an absolute path, or a program name found in PATH", s.cfg.Command)
		case errors.Is(err, fs.ErrNotExist):
			fix = fmt.Sprintf("%s does not exist; write the path of the server's program", s.cfg.Command)
		}
	case "http":
		fix = fmt.Sprintf("check that %s is the server's streamable HTTP endpoint and reachable", s.cfg.URL)
	}
	if fix == "" {
		return fmt.Errorf("cannot connect to %s: %w", s.describe(), err)
	}
	return fmt.Errorf("cannot connect to %s: %w; %s", s.describe(), err, fix)
}

// cwdFix says what to do about a working folder that cannot be entered.
func cwdFix(dir string) string {
	return fmt.Sprintf("its working folder %s cannot be entered; fix \"cwd\" (a relative one is taken from the servers file's folder)", dir)
}

// isDir reports whether path is a folder.
func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// connectTimeout bounds a connection attempt: the server's timeout, or
// LoginTimeout past it when a person may be asked to sign in during the
// attempt.
func (s *server) connectTimeout(interactive bool) time.Duration {
	if interactive && s.cfg.mayAuthorize() && s.cfg.OAuth.grant() == GrantAuthorizationCode {
		return s.cfg.Timeout + LoginTimeout
	}
	return s.cfg.Timeout
}

// needsLogin returns the sign-in error inside err: the SDK wraps it in
// the failed request's description, which says nothing more to a person.
func needsLogin(err error) error {
	if le, ok := errors.AsType[*loginError](err); ok {
		return le
	}
	return err
}

// open makes one connection attempt, within timeout (none when 0: ctx
// bounds it).
func (m *Manager) open(ctx context.Context, s *server, t transport, timeout time.Duration) (*conn, error) {
	c := &conn{kick: make(chan struct{}, 1), n: sessions.Add(1), lists: t.lists}
	client := mcp.NewClient(&mcp.Implementation{Name: m.opts.ClientName, Version: m.opts.ClientVersion}, &mcp.ClientOptions{
		Logger:       s.log,
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case c.kick <- struct{}{}:
			default:
			}
			if h := m.onListChanged; h != nil {
				h(s.cfg.Name)
			}
		},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { m.listsChanged(s.cfg.Name) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { m.listsChanged(s.cfg.Name) },
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if req.Params == nil {
				return
			}
			if progress, ok := c.progress.Load(fmt.Sprint(req.Params.ProgressToken)); ok {
				progress.(func(*mcp.ProgressNotificationParams))(req.Params)
			}
		},
	})
	client.AddSendingMiddleware(rawToolSchemas(t.lists))
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	session, err := client.Connect(cctx, t.Transport, nil)
	if err != nil {
		if ctx.Err() == nil && cctx.Err() != nil {
			err = fmt.Errorf("%w: %w", &noAnswer{step: "initialize", after: timeout}, err)
		}
		return nil, err
	}
	c.session = session
	c.ctx, c.cancel = context.WithCancel(ctx)
	if res := session.InitializeResult(); res != nil {
		c.instructions = res.Instructions
	}
	return c, nil
}

// watch marks the server disconnected when the session ends.
func (m *Manager) watch(s *server, c *conn) {
	err := c.session.Wait()
	if err == nil {
		err = errors.New("the server closed the connection")
	}
	m.lost(s, c, fmt.Errorf("the connection to %s ended: %w", s.describe(), err))
}

// refresher re-lists the server's tools after tools/list_changed
// notifications. Notifications that arrive during a refresh leave one token
// in c.kick, so a storm costs at most one more listing.
func (m *Manager) refresher(s *server, c *conn) {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.kick:
		}
		if err := m.refresh(s, c); err != nil {
			if c.ctx.Err() != nil {
				return
			}
			if isRPCError(err) {
				s.log.Warn("refreshing the tool list failed", "error", err)
				continue
			}
			m.lost(s, c, fmt.Errorf("refreshing the tool list of %s: %w", s.describe(), err))
			return
		}
		m.changed()
	}
}

// lost drops the session c of a server, if it is still the current one: the
// server becomes Disconnected with err, and the session is closed in the
// background.
func (m *Manager) lost(s *server, c *conn, err error) { m.lostTo(s, c, Disconnected, err) }

// lostTo is lost with the state the server is left in.
func (m *Manager) lostTo(s *server, c *conn, state State, err error) {
	m.mu.Lock()
	current := s.conn == c
	if current {
		s.conn = nil
		s.state, s.err = state, s.redact.Err(err)
	}
	m.mu.Unlock()
	c.cancel()
	if !current {
		_ = c.close()
		return
	}
	if state == NeedsLogin {
		s.log.Warn("needs sign-in", "error", err)
	} else {
		s.log.Warn("disconnected", "error", err)
	}
	if !m.spawn(func() { _ = c.close() }) {
		_ = c.close()
	}
	m.changed()
}

// isRPCError reports whether err is an error answer of the server (as
// opposed to a failure of the connection).
func isRPCError(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we)
}

// refresh lists the server's tools (every page) and registers them: listed
// tools with their configured exposure, tools that are no longer listed as
// hidden. Tools that fail validation are skipped and logged.
func (m *Manager) refresh(s *server, c *conn) error {
	s.listMu.Lock()
	defer s.listMu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, s.cfg.Timeout)
	defer cancel()
	l := &listing{}
	ctx = context.WithValue(ctx, listingKey{}, l)
	c.lists.forget()
	var listed []catalog.ListedTool
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			if c.ctx.Err() == nil && ctx.Err() != nil {
				err = fmt.Errorf("%w: %w", &noAnswer{step: "tools/list", after: s.cfg.Timeout}, err)
			}
			return err
		}
		lt, err := listedTool(l.take(t))
		if err != nil {
			s.log.Warn("skipping a tool that cannot be encoded", "tool", t.Name, "error", err)
			continue
		}
		listed = append(listed, lt)
	}
	parsed, perr := catalog.ParseListed(s.cfg.Name, s.cfg.Name, s.cfg.Description, c.instructions, listed)
	for _, p := range catalog.Problems(perr) {
		logProblem(s, p)
	}
	if parsed == nil {
		return perr
	}
	tools := parsed.AsTools(m.namer, tool.Deferred)
	listedNames := make(map[string]bool, len(tools))
	for i := range tools {
		t := &tools[i]
		t.Exposure = s.cfg.ExposureFor(t.Origin.Tool)
		t.Brief = s.cfg.Briefs[t.Origin.Tool]
		t.Handler = m.handler(s, t.Origin.Tool)
		t.Annotations = normalizeAnnotations(t.Annotations)
		listedNames[t.Origin.Tool] = true
	}

	m.mu.Lock()
	s.instructions = c.instructions
	var activate []string
	for _, t := range tools {
		prev, seen := s.registered[t.Origin.Tool]
		if s.cfg.AlwaysLoad && t.Exposure != tool.Hidden && (!seen || prev.exposure == tool.Hidden || !prev.handled) {
			activate = append(activate, t.Name)
		}
	}
	var hide []tool.Tool
	for name, prev := range s.registered {
		if listedNames[name] || prev.exposure == tool.Hidden {
			continue
		}
		if t, ok := m.hidden(s, name, prev); ok {
			hide = append(hide, t)
		}
	}
	m.mu.Unlock()
	slices.SortFunc(hide, func(a, b tool.Tool) int { return strings.Compare(a.Name, b.Name) })
	// A tool listed as registered before is not registered again: only
	// what the new list adds, redefines or drops reaches the registry, and
	// so the search index (a list change re-indexes what changed).
	var unchanged []tool.Tool
	all := slices.DeleteFunc(tools, func(t tool.Tool) bool {
		got, ok := m.reg.Get(t.Name)
		if ok && got.Handler != nil && sameDefinition(got, t) {
			unchanged = append(unchanged, got)
			return true
		}
		return false
	})
	all = append(all, hide...)
	if err := m.reg.Register(all...); err != nil {
		for _, p := range catalog.Problems(err) {
			s.log.Warn("tool skipped", "problem", p.Error())
		}
	}
	if len(activate) > 0 {
		m.reg.Activate(activate...)
	}
	m.mu.Lock()
	for _, t := range unchanged {
		s.registered[t.Origin.Tool] = registrationOf(t)
	}
	for _, t := range all {
		if got, ok := m.reg.Get(t.Name); ok && got.Origin == t.Origin {
			s.registered[t.Origin.Tool] = registrationOf(got)
		}
	}
	m.mu.Unlock()
	return nil
}

// normalizeAnnotations drops the readOnly and idempotent hints when they are
// false: the SDK always sends them (false when the server did not say),
// and false is their default anyway. Annotations that say nothing become
// nil.
func normalizeAnnotations(a *tool.Annotations) *tool.Annotations {
	if a == nil {
		return nil
	}
	n := *a
	if n.ReadOnly != nil && !*n.ReadOnly {
		n.ReadOnly = nil
	}
	if n.Idempotent != nil && !*n.Idempotent {
		n.Idempotent = nil
	}
	if n == (tool.Annotations{}) {
		return nil
	}
	return &n
}

// logProblem logs a problem with a listed tool.
func logProblem(s *server, err error) {
	var p *catalog.Problem
	if !errors.As(err, &p) {
		s.log.Warn("tool list problem", "problem", err.Error())
		return
	}
	what := "tool skipped"
	if p.Ignored {
		what = "tool value ignored"
	}
	args := []any{"position", p.Index + 1, "problem", p.Err.Error()}
	if p.Tool != "" {
		args = append(args, "tool", p.Tool)
	}
	s.log.Warn(what, args...)
}

// toolCount returns the number of the server's tools that are not hidden.
func (m *Manager) toolCount(s *server) int { return m.toolCounts()[s.cfg.Name] }

// sameDefinition reports whether next, a tool made of a tools/list answer,
// defines what registered (as the registry holds it) does: the same name,
// origin, text, schema (compared compacted, as the registry keeps it),
// exposure, brief, namespace and annotations.
func sameDefinition(registered, next tool.Tool) bool {
	exposure := next.Exposure
	if exposure == "" {
		exposure = tool.Direct
	}
	if registered.Name != next.Name || registered.Origin != next.Origin || registered.Title != next.Title ||
		registered.Description != next.Description || registered.Brief != next.Brief ||
		registered.Exposure != exposure || registered.StartInactive != next.StartInactive ||
		registered.Sequential != next.Sequential || len(registered.Reaches.Names) > 0 || registered.Reaches.All ||
		registered.Reaches.Of != nil || next.Reaches.All || len(next.Reaches.Names) > 0 || next.Reaches.Of != nil {
		return false
	}
	if (registered.Namespace == nil) != (next.Namespace == nil) ||
		registered.Namespace != nil && *registered.Namespace != *next.Namespace {
		return false
	}
	if !reflect.DeepEqual(registered.Annotations, next.Annotations) {
		return false
	}
	if bytes.Equal(registered.Parameters, next.Parameters) {
		return true
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, next.Parameters); err != nil {
		return false
	}
	return bytes.Equal(registered.Parameters, buf.Bytes())
}
