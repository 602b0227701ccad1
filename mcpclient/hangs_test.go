package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
)

// withSilent makes the named servers never answer, and connects the
// others to in-process test servers.
func withSilent(f *fixture, silent ...string) {
	servers := map[string]*mcp.Server{}
	for _, s := range f.m.servers {
		servers[s.cfg.Name] = mcptest.NewServer(s.cfg.Name, "")
	}
	useMemServers(f.m, servers)
	mem := f.m.transport
	f.m.transport = func(s *server) (transport, error) {
		for _, name := range silent {
			if s.cfg.Name == name {
				return transport{Transport: mcptest.Silent()}, nil
			}
		}
		return mem(s)
	}
}

// searchTool registers tool_search over the fixture's registry, with the
// Manager's notes, as the command line wires it.
func searchTool(f *fixture) tool.Tool {
	f.t.Helper()
	ranker, err := search.NewBM25F(nil)
	if err != nil {
		f.t.Fatal(err)
	}
	s := toolsearch.New(f.reg, ranker)
	s.SetNotes(f.m.SearchNotes)
	if err := f.reg.Register(s.Tool()); err != nil {
		f.t.Fatal(err)
	}
	return s.Tool()
}

func TestUnansweredInitializeFailsAfterTheServerTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Before, a server that never answered initialize held tool_search
		// for a fixed minute, whatever its timeout, and the search then
		// said only "No matching tools found.".
		f := newFixture(t, ServerConfig{Name: "slow", Timeout: 5 * time.Second},
			ServerConfig{Name: "fine"})
		withSilent(f, "slow")
		ts := searchTool(f)
		start := time.Now()
		f.m.Start(f.ctx())
		synctest.Wait() // fine is connected, slow waits for an answer
		connecting := []string{`MCP server "slow" is still connecting; its tools cannot be searched yet.`}
		if got := f.m.SearchNotes(f.ctx()); !slices.Equal(got, connecting) {
			t.Errorf("notes while connecting = %q, want %q", got, connecting)
		}
		if err := f.m.WaitFor(f.ctx(), toolsearch.Name); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 5*time.Second {
			t.Errorf("tool_search waited %v for the silent server, want its timeout, 5s", waited)
		}
		st := f.status("slow")
		if st.State != Failed || st.Err == nil || !strings.Contains(st.Err.Error(), "no answer to initialize within 5s") {
			t.Fatalf("slow server: %s, %v; want failed with no answer to initialize within 5s", st.State, st.Err)
		}
		res, err := ts.Handler.Call(f.ctx(), json.RawMessage(`{"query":"zebra giraffe"}`))
		if err != nil {
			t.Fatal(err)
		}
		want := toolsearch.NoMatches
		note := `MCP server "slow" failed to connect (no answer to initialize within 5s); its tools cannot be searched or called.`
		if got := text(res); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "\n"+note) {
			t.Errorf("tool_search = %q, want %q and then %q", got, want, note)
		}
		res, err = ts.Handler.Call(f.ctx(), json.RawMessage(`{"query":"select:mcp__fine__echo"}`))
		if err != nil {
			t.Fatal(err)
		}
		if got := text(res); !strings.HasPrefix(got, "Loaded 1 tool.") || !strings.HasSuffix(got, "\n"+note) {
			t.Errorf("tool_search = %q, want the fine server's tool loaded, then the note", got)
		}
	})
}

func TestUnansweredToolListFailsAfterTheServerTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, ServerConfig{Name: "mute", Timeout: 3 * time.Second})
		srv := mcptest.NewServer("mute", "")
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "tools/list" {
					<-ctx.Done()
					return nil, ctx.Err()
				}
				return next(ctx, method, req)
			}
		})
		useMemServers(f.m, map[string]*mcp.Server{"mute": srv})
		start := time.Now()
		f.m.Start(f.ctx())
		f.waitAll()
		if waited := time.Since(start); waited != 3*time.Second {
			t.Errorf("the listing took %v, want the server's timeout, 3s", waited)
		}
		st := f.status("mute")
		if st.State != Failed || st.Err == nil || !strings.Contains(st.Err.Error(), "no answer to tools/list within 3s") {
			t.Errorf("mute server: %s, %v; want failed with no answer to tools/list within 3s", st.State, st.Err)
		}
	})
}

func TestSearchNotesKeepTheConfigurationOut(t *testing.T) {
	t.Parallel()
	// The note reaches the model: the command and its arguments, which may
	// hold secrets expanded from the environment, stay out of it.
	cfg := ServerConfig{Name: "ghost", Type: "stdio", Command: "toolshelf-no-such-command",
		Args: []string{"--token", "s3cr3t-value"}}
	f := newFixture(t, cfg)
	f.m.Start(f.ctx())
	f.waitAll()
	want := []string{`MCP server "ghost" failed to connect (its command was not found); its tools cannot be searched or called.`}
	if got := f.m.SearchNotes(f.ctx()); !slices.Equal(got, want) {
		t.Errorf("notes = %q, want %q", got, want)
	}
	if err := f.status("ghost").Err; err == nil || !strings.Contains(err.Error(), "toolshelf-no-such-command") {
		t.Errorf("the status error, for the user, should still name the command: %v", err)
	}
}

// TestStopWhileConnectingIsNoFailure: a run that ends before a healthy
// server has finished connecting — Close, or the context Start was given
// ending — is toolshelf stopping, not the server failing: nothing is
// logged as a warning (before, "connection failed … context canceled;
// check that … starts an MCP server" blamed a correct configuration).
func TestStopWhileConnectingIsNoFailure(t *testing.T) {
	t.Parallel()
	t.Run("close before start", func(t *testing.T) {
		f := newFixture(t, ServerConfig{Name: "slow", Type: "stdio", Command: "mcp-server-slow"})
		if err := f.m.Close(); err != nil {
			t.Fatal(err)
		}
		if st := f.status("slow"); st.State != Failed || !errors.Is(st.Err, ErrStopped) {
			t.Errorf("closed before Start: %s, %v; want failed with ErrStopped", st.State, st.Err)
		}
		if notes := f.m.SearchNotes(f.ctx()); len(notes) != 0 {
			t.Errorf("search notes %q, want none", notes)
		}
	})
	for _, how := range []string{"close", "context"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t, ServerConfig{Name: "slow", Type: "stdio", Command: "mcp-server-slow"})
			withSilent(f, "slow")
			// The attempt is under way once its transport is made.
			dialing := make(chan struct{})
			silent := f.m.transport
			f.m.transport = func(s *server) (transport, error) {
				defer close(dialing)
				return silent(s)
			}
			ctx, cancel := context.WithCancel(f.ctx())
			defer cancel()
			f.m.Start(ctx)
			<-dialing
			if how == "close" {
				if err := f.m.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				cancel()
				f.waitAll()
			}
			st := f.status("slow")
			if st.State != Failed || !errors.Is(st.Err, ErrStopped) {
				t.Errorf("after the stop: %s, %v; want failed with ErrStopped", st.State, st.Err)
			}
			if log := f.log.String(); strings.Contains(log, "level=WARN") || strings.Contains(log, "level=ERROR") {
				t.Errorf("the stop was logged as a problem:\n%s", log)
			}
		})
	}
}
