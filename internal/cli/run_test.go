//go:build unix

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/session"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/transcript"
)

// testMCP writes an mcp.json with the stdio test server as "t" (deferred),
// its environment extended by env, and returns its path.
func testMCP(t *testing.T, env map[string]string) string {
	t.Helper()
	command, args, e := mcptest.Command(env)
	return writeMCPConfig(t, map[string]any{
		"t": map[string]any{"command": command, "args": args, "env": e, "description": "The test server"},
	})
}

// writeMCPConfig writes an mcp.json with the servers and returns its path.
func writeMCPConfig(t *testing.T, servers map[string]any) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// watcher is an output that calls a function once a line containing a
// marker has been written.
type watcher struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	fn     func()
}

func (w *watcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.fn != nil && strings.Contains(w.buf.String(), w.marker) {
		fn := w.fn
		w.fn = nil
		go fn()
	}
	return len(p), nil
}

func (w *watcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// agentRunOpts is one run of the agent command line.
type agentRunOpts struct {
	ctx            context.Context
	stdout, stderr *watcher
}

// runAgent runs "toolshelf run" with the emulator and returns the exit
// status, stdout and stderr.
func runAgent(t *testing.T, o agentRunOpts, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if o.ctx == nil {
		o.ctx = context.Background()
	}
	if o.stdout == nil {
		o.stdout = &watcher{}
	}
	if o.stderr == nil {
		o.stderr = &watcher{}
	}
	args = append([]string{"run", "--provider", "emulator"}, args...)
	code = Main(o.ctx, args, strings.NewReader(""), o.stdout, o.stderr)
	return code, o.stdout.String(), o.stderr.String()
}

// jsonLine is the part of a --json event the tests read.
type jsonLine struct {
	Type    string       `json:"type"`
	Turn    int          `json:"turn"`
	Call    *jsonCall    `json:"call"`
	Message *llm.Message `json:"message"`
}

func parseEvents(t *testing.T, out string) []jsonLine {
	t.Helper()
	var evs []jsonLine
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev jsonLine
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON event: %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// checkConsistent opens the only session of dir and checks that every
// tool call has exactly one result; it returns the messages.
func checkConsistent(t *testing.T, dir string) []llm.Message {
	t.Helper()
	path, err := session.Latest(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(path, &session.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	msgs := s.Messages()
	results := map[string]int{}
	var calls []string
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleAssistant:
			for _, c := range m.ToolCalls() {
				calls = append(calls, c.ID)
			}
		case llm.RoleToolResult:
			results[m.ToolCallID]++
		}
	}
	for _, id := range calls {
		if results[id] != 1 {
			t.Errorf("call %s has %d results in the session", id, results[id])
		}
	}
	return msgs
}

// resultOf returns the text of the result of the last call of a tool.
func resultOf(msgs []llm.Message, name string) (text string, isErr, found bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Role == llm.RoleToolResult && m.ToolName == name {
			return llm.ContentText(m.Content, "\n"), m.IsError, true
		}
	}
	return "", false, false
}

// TestRunSearchesLoadsAndCalls: the emulator searches, the load is declared
// in a system message before the next request, and the loaded tool is
// called on the MCP server.
func TestRunSearchesLoadsAndCalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", testMCP(t, nil), "--session-dir", dir, "--json", "Echo the text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := parseEvents(t, out)
	at := func(pred func(jsonLine) bool) int { return slices.IndexFunc(evs, pred) }
	searched := at(func(e jsonLine) bool { return e.Type == "tool_end" && e.Call.Name == "tool_search" })
	declared := at(func(e jsonLine) bool {
		return e.Type == "message" && e.Message.Role == llm.RoleSystem &&
			slices.ContainsFunc(e.Message.ToolsAdded, func(d llm.Tool) bool { return d.Name == "mcp__t__echo" })
	})
	called := at(func(e jsonLine) bool {
		return e.Type == "message" && e.Message.Role == llm.RoleAssistant &&
			slices.ContainsFunc(e.Message.ToolCalls(), func(c llm.ToolCall) bool { return c.Name == "mcp__t__echo" })
	})
	result := at(func(e jsonLine) bool { return e.Type == "tool_end" && e.Call.Name == "mcp__t__echo" })
	if searched < 0 || declared < 0 || called < 0 || result < 0 || !(searched < declared && declared < called && called < result) {
		t.Fatalf("events out of order: search %d, declaration %d, call %d, result %d\n%s", searched, declared, called, result, out)
	}
	// The declaration opens the request that calls the tool.
	if evs[declared].Turn != evs[called].Turn || evs[declared].Turn != evs[searched].Turn+1 {
		t.Errorf("declared in turn %d, called in turn %d, searched in turn %d", evs[declared].Turn, evs[called].Turn, evs[searched].Turn)
	}
	if got := llm.ContentText(evs[result].Message.Content, ""); !strings.HasPrefix(got, "echo: ") || evs[result].Message.IsError {
		t.Errorf("echo's result %q", got)
	}
	msgs := checkConsistent(t, dir)
	if text, _, _ := resultOf(msgs, "mcp__t__echo"); !strings.HasPrefix(text, "echo: ") {
		t.Errorf("the session holds echo's result %q", text)
	}
}

