package gateway_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/gateway"
	"github.com/toolshelf/toolshelf/mcpclient"
)

// TestCodemodeBusyIsRefusedWithErrBusy: past MaxScripts a script waits for
// a turn, and once QueueWait has passed it is refused with an error result
// that says why (codemode.ErrBusy), not left hanging; when the running
// script ends, the next one runs.
func TestCodemodeBusyIsRefusedWithErrBusy(t *testing.T) {
	srv, started, cancelled := blocking()
	g := newGatewayWith(t, gateway.Config{MaxScripts: 1, QueueWait: 50 * time.Millisecond},
		mcpclient.ServerConfig{Name: "slow", Server: srv})
	holder, other := connect(t, g, gateway.Codemode), connect(t, g, gateway.Codemode)
	ctx, cancel := context.WithCancel(t.Context())
	returned := make(chan error, 1)
	go func() {
		_, err := holder.CallTool(ctx, &mcp.CallToolParams{Name: gateway.CodeName,
			Arguments: map[string]any{"code": `await tools.mcp__slow__block({}); return "not cancelled";`}})
		returned <- err
	}()
	<-started // the holder's script has the only turn, until it is cancelled
	if text, isErr := code(t, other, `return "ran";`); !isErr || !strings.Contains(text, codemode.ErrBusy.Error()) {
		t.Errorf("a script past MaxScripts: %q (error %v), want the ErrBusy refusal", text, isErr)
	}
	cancel()
	<-cancelled
	<-returned
	if text, isErr := code(t, other, `return "ran";`); isErr || text != "ran" {
		t.Errorf("a script once the turn was free: %q (error %v)", text, isErr)
	}
}
