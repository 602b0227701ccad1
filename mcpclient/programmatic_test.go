package mcpclient_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/tool"
)

// TestProgrammaticConfigsFailLoudly checks that a server configuration a
// program builds is refused by NewManager with an error naming the server
// and the fix, where it used to fail only into the (discarding) logger.
func TestProgrammaticConfigsFailLoudly(t *testing.T) {
	t.Parallel()
	srv := mcptest.NewServer("s", "")
	for _, c := range []struct {
		name    string
		servers []mcpclient.ServerConfig
		want    string
	}{
		{"no transport", []mcpclient.ServerConfig{{Name: "a"}}, `MCP server "a": nothing to connect to`},
		{"two transports", []mcpclient.ServerConfig{{Name: "a", Command: "x", Server: srv}}, "memory and stdio are all set; set exactly one"},
		{"type disagrees", []mcpclient.ServerConfig{{Name: "a", Type: "http", Command: "x"}}, `type "http" does not match what is set (stdio)`},
		{"bad url", []mcpclient.ServerConfig{{Name: "a", URL: "localhost:8080/mcp"}}, "is not an http or https URL"},
		{"bad name", []mcpclient.ServerConfig{{Name: "my server", Server: srv}}, "the name must be letters, digits"},
		{"bad exposure", []mcpclient.ServerConfig{{Name: "a", Server: srv, Exposure: "lazy"}}, `MCP server "a"`},
		{"twice", []mcpclient.ServerConfig{{Name: "a", Server: srv}, {Name: "a", Command: "x"}}, `"a" is configured twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := mcpclient.NewManager(&mcpclient.Config{Servers: c.servers}, tool.NewRegistry(), nil, mcpclient.Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewManager = %v, %v; want an error containing %q", m, err, c.want)
			}
		})
	}
	if _, err := mcpclient.NewManager(nil, nil, nil, mcpclient.Options{}); err == nil {
		t.Error("NewManager without a registry succeeded")
	}
}

// TestZeroValueServerConnects checks that a server configuration with
// nothing but a name and a way to connect is enabled (it used to need
// Enabled: true, and was quietly disabled without it), over an in-memory
// server and over a caller's transport.
func TestZeroValueServerConnects(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, ct := mcp.NewInMemoryTransports()
	own := mcptest.NewServer("own", "")
	if _, err := own.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	m, err := mcpclient.NewManager(&mcpclient.Config{Servers: []mcpclient.ServerConfig{
		{Name: "mem", Server: mcptest.NewServer("mem", "")},
		{Name: "own", Transport: ct},
	}}, reg, nil, mcpclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Start(ctx)
	if err := m.WaitAll(ctx); err != nil {
		t.Fatal(err)
	}
	for _, st := range m.Servers() {
		if st.State != mcpclient.Connected || st.Tools == 0 {
			t.Errorf("%s: %s with %d tools (%v), want connected", st.Name, st.State, st.Tools, st.Err)
		}
	}
	for _, name := range []string{"mcp__mem__echo", "mcp__own__echo"} {
		tl, ok := reg.Get(name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		res, err := tl.Handler.Call(ctx, []byte(`{"text":"hi"}`))
		if err != nil || res.IsError || res.Content[0].Text != "echo: hi" {
			t.Errorf("%s: %+v, %v", name, res, err)
		}
	}
}

// TestWaitForReachedServers checks that a tool of the caller's that
// reaches a server's namespace waits for that server before its call.
func TestWaitForReachedServers(t *testing.T) {
	t.Parallel()
	reg := tool.NewRegistry()
	if err := reg.Register(tool.Tool{Name: "digest", Description: "Summarise the notes.",
		Reaches: tool.Reach{Names: []string{"mcp__mem"}}}); err != nil {
		t.Fatal(err)
	}
	m, err := mcpclient.NewManager(&mcpclient.Config{Servers: []mcpclient.ServerConfig{
		{Name: "mem", Server: mcptest.NewServer("mem", "")},
	}}, reg, nil, mcpclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if err := m.WaitFor(done, "digest"); err == nil {
		t.Error("digest did not wait for mem, which has not started connecting")
	}
	m.Start(t.Context())
	if err := m.WaitFor(t.Context(), "digest"); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Get("mcp__mem__echo"); !ok {
		t.Error("digest's wait ended before mem's tools registered")
	}
}