// TestRunTextOutput: text mode streams the answer to stdout and the tool
// activity to stderr, and names the session.
func TestRunTextOutput(t *testing.T) {
	t.Parallel()
	code, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", testMCP(t, nil), "--session-dir", t.TempDir(), "Echo the text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "mcp__t__echo returned:\necho: ") {
		t.Errorf("stdout %q", out)
	}
	for _, want := range []string{"· declared +tool_search", "→ tool_search ", "· declared +mcp__t__echo", "→ mcp__t__echo ", "← mcp__t__echo: echo:", "session "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestRunCrashMidCall: a server that exits during a call gives the model an
// error result; the turn ends, the session keeps every call and result, and
// the next run's call reconnects.
func TestRunCrashMidCall(t *testing.T) {
	t.Parallel()
	dir, mcp := t.TempDir(), testMCP(t, nil)
	code, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "Exit during the call")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "mcp__t__crash failed:") || !strings.Contains(out, "next call reconnects") {
		t.Errorf("stdout %q", out)
	}
	msgs := checkConsistent(t, dir)
	if text, isErr, _ := resultOf(msgs, "mcp__t__crash"); !isErr || !strings.Contains(text, "next call reconnects") {
		t.Errorf("crash result %q (error %v)", text, isErr)
	}
	code, out, errOut = runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "--resume", "last", "Return the process id")
	if code != 0 || !strings.HasPrefix(out, "mcp__t__pid returned:") {
		t.Fatalf("exit %d, stdout %q: %s", code, out, errOut)
	}
	msgs = checkConsistent(t, dir)
	if text, isErr, _ := resultOf(msgs, "mcp__t__pid"); isErr || text == "" {
		t.Errorf("pid result %q (error %v)", text, isErr)
	}
}

// TestRunCancelDuringCall: cancelling (Ctrl-C) while a tool hangs ends the
// run at once with the call answered as cancelled; the session stays
// consistent and can be resumed.
func TestRunCancelDuringCall(t *testing.T) {
	t.Parallel()
	dir, mcp := t.TempDir(), testMCP(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &watcher{marker: "→ mcp__t__hang", fn: cancel}
	code, _, errOut := runAgent(t, agentRunOpts{ctx: ctx, stderr: stderr}, "--mcp", mcp, "--session-dir", dir, "Never answer")
	if code != 1 || !strings.Contains(errOut, "cancelled; the session keeps everything") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	msgs := checkConsistent(t, dir)
	if text, isErr, found := resultOf(msgs, "mcp__t__hang"); !found || !isErr || !strings.Contains(text, "cancelled") {
		t.Errorf("hang result %q (error %v, found %v)", text, isErr, found)
	}
	code, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "--resume", "last", "Echo the text")
	if code != 0 || !strings.HasPrefix(out, "mcp__t__echo returned:") {
		t.Fatalf("resume after cancel: exit %d, stdout %q: %s", code, out, errOut)
	}
	checkConsistent(t, dir)
}

