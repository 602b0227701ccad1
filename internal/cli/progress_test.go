//go:build unix

package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// TestProgressPrinter: the first notification of a call is printed at
// once, later ones at most once a second per call, with the figures and
// the message made safe.
func TestProgressPrinter(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	pp := newProgressPrinter(&out)
	clock := time.Unix(0, 0)
	pp.now = func() time.Time { return clock }
	for _, step := range []struct {
		after time.Duration
		p     mcpclient.Progress
	}{
		{0, mcpclient.Progress{Call: "a", Tool: "mcp__s__long", Progress: 1, Total: 10, Message: "step 1 \x1b[31mred"}},
		{300 * time.Millisecond, mcpclient.Progress{Call: "a", Tool: "mcp__s__long", Progress: 2, Total: 10}},
		{0, mcpclient.Progress{Call: "b", Tool: "mcp__s__other", Progress: 0.5}},
		{700 * time.Millisecond, mcpclient.Progress{Call: "a", Tool: "mcp__s__long", Progress: 3, Total: 10, Message: "step 3"}},
		{500 * time.Millisecond, mcpclient.Progress{Call: "a", Tool: "mcp__s__long", Progress: 4, Total: 10}},
	} {
		clock = clock.Add(step.after)
		pp.report(step.p)
	}
	want := "… mcp__s__long: 1/10 step 1 \\x1b[31mred\n" +
		"… mcp__s__other: 0.5\n" +
		"… mcp__s__long: 3/10 step 3\n"
	if out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}

// TestRunShowsProgress: a tool call whose server reports progress shows it
// on stderr, made safe; with --json there is none.
func TestRunShowsProgress(t *testing.T) {
	t.Parallel()
	// shown is closed once the first line is on stderr: the call ends
	// after it, since a notification the client reads after the answer
	// is not the call's any more.
	var shown chan struct{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "steps", Description: "Work in three steps.", InputSchema: mcptest.ObjectSchema()},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := 1; i <= 3; i++ {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(),
					Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d \x1b]0;title\a", i)}); err != nil {
					return nil, err
				}
			}
			select {
			case <-shown:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	config := writeMCPConfig(t, map[string]any{"slow": map[string]any{"url": hs.URL}})
	shown = make(chan struct{})
	stderr := &watcher{marker: "… mcp__slow__steps: 1/3", fn: func() { close(shown) }}
	code, out, errOut := runAgent(t, agentRunOpts{stderr: stderr}, "--mcp", config, "--no-session", "--metrics", "off", "Work in three steps")
	if code != 0 || !strings.HasPrefix(out, "mcp__slow__steps returned:") {
		t.Fatalf("exit %d, stdout %q: %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "… mcp__slow__steps: 1/3 step 1 \\x1b]0;title\\a\n") || strings.Contains(errOut, "\x1b") {
		t.Errorf("stderr:\n%s", errOut)
	}
	shown = make(chan struct{})
	close(shown) // nothing to wait for
	code, _, errOut = runAgent(t, agentRunOpts{}, "--mcp", config, "--no-session", "--metrics", "off", "--json", "Work in three steps")
	if code != 0 || strings.Contains(errOut, "…") {
		t.Errorf("--json: exit %d, stderr:\n%s", code, errOut)
	}
}
