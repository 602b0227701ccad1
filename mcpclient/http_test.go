package mcpclient

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// httpServer serves an SDK server over streamable HTTP. Before each request
// it asks intercept, which may answer instead.
type httpServer struct {
	*httptest.Server
	mu        sync.Mutex
	handler   http.Handler
	intercept func(w http.ResponseWriter, r *http.Request) bool
	headers   []string // Authorization headers seen
}

func newHTTPServer(t *testing.T, srv *mcp.Server) *httpServer {
	h := &httpServer{}
	h.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.headers = append(h.headers, r.Header.Get("Authorization"))
		intercept, handler := h.intercept, h.handler
		h.mu.Unlock()
		if intercept != nil && intercept(w, r) {
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *httpServer) set(intercept func(w http.ResponseWriter, r *http.Request) bool) {
	h.mu.Lock()
	h.intercept = intercept
	h.mu.Unlock()
}

// countDials counts the Manager's connection attempts.
func countDials(m *Manager) *atomic.Int32 {
	var n atomic.Int32
	base := m.transport
	m.transport = func(s *server) (transport, error) {
		n.Add(1)
		return base(s)
	}
	return &n
}

func httpConfig(name, url string) ServerConfig {
	return ServerConfig{Name: name, Type: "http", URL: url,
		Headers: map[string]string{"Authorization": "Bearer secret"}}
}

func TestHTTPConnectsWithHeaders(t *testing.T) {
	t.Parallel()
	hs := newHTTPServer(t, mcptest.NewServer("web", "Web instructions."))
	f := newFixture(t, httpConfig("web", hs.URL))
	f.m.Start(f.ctx())
	f.waitAll()
	if st := f.status("web"); st.State != Connected {
		t.Fatalf("status = %+v", st)
	}
	if got := text(f.call("mcp__web__echo", `{"text":"over http"}`)); got != "echo: over http" {
		t.Errorf("echo = %q", got)
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for _, h := range hs.headers {
		if h != "Bearer secret" {
			t.Errorf("a request had Authorization %q", h)
		}
	}
}

func TestHTTPRetriesTransientFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		status   int
		failing  int32 // connection attempts whose requests get status
		attempts int32
		state    State
	}{
		{"503 twice", http.StatusServiceUnavailable, 2, 3, Connected},
		{"429 once", http.StatusTooManyRequests, 1, 2, Connected},
		{"408 once", http.StatusRequestTimeout, 1, 2, Connected},
		{"500 once", http.StatusInternalServerError, 1, 2, Connected},
		{"502 always", http.StatusBadGateway, 1000, 3, Failed},
		{"501", http.StatusNotImplemented, 1000, 1, Failed},
		{"401", http.StatusUnauthorized, 1000, 1, Failed},
		{"404", http.StatusNotFound, 1000, 1, Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := newHTTPServer(t, mcptest.NewServer("web", ""))
			f := newFixture(t, httpConfig("web", hs.URL))
			f.m.retryDelays = []time.Duration{time.Millisecond, time.Millisecond}
			attempts := countDials(f.m)
			hs.set(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method == http.MethodPost && attempts.Load() <= tc.failing {
					http.Error(w, "nope", tc.status)
					return true
				}
				return false
			})
			f.m.Start(f.ctx())
			f.waitAll()
			st := f.status("web")
			if st.State != tc.state || attempts.Load() != tc.attempts {
				t.Errorf("state %s after %d attempts, want %s after %d (%v)", st.State, attempts.Load(), tc.state, tc.attempts, st.Err)
			}
			if tc.state == Failed && (st.Err == nil || !strings.Contains(st.Err.Error(), hs.URL)) {
				t.Errorf("error %v does not name the URL", st.Err)
			}
		})
	}
}

func TestHTTPNetworkErrorIsRetried(t *testing.T) {
	t.Parallel()
	hs := newHTTPServer(t, mcptest.NewServer("web", ""))
	url := hs.URL
	hs.Close() // nothing listens there any more
	f := newFixture(t, httpConfig("web", url))
	f.m.retryDelays = []time.Duration{time.Millisecond, time.Millisecond}
	dials := countDials(f.m)
	f.m.Start(f.ctx())
	f.waitAll()
	if st := f.status("web"); st.State != Failed || dials.Load() != 3 {
		t.Errorf("state %s after %d attempts, want failed after 3", st.State, dials.Load())
	}
}

func TestHTTPExpiredSessionIsRenewed(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewServer("web", "")
	hs := newHTTPServer(t, srv)
	f := newFixture(t, httpConfig("web", hs.URL))
	dials := countDials(f.m)
	f.m.Start(f.ctx())
	f.waitAll()
	// The server restarts and forgets its sessions.
	hs.mu.Lock()
	hs.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs.mu.Unlock()
	r := f.call("mcp__web__echo", `{"text":"renewed"}`)
	if r.IsError || text(r) != "echo: renewed" {
		t.Errorf("call after the server forgot the session = %q", text(r))
	}
	if n := dials.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}
