package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	if args := os.Getenv(mainEnv); args != "" {
		os.Exit(runMainChild(args))
	}
	home, err := os.MkdirTemp("", "toolshelf-cli-test-")
	if err != nil {
		panic(err)
	}
	// The tests share one state folder and run at once: a run that
	// learned an alias would change another test's ranking. Tests of
	// the lexicon name their own file with --lexicon.
	os.Setenv("TOOLSHELF_LEXICON", "off")
	for _, v := range []string{"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"} {
		os.Setenv(v, filepath.Join(home, v))
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// mainEnv makes the test binary run toolshelf itself, as cmd/toolshelf
// does (with SignalContext), on the JSON array of arguments it holds,
// followed by the binary's own arguments after "--": how tests stop a real
// toolshelf process with a signal.
const mainEnv = "TOOLSHELF_CLI_TEST_MAIN"

func runMainChild(argsJSON string) int {
	var args []string
	if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
		fmt.Fprintln(os.Stderr, "bad", mainEnv, err)
		return 2
	}
	// A script's own arguments come after "--" (gatewayScript).
	if i := slices.Index(os.Args, "--"); i >= 0 {
		args = append(args, os.Args[i+1:]...)
	}
	ctx, stop := SignalContext(context.Background())
	defer stop()
	return Main(ctx, args, os.Stdin, os.Stdout, os.Stderr)
}
