//go:build unix

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// geminiEvent is a line of Gemini CLI's stream-json output, the fields
// this test reads.
type geminiEvent struct {
	Type     string `json:"type"`
	Role     string `json:"role"`
	Content  string `json:"content"`
	ToolName string `json:"tool_name"`
	ToolID   string `json:"tool_id"`
	Status   string `json:"status"`
	Output   string `json:"output"`
}

// TestGeminiCLICallsThroughTheGateway: the real Gemini CLI (installed
// pinned by .ci/agents), speaking the Gemini API to toolshelf emulate with
// a scripted model, calls the gateway's tool_search and then call_tool,
// which reads a file through the real filesystem server; the file's
// content comes back in its output, and the emulator answered each of
// its requests 200.
func TestGeminiCLICallsThroughTheGateway(t *testing.T) {
	skipInShort(t)
	bin, err := filepath.Abs(filepath.Join("..", "..", ".ci", "agents.d", "node_modules", ".bin", "gemini"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		requireInstalled(t, "Gemini CLI is", ".ci/agents", err)
	}
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
	// Gemini CLI names an MCP server's tools mcp_<server>_<tool>.
	replies := []map[string]any{
		{"tool_calls": []any{map[string]any{"name": "mcp_toolshelf_tool_search",
			"arguments": map[string]any{"query": "read the contents of a text file"}}}},
		{"tool_calls": []any{map[string]any{"name": "mcp_toolshelf_call_tool",
			"arguments": map[string]any{"name": "mcp__filesystem__read_text_file", "arguments": map[string]any{"path": note}}}}},
		{"text": answer},
	}
	scriptPath := writeScript(t, replies...)
	base, emuLog := emulateScript(t, scriptPath)

	// A home of its own: the gateway (this test binary run as toolshelf
	// serve, see mainEnv) as the MCP server named toolshelf, trusted so
	// that headless calls run; no telemetry, statistics or update checks.
	home := t.TempDir()
	project := filepath.Join(home, "project")
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(project, 0o700); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	serve, err := json.Marshal([]string{"serve", "--mcp", filesystemServer(t, files), "--metrics", "off"})
	if err != nil {
		t.Fatal(err)
	}
	settings, err := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"toolshelf": map[string]any{
			"command": exe, "args": []string{"-test.run=^$"}, "env": map[string]string{mainEnv: string(serve)}, "trust": true}},
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"telemetry": map[string]any{"enabled": false},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(t.Context(), bin, "--model", "gemini-3.5-flash", "--approval-mode", "yolo",
		"--output-format", "stream-json", "--prompt", "Read note.txt through the toolshelf gateway")
	cmd.Dir = project
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), // node, for the CLI and the filesystem server
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"GEMINI_CLI_TRUST_WORKSPACE=true", // headless runs need a trusted folder
		"GOOGLE_GEMINI_BASE_URL=" + base,
		"GEMINI_API_KEY=toolshelf-test",
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gemini -p: %v\n%s\n%s\nemulator:\n%s", err, stderr.Bytes(), out, emuLog.String())
	}

	var calls []string
	results := map[string]geminiEvent{} // tool name → its result
	ids := map[string]string{}          // tool id → tool name
	var text strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev geminiEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue // a line of the CLI's own, not an event
		}
		switch ev.Type {
		case "tool_use":
			calls = append(calls, ev.ToolName)
			ids[ev.ToolID] = ev.ToolName
		case "tool_result":
			results[ids[ev.ToolID]] = ev
		case "message":
			if ev.Role == "assistant" {
				text.WriteString(ev.Content)
			}
		}
	}
	if want := []string{"mcp_toolshelf_tool_search", "mcp_toolshelf_call_tool"}; !slices.Equal(calls, want) {
		t.Fatalf("Gemini CLI called %v, want %v\n%s\n%s", calls, want, out, stderr.Bytes())
	}
	if found := results["mcp_toolshelf_tool_search"]; found.Status != "success" || !strings.Contains(found.Output, "## mcp__filesystem__read_text_file") {
		t.Errorf("tool_search did not find the filesystem server's read_text_file: %+v", found)
	}
	if read := results["mcp_toolshelf_call_tool"]; read.Status != "success" || !strings.Contains(read.Output, content) {
		t.Errorf("call_tool's result lacks the file's content %q: %+v", content, read)
	}
	if text.String() != answer {
		t.Errorf("Gemini CLI answered %q, want %q", text.String(), answer)
	}
	// One request per scripted reply, each answered 200.
	log := strings.TrimSpace(emuLog.String())
	ok := regexp.MustCompile(`^#\d+ gemini gemini-\S+ 200 input=`)
	lines := strings.Split(log, "\n")
	for _, line := range lines {
		if !ok.MatchString(line) {
			t.Errorf("the emulator refused a request of Gemini CLI: %s", line)
		}
	}
	if len(lines) != len(replies) {
		t.Errorf("the emulator's log, want %d requests:\n%s", len(replies), log)
	}
}
