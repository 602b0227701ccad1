//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
)

// realServers writes an mcp.json for the real MCP servers that
// .ci/mcp-servers installs from npm (filesystem on dir, memory with its
// file in dir, everything), all deferred. Without them the test is skipped,
// except under CI, where they are required.
func realServers(t *testing.T, dir string) string {
	t.Helper()
	bin := realServerBin(t)
	return writeMCPConfig(t, map[string]any{
		"filesystem": map[string]any{"command": filepath.Join(bin, "mcp-server-filesystem"), "args": []string{dir},
			"description": "Read and write the files of one folder"},
		"memory": map[string]any{"command": filepath.Join(bin, "mcp-server-memory"),
			"env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
		"everything": map[string]any{"command": filepath.Join(bin, "mcp-server-everything")},
	})
}

// realServerBin returns the folder of the real MCP servers' commands that
// .ci/mcp-servers installs. Without them the test is skipped, except under
// CI, where they are required; under -short it is skipped.
func realServerBin(t *testing.T) string {
	t.Helper()
	skipInShort(t)
	bin, err := filepath.Abs(filepath.Join("..", "..", ".ci", "mcp", "node_modules", ".bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mcp-server-filesystem", "mcp-server-memory", "mcp-server-everything"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			requireInstalled(t, "the real MCP servers are", ".ci/mcp-servers", err)
		}
	}
	return bin
}

// TestRealServersSearchLoadCall drives the agent, answered by the
// stand-in model standin.Scout in the emulator, against the real servers:
// each prompt is searched, the load declared before the next request, and
// the loaded tool called for a real result.
func TestRealServersSearchLoadCall(t *testing.T) {
	dir := t.TempDir()
	mcp := realServers(t, dir)
	sessions := t.TempDir()
	for _, c := range []struct {
		prompt, tool, result string
	}{
		{"list the allowed directories", "mcp__filesystem__list_allowed_directories", dir},
		{"read the knowledge graph", "mcp__memory__read_graph", `"entities"`},
		{"echo back the message", "mcp__everything__echo", "Echo: "},
	} {
		t.Run(c.tool, func(t *testing.T) {
			code, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", sessions, "--json", c.prompt)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			evs := parseEvents(t, out)
			declared, called := -1, -1
			var result *llm.Message
			for i, e := range evs {
				switch {
				case e.Type == "message" && e.Message.Role == llm.RoleSystem && declared < 0 &&
					slices.ContainsFunc(e.Message.ToolsAdded, func(d llm.Tool) bool { return d.Name == c.tool }):
					declared = i
				case e.Type == "message" && e.Message.Role == llm.RoleAssistant && called < 0 &&
					slices.ContainsFunc(e.Message.ToolCalls(), func(tc llm.ToolCall) bool { return tc.Name == c.tool }):
					called = i
				case e.Type == "tool_end" && e.Call.Name == c.tool:
					result = e.Message
				}
			}
			if declared < 0 || called < 0 || declared > called || evs[declared].Turn != evs[called].Turn {
				t.Fatalf("%s: declared at %d, called at %d\n%s", c.tool, declared, called, out)
			}
			if result == nil || result.IsError || !strings.Contains(llm.ContentText(result.Content, "\n"), c.result) {
				t.Errorf("%s's result: %+v, want it to contain %q", c.tool, result, c.result)
			}
		})
	}
}

// TestRealServersMCPCommands lists the real servers and one server's tools.
func TestRealServersMCPCommands(t *testing.T) {
	dir := t.TempDir()
	mcp := realServers(t, dir)
	code, out, errOut := run(t, "mcp", "list", "--mcp", mcp)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"everything", "filesystem", "memory"} {
		if !regexp.MustCompile(`(?m)^` + name + ` +connected +deferred +[1-9][0-9]* *$`).MatchString(out) {
			t.Errorf("mcp list has no connected line for %s:\n%s", name, out)
		}
	}
	code, out, errOut = run(t, "mcp", "tools", "--mcp", mcp, "filesystem")
	if code != 0 || !strings.Contains(out, "mcp__filesystem__read_text_file ") || !strings.Contains(out, "mcp__filesystem__list_allowed_directories ") {
		t.Errorf("mcp tools filesystem: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut = run(t, "mcp", "tools", "--mcp", mcp, "nosuch")
	if code != 2 || !strings.Contains(errOut, `no server "nosuch"`) {
		t.Errorf("mcp tools nosuch: exit %d: %s", code, errOut)
	}
}

// TestMCPDumpThenLintAndSearch: mcp dump writes a catalog file per real
// server, which lint --catalog and search --catalog read as they read the
// built-in catalog.
func TestMCPDumpThenLintAndSearch(t *testing.T) {
	dir := t.TempDir()
	mcp := realServers(t, dir)
	out := filepath.Join(t.TempDir(), "servers")
	code, stdout, errOut := run(t, "mcp", "dump", "--mcp", mcp, "--out", out)
	if code != 0 {
		t.Fatalf("dump: exit %d: %s%s", code, stdout, errOut)
	}
	for _, name := range []string{"everything", "filesystem", "memory"} {
		want := "wrote " + filepath.Join(out, name+".json") + " ("
		if !strings.Contains(stdout, want) {
			t.Errorf("dump's output lacks %q:\n%s", want, stdout)
		}
		data, err := os.ReadFile(filepath.Join(out, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), dir) && name != "filesystem" {
			t.Errorf("%s.json holds the test's folder", name)
		}
	}
	// The README's example servers: their warnings are their authors' to
	// fix, so lint exits 0, and its summary comes first.
	code, stdout, errOut = run(t, "lint", "--catalog", out)
	if code != 0 || !regexp.MustCompile(`^Summary: \d+ tools of 3 servers`).MatchString(stdout) || errOut != "" {
		t.Errorf("lint --catalog: exit %d:\n%s%s", code, stdout, errOut)
	}
	code, stdout, errOut = run(t, "search", "--catalog", out, "read the knowledge graph")
	if code != 0 || !strings.Contains(strings.SplitN(stdout, "\n", 3)[0]+strings.SplitN(stdout, "\n", 3)[1], "mcp__memory__read_graph") {
		t.Errorf("search --catalog: exit %d:\n%s%s", code, stdout, errOut)
	}
	// One server by name; one that is not configured is refused.
	if code, stdout, _ := run(t, "mcp", "dump", "memory", "--mcp", mcp, "--out", t.TempDir()); code != 0 || strings.Count(stdout, "wrote ") != 1 {
		t.Errorf("dump memory: exit %d: %s", code, stdout)
	}
	if code, _, errOut := run(t, "mcp", "dump", "nosuch", "--mcp", mcp, "--out", out); code != 2 || !strings.Contains(errOut, `no server "nosuch"`) {
		t.Errorf("dump nosuch: exit %d: %s", code, errOut)
	}
}

// TestRealServersResumedFollowUp: a resumed run's follow-up gets an answer
// about itself, not the first answer again. After "list the allowed
// directories", "and list its files" lists the allowed directory's files
// with the real filesystem server: the stand-in model answers the latest
// request, and "its" is the path the first answer gave.
func TestRealServersResumedFollowUp(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("a file to list"), 0o600); err != nil {
		t.Fatal(err)
	}
	mcp := filesystemServer(t, dir)
	sessions := t.TempDir()
	code, first, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", sessions, "list the allowed directories")
	if code != 0 || !strings.Contains(first, "list_allowed_directories returned:") || !strings.Contains(first, dir) {
		t.Fatalf("first run: exit %d, stdout %q: %s", code, first, errOut)
	}
	code, out, errOut := runAgent(t, agentRunOpts{}, "--session-dir", sessions, "--resume", "last", "and list its files")
	if code != 0 {
		t.Fatalf("follow-up: exit %d: %s", code, errOut)
	}
	if out == first || !strings.HasPrefix(out, "mcp__filesystem__list_directory returned:") || !strings.Contains(out, "[FILE] notes.txt") {
		t.Errorf("the follow-up answered %q (the first answer was %q); want mcp__filesystem__list_directory's listing with notes.txt", out, first)
	}
}
