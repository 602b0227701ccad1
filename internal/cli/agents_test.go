//go:build unix

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/internal/claudecode"
)

// The coding agents besides Claude Code (installed pinned by .ci/agents)
// run one round through the gateway against toolshelf emulate --script,
// offline: the scripted model searches with the gateway's tool_search,
// reads a file with its call_tool and answers. The file's content, which
// the script does not hold, must come back from the real filesystem
// server through the gateway into the agent's output, and the emulator
// must have answered every request the agent sent 200 the first time.

// agentRound is one such round: a temp home and project, a file for the
// filesystem server to read, and the emulator playing a script.
type agentRound struct {
	bin, home, project string
	note, content      string
	answer             string
	mcp                string // the gateway's servers file
	base               string // the emulator's base URL
	emuLog             *watcher
	replies            int
	serveFlags         []string // serve's flags besides --mcp and --metrics
}

// newAgentRound sets up a round for the agent binary name under
// .ci/agents.d, whose scripted model calls search then call (the names
// the agent gives the gateway's tools). Without the agent (or the real MCP
// servers) the test is skipped, except under CI.
func newAgentRound(t *testing.T, name, search, call string) *agentRound {
	return newAgentRoundWith(t, name, nil, map[string]any{"name": search}, map[string]any{"name": call})
}

// newAgentRoundWith is newAgentRound with replies before the gateway's
// tools are called (first) and the calls' name fields (search, call:
// name, and namespace where the agent uses one).
func newAgentRoundWith(t *testing.T, name string, first []any, search, call map[string]any) *agentRound {
	return newAgentRoundScript(t, name, nil, func(note string) []any {
		return append(slices.Clip(first),
			map[string]any{"tool_calls": []any{with(search, "arguments", map[string]any{"query": "read the contents of a text file"})}},
			map[string]any{"tool_calls": []any{with(call, "arguments",
				map[string]any{"name": "mcp__filesystem__read_text_file", "arguments": map[string]any{"path": note}})}})
	})
}

// newAgentRoundScript is newAgentRound with serve's extra flags and the
// replies before the answer, made for the note's path.
func newAgentRoundScript(t *testing.T, name string, serveFlags []string, calls func(note string) []any) *agentRound {
	t.Helper()
	skipInShort(t)
	bin, err := filepath.Abs(filepath.Join("..", "..", ".ci", "agents.d", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		requireInstalled(t, name+" is", ".ci/agents", err)
	}
	realServerBin(t)
	files, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &agentRound{bin: bin, home: home, project: filepath.Join(home, "project"),
		note:    filepath.Join(files, "note.txt"),
		content: "The filesystem server read this line from disk for the gateway.",
		answer:  "I read note.txt through the toolshelf gateway.",
		mcp:     filesystemServer(t, files)}
	for _, dir := range []string{r.project, filepath.Join(home, "tmp")} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(r.note, []byte(r.content+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.serveFlags = serveFlags
	replies := append(calls(r.note), map[string]any{"text": r.answer})
	r.replies = len(replies)
	scriptPath := writeScript(t, replies...)
	r.base, r.emuLog = emulateScript(t, scriptPath)
	return r
}

// with returns a copy of m with one more key.
func with(m map[string]any, k string, v any) map[string]any {
	out := maps.Clone(m)
	out[k] = v
	return out
}

// env is the agent's whole environment: nothing of the developer's
// configuration or keys, its home and state under the round's home.
func (r *agentRound) env(extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"), // node, for the agents and the filesystem server
		"HOME=" + r.home,
		"XDG_CONFIG_HOME=" + filepath.Join(r.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(r.home, ".local", "state"),
		"XDG_DATA_HOME=" + filepath.Join(r.home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(r.home, ".cache"),
		"TMPDIR=" + filepath.Join(r.home, "tmp"),
	}, extra...)
}

// gateway is the command that runs the gateway over stdio on the round's
// servers: this test binary as toolshelf serve (see mainEnv), and the
// environment variable that makes it so.
func (r *agentRound) gateway(t *testing.T) (exe string, args []string, envKey, envValue string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	serve, err := json.Marshal(append([]string{"serve", "--mcp", r.mcp, "--metrics", "off"}, r.serveFlags...))
	if err != nil {
		t.Fatal(err)
	}
	return exe, []string{"-test.run=^$"}, mainEnv, string(serve)
}

// run runs the agent with args in the project folder and returns its
// standard output.
func (r *agentRound) run(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), r.bin, args...)
	cmd.Dir, cmd.Env = r.project, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s\n%s\nemulator:\n%s", filepath.Base(r.bin), args, err, stderr.Bytes(), out, r.emuLog.String())
	}
	return out
}

