//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
)

// writeScript writes an emulator script (run --script) of replies.
func writeScript[R any](t *testing.T, replies ...R) string {
	t.Helper()
	var b strings.Builder
	for _, r := range replies {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// codemodeReply is a reply that calls the codemode tool with code.
func codemodeReply(code string) map[string]any {
	return map[string]any{"tool_calls": []map[string]any{{"name": codemode.Name, "arguments": map[string]string{"code": code}}}}
}

// summaryScript lists a directory with the real filesystem server, reads
// every file and returns a summary; the server's results are text or
// structured content ({content}), whichever its version sends.
const summaryScript = `
const text = r => typeof r === "string" ? r : r.content;
const listing = text(await tools.mcp__filesystem__list_directory({path: DIR}));
const names = listing.split("\n").filter(l => l.startsWith("[FILE] ")).map(l => l.slice(7)).sort();
const lines = [];
for (const name of names) {
  const body = text(await tools.mcp__filesystem__read_text_file({path: DIR + "/" + name}));
  lines.push(name + ": " + body.length + " bytes, starts " + JSON.stringify(body.slice(0, 5)));
}
console.log("read", names.length, "files");
return lines.join("\n");`

// TestCodemodeRealFilesystemServer is the acceptance test of the codemode
// runtime end to end: run --provider emulator with a scripted reply that
// calls the codemode tool; the script loops over the real filesystem
// server (exposure codemode) — list a directory, read every file, return
// a summary — and the session keeps the script's calls, which a resumed
// run replays and sessions show lists.
func TestCodemodeRealFilesystemServer(t *testing.T) {
	t.Parallel()
	bin := realServerBin(t)
	dir := t.TempDir()
	for name, body := range map[string]string{"alpha.txt": "alpha one", "beta.md": "# beta\nsecond", "gamma.json": `{"g": 3}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mcp := writeMCPConfig(t, map[string]any{"filesystem": map[string]any{
		"command": filepath.Join(bin, "mcp-server-filesystem"), "args": []string{dir}, "exposure": "codemode"}})
	sessions := t.TempDir()
	code := "const DIR = " + mustJSON(t, dir) + ";" + summaryScript
	script := writeScript(t, codemodeReply(code), map[string]any{"text": "Three files summarized."})
	exit, out, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", sessions, "--script", script, "--json", "summarize the files")
	if exit != 0 {
		t.Fatalf("exit %d: %s", exit, errOut)
	}
	var result *llm.Message
	declared := false
	for _, e := range parseEvents(t, out) {
		if e.Type == "message" && e.Message.Role == llm.RoleSystem {
			for _, d := range e.Message.ToolsAdded {
				declared = declared || d.Name == codemode.Name
			}
		}
		if e.Type == "tool_end" && e.Call.Name == codemode.Name {
			result = e.Message
		}
	}
	if !declared {
		t.Errorf("the codemode tool was not declared:\n%s", out)
	}
	want := "read 3 files\n" +
		`alpha.txt: 9 bytes, starts "alpha"` + "\n" +
		`beta.md: 13 bytes, starts "# bet"` + "\n" +
		`gamma.json: 8 bytes, starts "{\"g\":"`
	if result == nil || result.IsError || llm.ContentText(result.Content, "") != want {
		t.Fatalf("the script's result: %+v\nwant %q\n%s", result, want, errOut)
	}

	// The session keeps the calls; a resumed run replays them, and
	// sessions show lists them under the script's result.
	script2 := writeScript(t, map[string]any{"text": "Still three."})
	if exit, _, errOut := runAgent(t, agentRunOpts{}, "--mcp", mcp, "--session-dir", sessions, "--script", script2, "--resume", "last", "how many?"); exit != 0 {
		t.Fatalf("resume: exit %d: %s", exit, errOut)
	}
	msgs := latestMessages(t, sessions)
	var calls []codemode.Call
	for _, m := range msgs {
		if d, ok := codemode.ReadDetails(m.Details); ok {
			calls = d.Calls
		}
	}
	if len(calls) != 4 || calls[0].Tool != "mcp__filesystem__list_directory" || calls[3].Tool != "mcp__filesystem__read_text_file" ||
		!strings.Contains(string(calls[3].Arguments), "gamma.json") {
		t.Errorf("the session's script calls: %+v", calls)
	}
	if last := msgs[len(msgs)-1]; last.Role != llm.RoleAssistant || llm.ContentText(last.Content, "") != "Still three." {
		t.Errorf("the resumed run did not continue the session: last message %+v", last)
	}
	exit, shown, errOut := run(t, "sessions", "show", "--dir", sessions, "last")
	if exit != 0 {
		t.Fatalf("sessions show: exit %d: %s", exit, errOut)
	}
	for _, want := range []string{"← codemode: read 3 files", "↳ mcp__filesystem__list_directory", "↳ mcp__filesystem__read_text_file", "gamma.json"} {
		if !strings.Contains(shown, want) {
			t.Errorf("sessions show lacks %q:\n%s", want, shown)
		}
	}
}

// TestCodemodeByToolsFlag: --tools +codemode declares the codemode tool
// for servers that are not codemode ones; a script that fails says why.
func TestCodemodeByToolsFlag(t *testing.T) {
	t.Parallel()
	script := writeScript(t, codemodeReply(`return await tools.nosuch({})`), map[string]any{"text": "ok"})
	exit, out, errOut := runAgent(t, agentRunOpts{}, "--no-session", "--script", script, "--tools", "+codemode", "--json", "go")
	if exit != 0 {
		t.Fatalf("exit %d: %s", exit, errOut)
	}
	result := scriptResult(t, out)
	if result == nil || !result.IsError || !strings.Contains(llm.ContentText(result.Content, ""), "tools.nosuch is not a tool a script can call") {
		t.Errorf("the failed script's result: %+v", result)
	}
	if exit, _, errOut := runAgent(t, agentRunOpts{}, "--no-session", "--provider", "anthropic", "--script", script, "go"); exit != 2 || !strings.Contains(errOut, "--script plays replies in the emulator") {
		t.Errorf("--script with another provider: exit %d: %s", exit, errOut)
	}
}

// TestCodemodeModeFlag: --codemode-mode only declares the codemode tool
// without codemode servers, and a script runs; another value is a usage
// error.
func TestCodemodeModeFlag(t *testing.T) {
	t.Parallel()
	script := writeScript(t, codemodeReply(`return "from a script"`), map[string]any{"text": "ok"})
	exit, out, errOut := runAgent(t, agentRunOpts{}, "--no-session", "--script", script, "--codemode-mode", "only", "--json", "go")
	if exit != 0 {
		t.Fatalf("exit %d: %s", exit, errOut)
	}
	result := scriptResult(t, out)
	if result == nil || result.IsError || llm.ContentText(result.Content, "") != "from a script" {
		t.Errorf("the script's result: %+v", result)
	}
	if exit, _, errOut := runAgent(t, agentRunOpts{}, "--no-session", "--script", script, "--codemode-mode", "off", "go"); exit != 2 || !strings.Contains(errOut, `--codemode-mode "off": use on or only`) {
		t.Errorf("--codemode-mode off: exit %d: %s", exit, errOut)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// latestMessages returns the messages of the newest session in dir.
func latestMessages(t *testing.T, dir string) []llm.Message {
	t.Helper()
	latest, err := session.Latest(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(latest, &session.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return s.Messages()
}

// scriptResult returns the last codemode result among run --json's
// events, nil when there is none.
func scriptResult(t *testing.T, out string) *llm.Message {
	t.Helper()
	var result *llm.Message
	for _, e := range parseEvents(t, out) {
		if e.Type == "tool_end" && e.Call.Name == codemode.Name {
			result = e.Message
		}
	}
	return result
}
