package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
)

// TestMain lets the test binary double as the stdio MCP test server of
// package mcptest, which the agent tests configure in their mcp.json.
//
// The tests' data, state, cache and config folders are a temporary
// folder, so nothing is read from or written to the user's.
func TestMain(m *testing.M) {
	if code, served := mcptest.ServeIfAsked(); served {
		os.Exit(code)
	}
	home, err := os.MkdirTemp("", "toolshelf-cli-test-")
	if err != nil {
		panic(err)
	}
	for _, v := range []string{"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"} {
		os.Setenv(v, filepath.Join(home, v))
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}