// TestRunResumeWhileServerConnects: a resumed session declares the tools
// search loaded before, without removing or re-adding them, although their
// server only finishes starting after the session has opened.
func TestRunResumeWhileServerConnects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", testMCP(t, nil), "--session-dir", dir, "Echo the text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	before := checkConsistent(t, dir)
	declared := transcript.CurrentTools(before)
	if !slices.ContainsFunc(declared, func(d llm.Tool) bool { return d.Name == "mcp__t__echo" }) {
		t.Fatalf("the first run did not load echo: %v", declared)
	}

	// The server of the resumed run waits at a gate, opened once the
	// resumed run's first request has been answered with a search.
	path, release := mcptest.Gate(t)
	stdout := &watcher{marker: `"type":"tool_start"`, fn: release}
	code, out, errOut := runAgent(t, agentRunOpts{stdout: stdout}, "--mcp", testMCP(t, map[string]string{mcptest.FIFOEnv: path}),
		"--session-dir", dir, "--resume", "last", "--json", "Echo the text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	after := checkConsistent(t, dir)
	for _, m := range after[len(before):] {
		for _, r := range m.ToolsRemoved {
			t.Errorf("the resumed run removed %s", r.Name)
		}
		for _, a := range m.ToolsAdded {
			if slices.ContainsFunc(declared, func(d llm.Tool) bool { return d.Name == a.Name }) {
				t.Errorf("the resumed run declared %s again", a.Name)
			}
		}
	}
	if text, isErr, _ := resultOf(after[len(before):], "mcp__t__echo"); isErr || !strings.HasPrefix(text, "echo: ") {
		t.Errorf("echo after the resume: %q (error %v)\n%s", text, isErr, out)
	}
}

// TestChatRunsEachLineInOneSession: chat starts with a line naming its
// commands (always, on stderr: not only on a terminal, and never among the
// answers), reads prompts line by line (no terminal here), runs each in the
// same session, and answers its slash commands, /help among them.
func TestChatRunsEachLineInOneSession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := strings.NewReader("Echo the text\n/tools\n/servers\n/help\n/bogus arg\n/reselect a task\n\nReturn the process id\n")
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"chat", "--provider", "emulator", "--mcp", testMCP(t, nil), "--session-dir", dir}, in, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{
		"mcp__t__echo returned:\necho: \n",
		"tool_search\nmcp__t__echo\n",
		"SERVER  STATE      EXPOSURE  TOOLS  ERROR\nt       connected  deferred  10     \n",
		"mcp__t__pid returned:\n",
		"/tools    the active tools: what the model is told about\n/servers  the MCP servers: state, exposure, tool count, why one failed\n",
		"/help     this list\nAnything else is a prompt.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "/reselect") || strings.Contains(out.String(), chatBanner) {
		t.Errorf("stdout has /reselect without --select, or the banner:\n%s", out.String())
	}
	for _, want := range []string{chatBanner + "\n", "unknown command /bogus; /help lists the commands\n",
		"/reselect needs --select: this chat does not select tools\n"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
	msgs := checkConsistent(t, dir)
	var users []string
	for _, m := range msgs {
		if m.Role == llm.RoleUser {
			users = append(users, llm.ContentText(m.Content, ""))
		}
	}
	if !slices.Equal(users, []string{"Echo the text", "Return the process id"}) {
		t.Errorf("the session's prompts: %q", users)
	}
}

// ownCache gives the test a pattern cache of its own (an empty cache
// folder), so that a selection an earlier test, or an earlier run of the
// same test (-count), made is not found.
func ownCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
}

