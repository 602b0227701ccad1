//go:build unix

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/internal/claudecode"
)

// claudeCode is a real coding agent, Claude Code (installed pinned by
// .ci/claude-code), with a home and a project folder of its own.
type claudeCode struct {
	bin, project string
	env          []string
}

// newClaudeCode sets Claude Code up. Without it (or without the real MCP
// servers) the test is skipped, except under CI, where both are required;
// under -short it is skipped.
func newClaudeCode(t *testing.T) *claudeCode {
	t.Helper()
	skipInShort(t)
	bin, err := filepath.Abs(filepath.Join("..", "..", ".ci", "claude", "node_modules", ".bin", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		requireInstalled(t, "Claude Code is", ".ci/claude-code", err)
	}
	realServerBin(t)
	home := t.TempDir()
	c := &claudeCode{bin: bin, project: filepath.Join(home, "project"), env: claudecode.Env(home)}
	for _, dir := range []string{c.project, filepath.Join(home, "tmp")} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func (c *claudeCode) command(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(t.Context(), c.bin, args...)
	cmd.Dir, cmd.Env = c.project, c.env
	return cmd
}

// mcpAdd runs claude mcp add --scope user with args.
func (c *claudeCode) mcpAdd(t *testing.T, args ...string) {
	t.Helper()
	out, err := c.command(t, append([]string{"mcp", "add", "--scope", "user"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("claude mcp add %v: %v\n%s", args, err, out)
	}
}

// filesystemServer writes a servers file with the real filesystem server
// on files.
func filesystemServer(t *testing.T, files string) string {
	return writeMCPConfig(t, map[string]any{
		"filesystem": map[string]any{"command": filepath.Join(realServerBin(t), "mcp-server-filesystem"), "args": []string{files}},
	})
}

// addStdioGateway configures the gateway over stdio as the MCP server
// named toolshelf: this test binary run as toolshelf serve --mcp mcp,
// with flags (see mainEnv).
func (c *claudeCode) addStdioGateway(t *testing.T, mcp string, flags ...string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	serve, err := json.Marshal(append([]string{"serve", "--mcp", mcp, "--metrics", "off"}, flags...))
	if err != nil {
		t.Fatal(err)
	}
	c.mcpAdd(t, "toolshelf", "-e", mainEnv+"="+string(serve), "--", exe, "-test.run=^$")
}

// TestClaudeCodeListsTheGateway: Claude Code's MCP client connects to the
// gateway, offline, and claude mcp list reports it connected: over stdio,
// and over HTTP on both surfaces with the gateway's token. Without the
// token it is refused.
func TestClaudeCodeListsTheGateway(t *testing.T) {
	c := newClaudeCode(t)
	mcp := filesystemServer(t, t.TempDir())
	c.addStdioGateway(t, mcp)
	const token = "toolshelf-test-token"
	url := serveHTTP(t, "--mcp", mcp, "--token", token, "--metrics", "off")
	c.mcpAdd(t, "--transport", "http", "toolshelf-http", url, "--header", "Authorization: Bearer "+token)
	c.mcpAdd(t, "--transport", "http", "toolshelf-direct", url+"/direct", "--header", "Authorization: Bearer "+token)
	c.mcpAdd(t, "--transport", "http", "toolshelf-no-token", url)
	out, err := c.command(t, "mcp", "list").CombinedOutput()
	if err != nil {
		t.Fatalf("claude mcp list: %v\n%s", err, out)
	}
	for _, want := range []string{
		`toolshelf: .* - ✔ Connected`,
		`toolshelf-http: ` + regexp.QuoteMeta(url) + ` \(HTTP\) - ✔ Connected`,
		`toolshelf-direct: ` + regexp.QuoteMeta(url+"/direct") + ` \(HTTP\) - ✔ Connected`,
		`toolshelf-no-token: .* - ✘ .*send Authorization: Bearer`,
	} {
		if !regexp.MustCompile(`(?m)^` + want + `.*$`).Match(out) {
			t.Errorf("claude mcp list has no line %q:\n%s", want, out)
		}
	}
}

// serveHTTP runs toolshelf serve --http on a free loopback port with args
// until the test ends, and returns the URL of its meta surface.
func serveHTTP(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan struct{})
	stderr := &watcher{marker: "toolshelf gateway on", fn: func() { close(listening) }}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, append([]string{"serve", "--http", "127.0.0.1:0"}, args...), strings.NewReader(""), io.Discard, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-listening:
	case code := <-done:
		t.Fatalf("serve exited %d: %s", code, stderr.String())
	}
	m := regexp.MustCompile(`gateway on (http://\S+/mcp) `).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no address in %q", stderr.String())
	}
	return m[1]
}

// TestClaudeCodeCallsThroughTheGateway runs Claude Code end to end,
// offline: claude -p against toolshelf emulate --script. The scripted
// model searches with the gateway's tool_search, reads a file with its
// call_tool and answers; the file's content, which the script does not
// hold, comes back from the real filesystem server through the gateway
// into Claude Code's output. Every request Claude Code sends is accepted
// the first time: none is refused for a beta or a field the real API
// takes. Claude Code's own tool search decides how the gateway's two
// tools reach the model: declared directly (ENABLE_TOOL_SEARCH=false),
// declared directly once count_tokens has shown them small (auto), or
// deferred behind its ToolSearch tool (the default), which the script
// then calls first.
func TestClaudeCodeCallsThroughTheGateway(t *testing.T) {
	toolSearch := map[string]any{"tool_calls": []any{map[string]any{"name": "ToolSearch",
		"arguments": map[string]any{"query": "select:mcp__toolshelf__tool_search,mcp__toolshelf__call_tool"}}}}
	for _, c := range []struct {
		name string
		env  []string // ENABLE_TOOL_SEARCH, when set
		// first are replies before the gateway's tools are called;
		// counts is how many count_tokens requests Claude Code sends.
		first  []any
		counts int
	}{
		{name: "declared", env: []string{"ENABLE_TOOL_SEARCH=false"}},
		{name: "counted", env: []string{"ENABLE_TOOL_SEARCH=auto"}, counts: 1},
		{name: "deferred", first: []any{toolSearch}},
	} {
		t.Run(c.name, func(t *testing.T) {
			claudeCodeEndToEnd(t, c.env, c.first, c.counts)
		})
	}
}

func claudeCodeEndToEnd(t *testing.T, env []string, first []any, counts int) {
	files, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const content = "The filesystem server read this line from disk for the gateway."
	note := filepath.Join(files, "note.txt")
	if err := os.WriteFile(note, []byte(content+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const answer = "I read note.txt through the toolshelf gateway."
	replies := append(slices.Clip(first),
		map[string]any{"tool_calls": []any{map[string]any{"name": "mcp__toolshelf__tool_search",
			"arguments": map[string]any{"query": "read the contents of a text file"}}}},
		map[string]any{"tool_calls": []any{map[string]any{"name": "mcp__toolshelf__call_tool",
			"arguments": map[string]any{"name": "mcp__filesystem__read_text_file", "arguments": map[string]any{"path": note}}}}},
		map[string]any{"text": answer})
	scriptPath := writeScript(t, replies...)
	c := newClaudeCode(t)
	c.addStdioGateway(t, filesystemServer(t, files))
	base, emuLog := emulateScript(t, scriptPath)

	cmd := c.command(t, "-p", "--output-format", "stream-json", "--verbose", "--allowedTools", "mcp__toolshelf",
		"--", "Read note.txt through the toolshelf gateway")
	cmd.Env = append(append(slices.Clip(cmd.Env), "ANTHROPIC_BASE_URL="+base, "ANTHROPIC_API_KEY=sk-toolshelf-test"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("claude -p: %v\n%s\n%s\nemulator:\n%s", err, stderr.Bytes(), out, emuLog.String())
	}

	var calls []string
	results := map[string]string{} // tool_use id → result text
	ids := map[string]string{}     // tool name → tool_use id
	var result *claudecode.Event
	for line := range bytes.Lines(out) {
		var ev claudecode.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("a line of stream-json is not JSON: %v\n%s", err, line)
		}
		switch ev.Type {
		case "system":
			if ev.Subtype != "init" {
				continue
			}
			if !slices.Contains(ev.Tools, "mcp__toolshelf__tool_search") || !slices.Contains(ev.Tools, "mcp__toolshelf__call_tool") {
				t.Errorf("the gateway's tools are not offered: %v", ev.Tools)
			}
			if !slices.ContainsFunc(ev.MCPServers, func(s claudecode.Server) bool { return s.Name == "toolshelf" && s.Status == "connected" }) {
				t.Errorf("the gateway is not connected: %+v", ev.MCPServers)
			}
		case "assistant", "user":
			for _, b := range ev.Message.Content {
				switch b.Type {
				case "tool_use":
					calls = append(calls, b.Name)
					ids[b.Name] = b.ID
				case "tool_result":
					if b.IsError {
						t.Errorf("tool %s failed: %s", b.ToolUseID, b.Text())
					}
					results[b.ToolUseID] = b.Text()
				}
			}
		case "result":
			result = &ev
		}
	}
	want := []string{"mcp__toolshelf__tool_search", "mcp__toolshelf__call_tool"}
	if first != nil {
		want = append([]string{"ToolSearch"}, want...)
	}
	if !slices.Equal(calls, want) {
		t.Fatalf("Claude Code called %v, want %v\n%s", calls, want, out)
	}
	if found := results[ids["mcp__toolshelf__tool_search"]]; !strings.Contains(found, "## mcp__filesystem__read_text_file") {
		t.Errorf("tool_search did not find the filesystem server's read_text_file:\n%s", found)
	}
	if read := results[ids["mcp__toolshelf__call_tool"]]; !strings.Contains(read, content) {
		t.Errorf("call_tool's result lacks the file's content %q:\n%s", content, read)
	}
	if result == nil || result.Subtype != "success" || result.IsError || result.Result != answer {
		t.Errorf("Claude Code's result %+v, want success with %q", result, answer)
	}
	// One request per scripted reply (and the expected counts), each
	// answered 200 at once.
	log := strings.TrimSpace(emuLog.String())
	ok := regexp.MustCompile(`^#\d+ anthropic-messages claude-\S+ 200 (count_tokens )?input=`)
	requests, counted := 0, 0
	for line := range strings.SplitSeq(log, "\n") {
		switch {
		case !ok.MatchString(line):
			t.Errorf("the emulator refused a request of Claude Code: %s", line)
		case strings.Contains(line, " count_tokens "):
			counted++
		default:
			requests++
		}
	}
	if requests != len(replies) || counted != counts {
		t.Errorf("the emulator's log, want %d requests and %d counts:\n%s", len(replies), counts, log)
	}
}

// TestClaudeCodeCallsDirectOverStdio runs claude -p, offline, against the
// gateway's direct surface over stdio: the scripted model calls the real
// filesystem server's read_text_file by the name Claude Code gives it
// (mcp__toolshelf__mcp__filesystem__read_text_file) on the first try,
// and the file's content, which the script does not hold, comes back
// into Claude Code's output. Claude Code lists the gateway's tools once,
// right after it starts the gateway, while the filesystem server is still
// starting; before the direct surface's first list waited for it, that
// list was empty and the call failed with "No such tool available".
// Claude Code's own tool search decides how the tools reach the model:
// declared directly (ENABLE_TOOL_SEARCH=false), or deferred behind its
// ToolSearch tool (the default), which the script then calls first.
func TestClaudeCodeCallsDirectOverStdio(t *testing.T) {
	const name = "mcp__toolshelf__mcp__filesystem__read_text_file"
	for _, c := range []struct {
		name  string
		env   []string
		first []any
	}{
		{name: "declared", env: []string{"ENABLE_TOOL_SEARCH=false"}},
		{name: "deferred", first: []any{map[string]any{"tool_calls": []any{map[string]any{"name": "ToolSearch",
			"arguments": map[string]any{"query": "select:" + name}}}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			claudeCodeDirect(t, name, c.env, c.first)
		})
	}
}

func claudeCodeDirect(t *testing.T, name string, env []string, first []any) {
	files, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const content = "The direct surface read this line from disk on the first try."
	note := filepath.Join(files, "note.txt")
	if err := os.WriteFile(note, []byte(content+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const answer = "I read note.txt through the direct surface."
	replies := append(slices.Clip(first),
		map[string]any{"tool_calls": []any{map[string]any{"name": name, "arguments": map[string]any{"path": note}}}},
		map[string]any{"text": answer})
	scriptPath := writeScript(t, replies...)
	c := newClaudeCode(t)
	c.addStdioGateway(t, filesystemServer(t, files), "--surface", "direct")
	base, emuLog := emulateScript(t, scriptPath)

	cmd := c.command(t, "-p", "--output-format", "stream-json", "--verbose", "--allowedTools", "mcp__toolshelf",
		"--", "Read note.txt through the toolshelf gateway")
	cmd.Env = append(append(slices.Clip(cmd.Env), "ANTHROPIC_BASE_URL="+base, "ANTHROPIC_API_KEY=sk-toolshelf-test"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("claude -p: %v\n%s\n%s\nemulator:\n%s", err, stderr.Bytes(), out, emuLog.String())
	}
	var calls []string
	var read string
	var result *claudecode.Event
	for line := range bytes.Lines(out) {
		var ev claudecode.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("a line of stream-json is not JSON: %v\n%s", err, line)
		}
		switch ev.Type {
		case "system":
			if ev.Subtype == "init" && !slices.Contains(ev.Tools, name) {
				t.Errorf("Claude Code's tools lack the upstream's %s: %v", name, ev.Tools)
			}
		case "assistant", "user":
			for _, b := range ev.Message.Content {
				switch b.Type {
				case "tool_use":
					calls = append(calls, b.Name)
				case "tool_result":
					if b.IsError {
						t.Errorf("tool %s failed: %s", b.ToolUseID, b.Text())
					}
					read += b.Text()
				}
			}
		case "result":
			result = &ev
		}
	}
	want := []string{name}
	if first != nil {
		want = append([]string{"ToolSearch"}, want...)
	}
	if !slices.Equal(calls, want) {
		t.Fatalf("Claude Code called %v, want %v\n%s", calls, want, out)
	}
	if !strings.Contains(read, content) {
		t.Errorf("the tool results lack the file's content %q:\n%s", content, read)
	}
	if result == nil || result.Subtype != "success" || result.IsError || result.Result != answer {
		t.Errorf("Claude Code's result %+v, want success with %q", result, answer)
	}
}

// emulateScript runs toolshelf emulate --script on a free loopback port
// until the test ends; it returns the base URL and the request log.
func emulateScript(t *testing.T, script string) (string, *watcher) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan struct{})
	stdout, stderr := &watcher{marker: "emulator listening", fn: func() { close(listening) }}, &watcher{}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"emulate", "--listen", "127.0.0.1:0", "--script", script}, strings.NewReader(""), stdout, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-listening:
	case code := <-done:
		t.Fatalf("emulate exited %d: %s", code, stderr.String())
	}
	m := regexp.MustCompile(`listening on (http://\S+)`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no address in %q", stdout.String())
	}
	return m[1], stderr
}
