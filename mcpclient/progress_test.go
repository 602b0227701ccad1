package mcpclient

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// addProgressTool adds "progress", which reports progress every 100 ms
// and never finishes.
func addProgressTool(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "progress", Description: "Report progress forever.", InputSchema: mcptest.ObjectSchema()},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			token := req.Params.GetProgressToken()
			for i := 0; ; i++ {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i)}); err != nil {
					return nil, err
				}
			}
		})
}

func TestProgressCannotKeepACallAliveForever(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Before, every progress notification restarted the timeout, so a
		// server reporting progress held the call for ever.
		f := newFixture(t, ServerConfig{Name: "busy", Timeout: time.Second})
		srv := mcptest.NewServer("busy", "")
		addProgressTool(srv)
		useMemServers(f.m, map[string]*mcp.Server{"busy": srv})
		f.m.Start(f.ctx())
		f.waitAll()
		start := time.Now()
		r := f.call("mcp__busy__progress", `{}`)
		if took := time.Since(start); took != 10*time.Second {
			t.Errorf("the call ended after %v, want 10 times its timeout of 1s", took)
		}
		want := `MCP server "busy" (mcp.json) was still working on the call of progress after 10s, the most a call may take ` +
			`(10 times the configured timeout of 1s, however often the server reports progress). The call was cancelled.`
		if !r.IsError || text(r) != want {
			t.Errorf("result = %q (error %v), want %q", text(r), r.IsError, want)
		}
		// The server was alive: its session stays.
		if st := f.status("busy"); st.State != Connected {
			t.Errorf("state after the capped call = %s (%v)", st.State, st.Err)
		}
		if r := f.call("mcp__busy__echo", `{"text":"x"}`); r.IsError || text(r) != "echo: x" {
			t.Errorf("a call after the capped one = %q", text(r))
		}
	})
}

// TestProgressIsReported: a call's progress notifications reach
// Options.Progress with the call, the server, the tool's model-facing name,
// the figures and the message (redacted).
func TestProgressIsReported(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var got []Progress
		f := newFixture(t, ServerConfig{Name: "busy", Expanded: map[string]string{"TOKEN": "s3cr3t-value"}})
		f.m.opts.Progress = func(p Progress) { got = append(got, p) }
		srv := mcptest.NewServer("busy", "")
		srv.AddTool(&mcp.Tool{Name: "steps", Description: "Work in three steps.", InputSchema: mcptest.ObjectSchema()},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				for i := 1; i <= 3; i++ {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(),
						Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d with s3cr3t-value", i)}); err != nil {
						return nil, err
					}
					// (The bubble's clock.) A notification the client
					// reads after the answer is not the call's any more.
					time.Sleep(time.Second)
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			})
		useMemServers(f.m, map[string]*mcp.Server{"busy": srv})
		f.m.Start(f.ctx())
		f.waitAll()
		if r := f.call("mcp__busy__steps", `{}`); r.IsError || text(r) != "done" {
			t.Fatalf("result %q", text(r))
		}
		synctest.Wait() // the notifications are read on the session's goroutine
		if len(got) != 3 {
			t.Fatalf("%d notifications reported: %+v", len(got), got)
		}
		for i, p := range got {
			want := Progress{Call: got[0].Call, Server: "busy", Tool: "mcp__busy__steps", Progress: float64(i + 1), Total: 3,
				Message: fmt.Sprintf("step %d with ${TOKEN}", i+1)}
			if p != want || p.Call == "" {
				t.Errorf("notification %d: %+v, want %+v", i, p, want)
			}
		}
	})
}