// TestRunSelect: with --select the model first picks tools from the
// catalog; only those are declared, after the head, and the lock is
// recorded in the session, so a resumed session keeps it until a prompt
// switches task. The same task in a new session is answered from the
// pattern cache, every time.
func TestRunSelect(t *testing.T) {
	ownCache(t)
	dir, mcp := t.TempDir(), testMCP(t, nil)
	code, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "--select", "Echo the text")
	if code != 0 || !strings.HasPrefix(out, "mcp__t__echo returned:") {
		t.Fatalf("exit %d, stdout %q: %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "· selected mcp__t__echo (model, 1 selection request)") || strings.Contains(errOut, "tool_search") {
		t.Errorf("stderr:\n%s", errOut)
	}
	msgs := checkConsistent(t, dir)
	if len(msgs[0].ToolsAdded) != 0 || len(msgs[1].ToolsAdded) != 1 || msgs[1].ToolsAdded[0].Name != "mcp__t__echo" {
		t.Errorf("head %+v, then %+v", msgs[0].ToolsAdded, msgs[1].ToolsAdded)
	}
	// Resumed: the lock holds for a follow-up, and a switch selects again.
	code, _, errOut = runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "--select", "--resume", "last", "echo it again")
	if code != 0 || strings.Contains(errOut, "selected") {
		t.Errorf("follow-up: exit %d:\n%s", code, errOut)
	}
	code, out, errOut = runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "--select", "--resume", "last", "New task: return the process id")
	if code != 0 || !strings.Contains(errOut, `selecting again: the prompt says "new task"`) || !strings.HasPrefix(out, "mcp__t__pid returned:") {
		t.Errorf("switch: exit %d, stdout %q:\n%s", code, out, errOut)
	}
	path, _ := session.Latest(dir)
	s, err := session.Open(path, &session.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var locks []string
	for _, e := range s.Branch() {
		if e.Type == toolshelf.SelectionEntry {
			locks = append(locks, string(e.Data))
		}
	}
	if len(locks) != 2 || !strings.Contains(locks[1], "mcp__t__pid") {
		t.Errorf("selection entries: %v", locks)
	}
	for range 2 {
		code, out, errOut = runAgent(t, agentRunOpts{}, "--mcp", mcp, "--no-session", "--select", "Echo the text")
		if code != 0 || !strings.Contains(errOut, "· selected mcp__t__echo (cache, 0 selection requests)") || !strings.HasPrefix(out, "mcp__t__echo returned:") {
			t.Errorf("the same task again: exit %d, stdout %q:\n%s", code, out, errOut)
		}
	}
}

// TestRunSelectRecordsMetrics: the selection requests get a record of
// their own, the agent's requests are marked select+lock, and toolUses
// counts the calls that order the next selection's catalog.
func TestRunSelectRecordsMetrics(t *testing.T) {
	ownCache(t)
	metrics := filepath.Join(t.TempDir(), "metrics.jsonl")
	mcp := testMCP(t, nil)
	code, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--no-session", "--select", "--metrics", metrics, "Echo the given text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := os.Open(metrics)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, bad, err := tokens.ReadLog(f)
	if err != nil || len(bad) > 0 {
		t.Fatalf("%v %v", bad, err)
	}
	var strategies []string
	for _, r := range records {
		strategies = append(strategies, r.Strategy)
	}
	if !slices.Equal(strategies, []string{"selection", "select+lock", "select+lock"}) || records[0].Input+records[0].CacheWrite+records[0].CacheRead == 0 {
		t.Errorf("records: %+v", records)
	}
}

