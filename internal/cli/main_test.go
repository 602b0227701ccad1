package cli

import (
	"os"
	"testing"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// TestMain lets the test binary double as the stdio MCP test server of
// package mcptest, which the agent tests configure in their mcp.json.
func TestMain(m *testing.M) {
	if code, served := mcptest.ServeIfAsked(); served {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
