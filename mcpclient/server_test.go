package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/tool"
)

func TestMain(m *testing.M) {
	if code, served := mcptest.ServeIfAsked(); served {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// memServers connects a Manager's servers to in-process SDK servers over
// in-memory transports. It counts connections per server.
type memServers struct {
	mu       sync.Mutex
	servers  map[string]*mcp.Server
	sessions map[string][]*mcp.ServerSession
	dials    map[string]int
}

func useMemServers(m *Manager, servers map[string]*mcp.Server) *memServers {
	ms := &memServers{servers: servers, sessions: make(map[string][]*mcp.ServerSession), dials: make(map[string]int)}
	m.transport = func(s *server) (transport, error) {
		srv := ms.servers[s.cfg.Name]
		if srv == nil {
			return transport{}, fmt.Errorf("no test server %q", s.cfg.Name)
		}
		t, ss, err := memoryTransport(srv)
		if err != nil {
			return transport{}, err
		}
		ms.mu.Lock()
		ms.sessions[s.cfg.Name] = append(ms.sessions[s.cfg.Name], ss)
		ms.dials[s.cfg.Name]++
		ms.mu.Unlock()
		return t, nil
	}
	return ms
}

// kill closes the server side of the server's sessions.
func (ms *memServers) kill(name string) {
	ms.mu.Lock()
	sessions := ms.sessions[name]
	ms.sessions[name] = nil
	ms.mu.Unlock()
	for _, ss := range sessions {
		ss.Close()
	}
}

func (ms *memServers) dialCount(name string) int {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.dials[name]
}

// countCalls adds a middleware that counts the server's requests by method.
func countCalls(srv *mcp.Server) func(method string) int {
	var mu sync.Mutex
	counts := map[string]int{}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			mu.Lock()
			counts[method]++
			mu.Unlock()
			return next(ctx, method, req)
		}
	})
	return func(method string) int {
		mu.Lock()
		defer mu.Unlock()
		return counts[method]
	}
}

// rewriteList adds a middleware that rewrites the server's tools/list
// answers.
func rewriteList(srv *mcp.Server, rewrite func([]*mcp.Tool) []*mcp.Tool) {
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				lr.Tools = rewrite(lr.Tools)
			}
			return res, err
		}
	})
}

// testLog is a logger that keeps what it logs, for assertions.
type testLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *testLog) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(lockedWriter{l}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

type lockedWriter struct{ l *testLog }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	return w.l.buf.Write(p)
}

// fixture is a Manager over a fresh registry.
type fixture struct {
	t     *testing.T
	reg   *tool.Registry
	namer *tool.Namer
	m     *Manager
	log   *testLog
}

// newFixture returns a Manager for the servers (not started).
func newFixture(t *testing.T, servers ...ServerConfig) *fixture {
	t.Helper()
	f := &fixture{t: t, reg: tool.NewRegistry(), namer: tool.NewNamer(), log: &testLog{}}
	for i := range servers {
		if servers[i].Timeout == 0 {
			servers[i].Timeout = DefaultTimeout
		}
		if servers[i].Exposure == "" {
			servers[i].Exposure = tool.Deferred
		}
		if servers[i].Type == "" && servers[i].Command == "" && servers[i].URL == "" {
			// The fixture's transport replaces what a stdio server would
			// start.
			servers[i].Type, servers[i].Command = "stdio", "unused"
		}
		servers[i].File = "mcp.json"
	}
	m, err := NewManager(&Config{Servers: servers}, f.reg, f.namer, Options{Logger: f.log.logger(), OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	f.m.terminate = 200 * time.Millisecond
	t.Cleanup(func() {
		if err := f.m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("log:\n%s", f.log.String())
		}
	})
	return f
}

// ctx returns a context that ends with the test, bounded as a safety net.
func (f *fixture) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	f.t.Cleanup(cancel)
	return ctx
}

// waitAll waits until no server is connecting.
func (f *fixture) waitAll() {
	f.t.Helper()
	if err := f.m.await(f.ctx(), f.m.servers, nil); err != nil {
		f.t.Fatalf("servers did not settle: %v", err)
	}
}

// status returns a server's status.
func (f *fixture) status(name string) Status {
	f.t.Helper()
	for _, s := range f.m.Servers() {
		if s.Name == name {
			return s
		}
	}
	f.t.Fatalf("no server %q", name)
	return Status{}
}

// call calls a registered tool through its handler.
func (f *fixture) call(name, args string) *tool.Result {
	f.t.Helper()
	t, ok := f.reg.Get(name)
	if !ok {
		f.t.Fatalf("tool %s is not registered", name)
	}
	if t.Handler == nil {
		f.t.Fatalf("tool %s has no handler", name)
	}
	res, err := t.Handler.Call(f.ctx(), json.RawMessage(args))
	if err != nil {
		f.t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// text joins a result's text parts.
func text(r *tool.Result) string {
	var parts []string
	for _, c := range r.Content {
		if c.MIMEType == "" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// eventually waits for cond, checked after every change the Manager
// reports, with a safety-net deadline.
func (f *fixture) eventually(what string, cond func() bool) {
	f.t.Helper()
	changed := make(chan struct{}, 1)
	cancel := f.m.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer cancel()
	cancelReg := f.reg.Subscribe(func(tool.Change) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer cancelReg()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-changed:
		case <-deadline:
			f.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }

// savedFile is a file's text and the permissions of it and its folder.
type savedFile struct {
	text          string
	mode, dirMode os.FileMode
}

func readFileMode(path string) (savedFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return savedFile{}, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return savedFile{}, err
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return savedFile{}, err
	}
	return savedFile{text: string(data), mode: fi.Mode().Perm(), dirMode: di.Mode().Perm()}, nil
}

// mustManager returns a Manager over servers that is not started.
func mustManager(t *testing.T, cfg *Config) *Manager {
	t.Helper()
	m, err := NewManager(cfg, tool.NewRegistry(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