// TestChatSelectAsks: in chat, a selection that finds nothing asks the
// user, and the answer (the next line) selects the tools.
func TestChatSelectAsks(t *testing.T) {
	ownCache(t)
	in := strings.NewReader("do the needful\nEcho the text\n/help\n/reselect Return the process id\n")
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"chat", "--provider", "emulator", "--mcp", testMCP(t, nil), "--no-session",
		"--select", "--metrics", "off"}, in, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "No tool seemed to fit the request.") ||
		!strings.Contains(errOut.String(), "· selected mcp__t__echo (ask, 2 selection requests)") {
		t.Errorf("stderr:\n%s", errOut.String())
	}
	// /reselect is a prompt for the selection, not an unknown command.
	if !strings.Contains(out.String(), "/reselect TASK  select the tools again, for a new task\n") ||
		!strings.Contains(errOut.String(), "selecting again: asked with /reselect") || strings.Contains(errOut.String(), "unknown command") {
		t.Errorf("/help and /reselect: stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
}

// TestMCPListJSON: mcp list --json reports each server's state, and why a
// server failed (with exit status 1).
func TestMCPListJSON(t *testing.T) {
	t.Parallel()
	mcp := writeMCPConfig(t, map[string]any{"broken": map[string]any{"command": "toolshelf-no-such-command"}})
	code, out, errOut := run(t, "mcp", "list", "--json", "--mcp", mcp)
	var got []serverJSON
	if err := json.Unmarshal([]byte(out), &got); code != 1 || err != nil || !strings.Contains(errOut, "broken (failed)") {
		t.Fatalf("exit %d, %v: %s%s", code, err, out, errOut)
	}
	if len(got) != 1 || got[0].Name != "broken" || got[0].State != "failed" || !strings.Contains(got[0].Error, "install \"toolshelf-no-such-command\"") {
		t.Errorf("servers %+v", got)
	}
}

// Flags that contradict each other fail with a usage error before any
// model or server starts.
func TestRunRefusesContradictoryFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-session", "--resume", "last", "hi"}, "--resume and --no-session cannot be used together"},
		{[]string{"--fork", "hi"}, "--fork needs --resume"},
	} {
		code, _, stderr := runAgent(t, agentRunOpts{}, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestMCPListShowsWholeErrorsAndFails: mcp list prints a failed server's
// whole error, however long, and exits 1 naming the servers that are not
// available; with every server connected it exits 0.
func TestMCPListShowsWholeErrorsAndFails(t *testing.T) {
	t.Parallel()
	command, args, env := mcptest.Command(nil)
	good := map[string]any{"command": command, "args": args, "env": env}
	mcp := writeMCPConfig(t, map[string]any{"broken": map[string]any{"command": "toolshelf-no-such-command"}, "t": good})
	code, out, errOut := run(t, "mcp", "list", "--mcp", mcp)
	if code != 1 || !strings.Contains(errOut, "1 of 2 MCP servers") || !strings.Contains(errOut, "broken (failed)") || strings.Contains(errOut, "t (") {
		t.Errorf("exit %d, stderr %q: want 1 and the failed server named", code, errOut)
	}
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "broken ") {
			line = l
		}
	}
	const tail = `install "toolshelf-no-such-command" or write its full path in "command"`
	if !strings.HasSuffix(line, tail) || len(line) < 200 || strings.Contains(line, "…") {
		t.Errorf("broken's line is not the whole error: %q", line)
	}
	code, out, errOut = run(t, "mcp", "list", "--mcp", writeMCPConfig(t, map[string]any{"t": good}))
	if code != 0 || !strings.Contains(out, "t       connected") {
		t.Errorf("all connected: exit %d: %s%s", code, out, errOut)
	}
}

