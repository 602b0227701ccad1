package mcpclient

import (
	"context"
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
