package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// skipper is what requireInstalled needs of a test: its own test checks
// it with a recorder.
type skipper interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// requireInstalled is called by the tests of real MCP servers and clients
// (installed by the .ci scripts) when what they need is missing: under CI
// (CI set, as .ci/run and CI services set it) the test fails, since CI
// installs them; elsewhere it is skipped, saying what to run.
func requireInstalled(t skipper, what, script string, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s required under CI: %v (run bash %s)", what, err, script)
		return
	}
	t.Skipf("%s not installed (run bash %s): %v", what, script, err)
}

// skipInShort skips a test of real servers or clients under go test
// -short, the inner loop: they start Node processes for seconds each.
// CI runs without -short.
func skipInShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real MCP servers or clients; go test without -short runs it")
	}
}

// installRecorder notes what requireInstalled did instead of doing it.
type installRecorder struct{ fatal, skip string }

func (r *installRecorder) Helper() {}
func (r *installRecorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
}
func (r *installRecorder) Skipf(format string, args ...any) {
	r.skip = fmt.Sprintf(format, args...)
}

// TestRequireInstalledFailsUnderCI: missing real servers fail a test
// under CI and skip it elsewhere, each time naming the script to run.
func TestRequireInstalledFailsUnderCI(t *testing.T) {
	missing := errors.New("stat .ci/mcp/node_modules/.bin/mcp-server-memory: no such file or directory")
	t.Setenv("CI", "true")
	var ci installRecorder
	requireInstalled(&ci, "the real MCP servers are", ".ci/mcp-servers", missing)
	if ci.skip != "" || !strings.Contains(ci.fatal, "the real MCP servers are required under CI") || !strings.Contains(ci.fatal, "run bash .ci/mcp-servers") {
		t.Errorf("under CI: fatal %q, skip %q", ci.fatal, ci.skip)
	}
	t.Setenv("CI", "")
	var local installRecorder
	requireInstalled(&local, "the real MCP servers are", ".ci/mcp-servers", missing)
	if local.fatal != "" || !strings.Contains(local.skip, "the real MCP servers are not installed (run bash .ci/mcp-servers)") {
		t.Errorf("without CI: fatal %q, skip %q", local.fatal, local.skip)
	}
}