// TestRunEndingBeforeServersConnectBlamesNoServer: a run that ends while a
// healthy server is still starting says nothing against the server (it
// was toolshelf that stopped).
func TestRunEndingBeforeServersConnectBlamesNoServer(t *testing.T) {
	t.Parallel()
	path, _ := mcptest.Gate(t) // never opened: the server is still starting when the run ends
	command, args, env := mcptest.Command(map[string]string{mcptest.FIFOEnv: path})
	mcp := writeMCPConfig(t, map[string]any{"t": map[string]any{"command": command, "args": args, "env": env, "exposure": "direct"}})
	code, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--no-session", "--mcp-wait", "0", "hello")
	if code != 0 || out == "" {
		t.Fatalf("exit %d, stdout %q: %s", code, out, errOut)
	}
	for _, bad := range []string{"connection failed", "starts an MCP server", "context canceled"} {
		if strings.Contains(errOut, bad) {
			t.Errorf("stderr has %q:\n%s", bad, errOut)
		}
	}
}

// TestRunResumeUsesTheSessionsServersFile: a session remembers the servers
// file it ran with, and --resume without --mcp uses it (the README's
// "run --resume last" used to find the session's tools "not available
// yet … Try again later"); --mcp names another, which the session then
// remembers. When the file is gone, the person is told exactly that, and
// the model that no server provides the tools — never to try again later.
func TestRunResumeUsesTheSessionsServersFile(t *testing.T) {
	t.Parallel()
	dir, mcp := t.TempDir(), testMCP(t, nil)
	code, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", dir, "Echo the text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	resume := func(args ...string) (string, string) {
		t.Helper()
		code, out, errOut := runAgent(t, agentRunOpts{}, append([]string{"--session-dir", dir, "--resume", "last"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		return out, errOut
	}
	if out, errOut := resume("Echo the text again"); !strings.HasPrefix(out, "mcp__t__echo returned:") {
		t.Errorf("resumed without --mcp: stdout %q\n%s", out, errOut)
	}

	other := testMCP(t, nil)
	if out, errOut := resume("--mcp", other, "Echo the text once more"); !strings.HasPrefix(out, "mcp__t__echo returned:") {
		t.Errorf("resumed with --mcp: stdout %q\n%s", out, errOut)
	}
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	out, errOut := resume("Echo the text")
	for _, want := range []string{
		"the session ran with the servers file " + other + ", which cannot be read now",
		"no MCP servers file: looked for ./.toolshelf/mcp.json and ",
		"the session's tools of mcp__t cannot be called: no servers file is in effect; name the servers file the session used with --mcp FILE",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	msgs := checkConsistent(t, dir)
	text, isErr, _ := resultOf(msgs, "mcp__t__echo")
	if want := `Tool "mcp__t__echo" is not available: no MCP server configured in this run provides the mcp__t tools.`; !isErr || text != want {
		t.Errorf("the call without a server: %q (error %v), want %q\nstdout %q", text, isErr, want, out)
	}
	if strings.Contains(out+errOut, "again later") {
		t.Errorf("told to try again later:\n%s%s", out, errOut)
	}
}

// TestNoServersFileSaysWhereItLooked: without --mcp and without a servers
// file, run answers (exit 0) after a note naming where it looked and how
// to make one, and mcp list, which has nothing to check, and serve, which
// has nothing to serve, fail (exit 1) saying the same (mcp list used to be
// silent, serve to name the places without the paths it tried).
func TestNoServersFileSaysWhereItLooked(t *testing.T) {
	t.Parallel()
	config, err := os.UserConfigDir()
	if err != nil {
		t.Fatal(err)
	}
	looked := "no MCP servers file: looked for ./.toolshelf/mcp.json and " + filepath.Join(config, "toolshelf", "mcp.json") +
		`; create one holding {"mcpServers": {"NAME": {"command": "PROGRAM", "args": ["ARG"]}}}, or name one with --mcp FILE`
	code, out, errOut := runAgent(t, agentRunOpts{}, "--no-session", "hello")
	if code != 0 || out == "" || !strings.Contains(errOut, "toolshelf: "+looked+"; running without MCP tools\n") {
		t.Errorf("run: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	for _, args := range [][]string{{"mcp", "list"}, {"serve"}} {
		code, out, errOut = run(t, args...)
		if code != 1 || out != "" || errOut != "toolshelf: "+looked+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// TestProviderErrorPrintedOnce: a provider's error ends the run (exit 1)
// and is printed once, by run and by chat (it used to be printed by the
// run's output and again on the way out).
func TestProviderErrorPrintedOnce(t *testing.T) {
	const message = "invalid x-api-key"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"authentication_error","message":%q}}`, message)
	}))
	defer srv.Close()
	t.Setenv("ANTHROPIC_API_KEY", "bad")
	args := []string{"--provider", "anthropic", "--base-url", srv.URL, "--no-session", "--metrics", "off", "--mcp", writeMCPConfig(t, map[string]any{})}
	var out, errOut bytes.Buffer
	code := Main(context.Background(), append(append([]string{"run"}, args...), "hello"), strings.NewReader(""), &out, &errOut)
	if code != 1 || strings.Count(errOut.String(), message) != 1 {
		t.Errorf("run: exit %d, the error printed %d times:\n%s", code, strings.Count(errOut.String(), message), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	code = Main(context.Background(), append([]string{"chat"}, args...), strings.NewReader("hello\n"), &out, &errOut)
	if code != 0 || strings.Count(errOut.String(), message) != 1 {
		t.Errorf("chat: exit %d, the error printed %d times:\n%s", code, strings.Count(errOut.String(), message), errOut.String())
	}
}

// TestRunExitsThreeWhenEveryServerFailed: a run whose configured servers
// all failed to connect answers without their tools and exits 3, saying
// so; one server that works is enough for 0.
func TestRunExitsThreeWhenEveryServerFailed(t *testing.T) {
	t.Parallel()
	broken := map[string]any{"command": "toolshelf-no-such-command"}
	code, _, errOut := runAgent(t, agentRunOpts{}, "--no-session", "--mcp", writeMCPConfig(t, map[string]any{"a": broken, "b": broken}), "Echo the text")
	if want := "toolshelf: every MCP server (a, b) failed to connect, so the answer had none of their tools"; code != exitNoServers || !strings.Contains(errOut, want) {
		t.Errorf("every server failed: exit %d, stderr:\n%s\nwant %d and %q", code, errOut, exitNoServers, want)
	}
	command, args, env := mcptest.Command(nil)
	code, _, errOut = runAgent(t, agentRunOpts{}, "--no-session", "--mcp", writeMCPConfig(t, map[string]any{"a": broken,
		"t": map[string]any{"command": command, "args": args, "env": env}}), "Echo the text")
	if code != 0 {
		t.Errorf("one server failed: exit %d, stderr:\n%s", code, errOut)
	}
}

// TestRunToolsNamedUpFrontAreWaitedFor: a tool --tools activates is waited
// for like a direct one: the first request declares it although its
// server is deferred and was still starting (it used to declare nothing).
func TestRunToolsNamedUpFrontAreWaitedFor(t *testing.T) {
	t.Parallel()
	path, release := mcptest.Gate(t)
	go release() // the server starts once the run has begun
	code, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", testMCP(t, map[string]string{mcptest.FIFOEnv: path}),
		"--no-session", "--tools", "+mcp__t__echo,-tool_search", "--json", "Echo the text")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var declared []string
	result := ""
	for _, e := range parseEvents(t, out) {
		switch {
		case e.Type == "message" && e.Message.Role == llm.RoleSystem && declared == nil:
			for _, d := range e.Message.ToolsAdded {
				declared = append(declared, d.Name)
			}
		case e.Type == "tool_end" && e.Call.Name == "mcp__t__echo" && !e.Message.IsError:
			result = llm.ContentText(e.Message.Content, "")
		}
	}
	if !slices.Equal(declared, []string{"mcp__t__echo"}) || !strings.HasPrefix(result, "echo: ") {
		t.Errorf("the head declares %v (want mcp__t__echo alone), echo's result %q\n%s", declared, result, out)
	}
}