// checkLog asserts the emulator's log: one request per scripted reply on
// api, each answered 200.
func (r *agentRound) checkLog(t *testing.T, api string) {
	t.Helper()
	log := strings.TrimSpace(r.emuLog.String())
	ok := regexp.MustCompile(`^#\d+ ` + regexp.QuoteMeta(api) + ` \S+ 200 input=`)
	requests := 0
	for line := range strings.SplitSeq(log, "\n") {
		if !ok.MatchString(line) {
			t.Errorf("the emulator refused a request, or it is not %s: %s", api, line)
		}
		requests++
	}
	if requests != r.replies {
		t.Errorf("the emulator's log, want %d requests:\n%s", r.replies, log)
	}
}

// writeAgentConfig writes v as JSON to path, making its folder.
func writeAgentConfig(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestQwenCodeCallsThroughTheGateway: Qwen Code, over Chat Completions,
// with the gateway as an MCP server from its user settings.
func TestQwenCodeCallsThroughTheGateway(t *testing.T) {
	r := newAgentRound(t, "qwen", "mcp__toolshelf__tool_search", "mcp__toolshelf__call_tool")
	exe, args, key, value := r.gateway(t)
	writeAgentConfig(t, filepath.Join(r.home, ".qwen", "settings.json"), map[string]any{
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
		"telemetry":  map[string]any{"enabled": false},
		"general":    map[string]any{"enableAutoUpdate": false},
		"mcpServers": map[string]any{"toolshelf": map[string]any{"command": exe, "args": args, "env": map[string]string{key: value}}},
	})
	out := r.run(t, r.env("QWEN_CODE_SUPPRESS_YOLO_WARNING=1"),
		"--auth-type", "openai", "--openai-base-url", r.base+"/v1", "--openai-api-key", "sk-toolshelf-test",
		"--model", "gpt-5.5", "--approval-mode", "yolo", "--output-format", "stream-json",
		"Read note.txt through the toolshelf gateway")
	var calls []string
	results := map[string]string{}
	ids := map[string]string{}
	var result *claudecode.Event
	for line := range bytes.Lines(out) {
		var ev claudecode.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("a line of stream-json is not JSON: %v\n%s", err, line)
		}
		switch ev.Type {
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
	if want := "mcp__toolshelf__tool_search mcp__toolshelf__call_tool"; strings.Join(calls, " ") != want {
		t.Fatalf("Qwen Code called %v, want %s\n%s", calls, want, out)
	}
	if found := results[ids["mcp__toolshelf__tool_search"]]; !strings.Contains(found, "## mcp__filesystem__read_text_file") {
		t.Errorf("tool_search did not find the filesystem server's read_text_file:\n%s", found)
	}
	if read := results[ids["mcp__toolshelf__call_tool"]]; !strings.Contains(read, r.content) {
		t.Errorf("call_tool's result lacks the file's content %q:\n%s", r.content, read)
	}
	if result == nil || result.Subtype != "success" || result.IsError || result.Result != r.answer {
		t.Errorf("Qwen Code's result %+v, want success with %q", result, r.answer)
	}
	r.checkLog(t, "openai-chat")
}

// ocEvent is a line of opencode run --format json, the fields this test
// reads.
type ocEvent struct {
	Type string `json:"type"`
	Part struct {
		Tool  string `json:"tool"`
		Text  string `json:"text"`
		State struct {
			Status string `json:"status"`
			Output string `json:"output"`
		} `json:"state"`
	} `json:"part"`
}

// TestOpencodeCallsThroughTheGateway: opencode, over Anthropic Messages
// (with the betas it sends), with the gateway as a local MCP server from
// its config. --title keeps it from asking the model for a session title,
// a request the script does not answer.
func TestOpencodeCallsThroughTheGateway(t *testing.T) {
	r := newAgentRound(t, "opencode", "toolshelf_tool_search", "toolshelf_call_tool")
	exe, args, key, value := r.gateway(t)
	writeAgentConfig(t, filepath.Join(r.home, ".config", "opencode", "opencode.json"), map[string]any{
		"autoupdate": false,
		"share":      "disabled",
		"model":      "anthropic/claude-sonnet-4-5",
		"provider": map[string]any{"anthropic": map[string]any{"options": map[string]any{
			"baseURL": r.base + "/v1", "apiKey": "sk-toolshelf-test"}}},
		"mcp": map[string]any{"toolshelf": map[string]any{"type": "local",
			"command": append([]string{exe}, args...), "environment": map[string]string{key: value}}},
	})
	// No traffic beyond loopback: no update check, models.dev fetch or
	// share, and the npm registry opencode installs its plugin package
	// from at start is a closed loopback port.
	out := r.run(t, r.env("OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "BUN_CONFIG_REGISTRY=http://127.0.0.1:9/", "NPM_CONFIG_REGISTRY=http://127.0.0.1:9/",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_CLAUDE_CODE=1"),
		"run", "--pure", "--format", "json", "--auto", "--title", "toolshelf gateway test", "Read note.txt through the toolshelf gateway")
	var calls, texts []string
	outputs := map[string]string{}
	for line := range bytes.Lines(out) {
		var ev ocEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("a line of opencode's json is not JSON: %v\n%s", err, line)
		}
		switch ev.Type {
		case "tool_use":
			calls = append(calls, ev.Part.Tool)
			if ev.Part.State.Status != "completed" {
				t.Errorf("tool %s: %s %s", ev.Part.Tool, ev.Part.State.Status, ev.Part.State.Output)
			}
			outputs[ev.Part.Tool] = ev.Part.State.Output
		case "text":
			texts = append(texts, ev.Part.Text)
		}
	}
	if want := "toolshelf_tool_search toolshelf_call_tool"; strings.Join(calls, " ") != want {
		t.Fatalf("opencode called %v, want %s\n%s", calls, want, out)
	}
	if found := outputs["toolshelf_tool_search"]; !strings.Contains(found, "## mcp__filesystem__read_text_file") {
		t.Errorf("tool_search did not find the filesystem server's read_text_file:\n%s", found)
	}
	if read := outputs["toolshelf_call_tool"]; !strings.Contains(read, r.content) {
		t.Errorf("call_tool's result lacks the file's content %q:\n%s", r.content, read)
	}
	if strings.Join(texts, "") != r.answer {
		t.Errorf("opencode answered %q, want %q", texts, r.answer)
	}
	r.checkLog(t, "anthropic-messages")
}

// cxEvent is a line of codex exec --json, the fields this test reads.
type cxEvent struct {
	Type string `json:"type"`
	Item struct {
		Type   string `json:"type"`
		Server string `json:"server"`
		Tool   string `json:"tool"`
		Status string `json:"status"`
		Text   string `json:"text"`
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"item"`
}

// tomlString is s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCodexCallsThroughTheGateway: Codex CLI, over Responses, with the
// gateway as an MCP server from its config.toml. Codex declares MCP
// tools as a namespace (mcp__toolshelf) deferred behind its own
// client-side tool_search, so the script first calls that search (a
// tool_search_call item), then the gateway's two tools by namespace.
func TestCodexCallsThroughTheGateway(t *testing.T) {
	const ns = "mcp__toolshelf"
	r := newAgentRoundWith(t, "codex",
		[]any{map[string]any{"tool_calls": []any{map[string]any{"type": "tool_search",
			"arguments": map[string]any{"query": "toolshelf gateway tool search", "limit": 8}}}}},
		map[string]any{"namespace": ns, "name": "tool_search"}, map[string]any{"namespace": ns, "name": "call_tool"})
	calls, results, texts := r.codex(t)
	if want := "toolshelf/tool_search toolshelf/call_tool"; strings.Join(calls, " ") != want {
		t.Fatalf("Codex called %v, want %s", calls, want)
	}
	if found := results["tool_search"]; !strings.Contains(found, "## mcp__filesystem__read_text_file") {
		t.Errorf("tool_search did not find the filesystem server's read_text_file:\n%s", found)
	}
	if read := results["call_tool"]; !strings.Contains(read, r.content) {
		t.Errorf("call_tool's result lacks the file's content %q:\n%s", r.content, read)
	}
	if strings.Join(texts, "") != r.answer {
		t.Errorf("Codex answered %q, want %q", texts, r.answer)
	}
	r.checkLog(t, "openai-responses")
}

// codex runs codex exec --json with the gateway as the MCP server named
// toolshelf and the emulator as its model provider, and returns the MCP
// tools it called (server/tool), each one's result text and its answer.
func (r *agentRound) codex(t *testing.T) (calls []string, results map[string]string, texts []string) {
	t.Helper()
	exe, args, key, value := r.gateway(t)
	codexHome := filepath.Join(r.home, ".codex")
	if err := os.Mkdir(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = tomlString(t, a)
	}
	// No traffic beyond loopback: no update check or analytics, no
	// plugin catalog (from GitHub and the ChatGPT backend, whose URL is a
	// closed loopback port). required = true, as the README says: Codex
	// gives an optional MCP server about a second to start before its
	// first turn, and a gateway still connecting its upstreams (on a busy
	// machine, under -race) takes longer, so the turn went out without
	// the gateway's tools.
	config := fmt.Sprintf(`model = "gpt-5.5"
model_provider = "emulator"
check_for_update_on_startup = false
chatgpt_base_url = "http://127.0.0.1:9/"

[analytics]
enabled = false

[features]
plugins = false
apps = false

[model_providers.emulator]
name = "toolshelf emulator"
base_url = %s
env_key = "TOOLSHELF_EMULATOR_KEY"
wire_api = "responses"

[mcp_servers.toolshelf]
command = %s
args = [%s]
env = { %s = %s }
default_tools_approval_mode = "approve"
required = true
`, tomlString(t, r.base+"/v1"), tomlString(t, exe), strings.Join(quoted, ", "), key, tomlString(t, value))
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	out := r.run(t, r.env("CODEX_HOME="+codexHome, "TOOLSHELF_EMULATOR_KEY=sk-toolshelf-test"),
		"exec", "--skip-git-repo-check", "--json", "Read note.txt through the toolshelf gateway")
	results = map[string]string{}
	for line := range bytes.Lines(out) {
		var ev cxEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("a line of codex exec --json is not JSON: %v\n%s", err, line)
		}
		if ev.Type != "item.completed" {
			continue
		}
		switch ev.Item.Type {
		case "mcp_tool_call":
			calls = append(calls, ev.Item.Server+"/"+ev.Item.Tool)
			if ev.Item.Status != "completed" || ev.Item.Result == nil {
				t.Errorf("tool %s: %s %+v", ev.Item.Tool, ev.Item.Status, ev.Item.Error)
				continue
			}
			var text []string
			for _, c := range ev.Item.Result.Content {
				text = append(text, c.Text)
			}
			results[ev.Item.Tool] = strings.Join(text, "\n")
		case "agent_message":
			texts = append(texts, ev.Item.Text)
		}
	}
	return calls, results, texts
}

// TestCodexCallsDirectThroughTheGateway: Codex CLI against serve
// --surface direct over stdio calls an upstream tool, found by its own
// tool_search, on the first try: the gateway's first tools/list already
// holds the filesystem server's tools.
func TestCodexCallsDirectThroughTheGateway(t *testing.T) {
	r := newAgentRoundScript(t, "codex", []string{"--surface", "direct"}, func(note string) []any {
		return []any{
			map[string]any{"tool_calls": []any{map[string]any{"type": "tool_search",
				"arguments": map[string]any{"query": "read text file", "limit": 8}}}},
			map[string]any{"tool_calls": []any{map[string]any{"namespace": "mcp__toolshelf", "name": "mcp__filesystem__read_text_file",
				"arguments": map[string]any{"path": note}}}},
		}
	})
	calls, results, texts := r.codex(t)
	if want := "toolshelf/mcp__filesystem__read_text_file"; strings.Join(calls, " ") != want {
		t.Fatalf("Codex called %v, want %s", calls, want)
	}
	if read := results["mcp__filesystem__read_text_file"]; !strings.Contains(read, r.content) {
		t.Errorf("read_text_file's result lacks the file's content %q:\n%s", r.content, read)
	}
	if strings.Join(texts, "") != r.answer {
		t.Errorf("Codex answered %q, want %q", texts, r.answer)
	}
	r.checkLog(t, "openai-responses")
}
