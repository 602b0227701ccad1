package toolshelf_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/session"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
	"github.com/toolshelf/toolshelf/transcript"
)

// fixedTool is a program tool of the exposure that answers its name.
func fixedTool(name string, e tool.Exposure, description string) tool.Tool {
	return tool.Tool{Name: name, Description: description, Exposure: e,
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			return tool.TextResult(name + " ran"), nil
		})}
}

// codemodeResults returns the texts of the codemode results, in order,
// an error result's marked with "error: ".
func codemodeResults(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == llm.RoleToolResult && m.ToolName == codemode.Name {
			text := llm.ContentText(m.Content, "")
			if m.IsError {
				text = "error: " + text
			}
			out = append(out, text)
		}
	}
	return out
}

// TestCodemodeStoreThroughTheFrontDoor: a conversation's scripts share
// what they store — a later script loads what an earlier one stored, a
// failed script's stores are not kept — and a resumed session loads the
// values its transcript's successful scripts stored, on the branch it
// resumes from only.
func TestCodemodeStoreThroughTheFrontDoor(t *testing.T) {
	dir := t.TempDir()
	cfg := toolshelf.Config{Tools: []tool.Tool{fixedTool("notes_add", tool.Codemode, "Add a note.")}}
	shelf, err := toolshelf.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(
		llmtest.Call(codemodeCall("c1", `store("k", {n: 1}); store("other", "x"); return "stored"`)),
		llmtest.Call(codemodeCall("c2", `return JSON.stringify(load("k"))`)),
		llmtest.Call(codemodeCall("c3", `store("k", {n: 2}); throw new Error("boom")`)),
		llmtest.Call(codemodeCall("c4", `return JSON.stringify([load("k"), load("other")])`)),
		llmtest.Say("first done"),
		// The second prompt, whose stores a branch leaves behind.
		llmtest.Call(codemodeCall("c5", `store("k", {n: 3}); return "stored again"`)),
		llmtest.Say("second done"))
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model, Session: &toolshelf.SessionConfig{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "store and load")
	got := codemodeResults(a.Messages())
	want := []string{"stored", `{"n":1}`, "error: … boom", `[{"n":1},"x"]`}
	if len(got) != 4 || got[0] != want[0] || got[1] != want[1] || !strings.HasPrefix(got[2], "error: ") || !strings.Contains(got[2], "boom") || got[3] != want[3] {
		t.Fatalf("the scripts' results %q, want %q", got, want)
	}
	firstDone := a.Session().Leaf()
	run(t, a, "store again")
	path := a.Session().Path()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	shelf.Close()

	resume := func(t *testing.T, path string) string {
		t.Helper()
		shelf, err := toolshelf.New(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer shelf.Close()
		model := llmtest.New(llmtest.Call(codemodeCall("r1", `return JSON.stringify(load("k"))`)), llmtest.Say("resumed"))
		b, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model, Session: &toolshelf.SessionConfig{Dir: dir, Resume: path}})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		run(t, b, "load")
		res := codemodeResults(b.Messages())
		return res[len(res)-1]
	}
	// Resumed at its leaf, the session has the second prompt's value.
	if got := resume(t, path); got != `{"n":3}` {
		t.Errorf("resumed, load(k) = %s, want the latest stored value {\"n\":3}", got)
	}
	// A branch off the end of the first prompt has the first prompt's
	// value: the second prompt's script is on another branch.
	s, err := session.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetLeaf(firstDone); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendData("test-branch", map[string]string{"from": firstDone}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := resume(t, path); got != `{"n":1}` {
		t.Errorf("resumed on the first prompt's branch, load(k) = %s, want {\"n\":1}", got)
	}
}

// TestCodemodeSearchesInMetrics: the metrics record of an answer whose
// script searched counts each searchTools call as a call of tool_search,
// after the script's tool calls.
func TestCodemodeSearchesInMetrics(t *testing.T) {
	metrics := t.TempDir() + "/metrics.jsonl"
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Metrics: metrics,
		Tools: []tool.Tool{fixedTool("notes_add", tool.Codemode, "Add a note to the notebook.")}})
	if err != nil {
		t.Fatal(err)
	}
	usage := &llm.Usage{Input: 100, Output: 5}
	call := llmtest.Call(codemodeCall("c1", `
		const hits = await searchTools("add a note");
		await searchTools("notebook", {limit: 2});
		return await tools[hits[0].name]({});`))
	call.Message.Usage = usage
	done := llmtest.Say("done")
	done.Message.Usage = usage
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: llmtest.New(call, done)})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "add a note")
	if got := codemodeResults(a.Messages()); len(got) != 1 || got[0] != "notes_add ran" {
		t.Fatalf("the script's result: %q", got)
	}
	a.Close()
	shelf.Close()
	f, err := os.Open(metrics)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, _, err := tokens.ReadLog(f)
	if err != nil || len(records) != 2 {
		t.Fatalf("%d records, %v", len(records), err)
	}
	if got, want := strings.Join(records[0].Inner, ","), "notes_add,"+toolsearch.Name+","+toolsearch.Name; got != want {
		t.Errorf("the script's record counts inner calls %s, want %s", got, want)
	}
	if len(records[1].Inner) != 0 {
		t.Errorf("the last answer's record counts inner calls %v", records[1].Inner)
	}
}

// declared returns the declarations of the first request of a model's
// requests and the codemode tool's description there.
func declared(t *testing.T, model *llmtest.Scripted, request int) map[string]llm.Tool {
	t.Helper()
	out := map[string]llm.Tool{}
	for _, d := range transcript.CurrentTools(model.Requests()[request].Messages) {
		out[d.Name] = d
	}
	return out
}

// modeShelf is a shelf with a direct, a codemode and a deferred tool, in
// a mode.
func modeShelf(t *testing.T, mode string) *toolshelf.Shelf {
	t.Helper()
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{
		Tools: []tool.Tool{
			fixedTool("read_file", tool.Direct, "Read a file from the disk."),
			fixedTool("notes_add", tool.Codemode, "Add a note."),
			fixedTool("mail_send", tool.Deferred, "Send an email."),
		},
		Codemode: toolshelf.CodemodeConfig{Mode: mode}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shelf.Close() })
	return shelf
}

// modeRun runs the same conversation on a shelf: a script calls the
// direct tool, tool_search loads the deferred one, a script calls it.
func modeRun(t *testing.T, shelf *toolshelf.Shelf) (*toolshelf.Agent, *llmtest.Scripted) {
	t.Helper()
	model := llmtest.New(
		llmtest.Call(codemodeCall("c1", `return await tools.read_file({})`)),
		llmtest.Call(llm.ToolCall{ID: "c2", Name: toolsearch.Name, Arguments: []byte(`{"query":"select:mail_send"}`)}),
		llmtest.Call(codemodeCall("c3", `return await tools.mail_send({})`)),
		llmtest.Say("done"))
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	run(t, a, "go")
	if got := codemodeResults(a.Messages()); len(got) != 2 || got[0] != "read_file ran" || got[1] != "mail_send ran" {
		t.Fatalf("the scripts' results: %q", got)
	}
	return a, model
}

// declaredOnce fails when the transcript declares a tool more than once
// (a redefinition rewrites the cached prefix) or withdraws one.
func declaredOnce(t *testing.T, msgs []llm.Message) {
	t.Helper()
	seen := map[string]int{}
	for _, m := range msgs {
		for _, d := range m.ToolsAdded {
			if seen[d.Name]++; seen[d.Name] > 1 {
				t.Errorf("%s is declared again: %q", d.Name, d.Description)
			}
		}
		if len(m.ToolsRemoved) > 0 {
			t.Errorf("the transcript withdraws %v", m.ToolsRemoved)
		}
	}
}

// TestCodemodeModeOn: the default mode. The declared tools a script can
// call — the direct one from the start, the deferred one once loaded —
// are declared with the one-line sample of how a script calls them; the
// codemode tool's description lists the codemode tool and neither the
// direct nor the deferred one, and never changes; every declaration is
// made once.
func TestCodemodeModeOn(t *testing.T) {
	shelf := modeShelf(t, "")
	if shelf.CodemodeMode() != toolshelf.CodemodeOn {
		t.Fatalf("the default mode is %q", shelf.CodemodeMode())
	}
	a, model := modeRun(t, shelf)
	first := declared(t, model, 0)
	if got := slices.Sorted(maps.Keys(first)); strings.Join(got, " ") != "codemode read_file tool_search" {
		t.Errorf("the first request declares %v", got)
	}
	if d := first["read_file"].Description; d != "Call from codemode: await tools.read_file({...})" {
		t.Errorf("the direct tool's description: %q", d)
	}
	if d := first[toolsearch.Name].Description; strings.HasPrefix(d, "Call from codemode") {
		t.Errorf("tool_search, which scripts cannot call, is described %q", d)
	}
	cm := first[codemode.Name].Description
	if !strings.Contains(cm, "tools.notes_add(): Add a note.") || strings.Contains(cm, "read_file") || strings.Contains(cm, "mail_send") {
		t.Errorf("the codemode description lists the wrong tools:\n%s", cm)
	}
	last := declared(t, model, len(model.Requests())-1)
	if d := last["mail_send"].Description; d != "Call from codemode: await tools.mail_send({...})" {
		t.Errorf("the loaded tool's description: %q", d)
	}
	if last[codemode.Name].Description != cm || last["read_file"].Description != first["read_file"].Description {
		t.Error("a declaration changed when a tool was loaded")
	}
	declaredOnce(t, a.Messages())
	// The registry keeps the tools' own descriptions: describeTool and
	// searches see them.
	if rf, _ := shelf.Registry().Get("read_file"); rf.Description != "Read a file from the disk." {
		t.Errorf("the registered description changed: %q", rf.Description)
	}
}

// TestCodemodeModeOnly: the direct tool is not declared but stays
// callable from scripts; the codemode tool's description lists it beside
// the codemode tool (never the deferred one), and does not change when
// tool_search loads the deferred tool, which is declared as it is.
func TestCodemodeModeOnly(t *testing.T) {
	shelf := modeShelf(t, toolshelf.CodemodeOnly)
	before, _ := shelf.Registry().Get(codemode.Name)
	a, model := modeRun(t, shelf)
	first := declared(t, model, 0)
	if got := slices.Sorted(maps.Keys(first)); strings.Join(got, " ") != "codemode tool_search" {
		t.Errorf("the first request declares %v, want codemode and tool_search", got)
	}
	cm := first[codemode.Name].Description
	if cm != before.Description || !strings.Contains(cm, "tools.notes_add(): Add a note.") ||
		!strings.Contains(cm, "tools.read_file(): Read a file from the disk.") || strings.Contains(cm, "mail_send") {
		t.Errorf("the codemode description lists the wrong tools:\n%s", cm)
	}
	last := declared(t, model, len(model.Requests())-1)
	if _, ok := last["read_file"]; ok {
		t.Error("the direct tool is declared")
	}
	if d := last["mail_send"].Description; d != "Send an email." {
		t.Errorf("the loaded tool's description: %q", d)
	}
	if last[codemode.Name].Description != cm {
		t.Error("the codemode description changed when a tool was loaded")
	}
	if !shelf.Registry().IsActive("read_file") {
		t.Error("the hidden direct tool is not active: scripts cannot call it")
	}
	declaredOnce(t, a.Messages())

	if _, err := toolshelf.New(t.Context(), toolshelf.Config{Codemode: toolshelf.CodemodeConfig{Mode: "off"}}); err == nil || !strings.Contains(err.Error(), `use "on" (the default) or "only"`) {
		t.Errorf("an unknown mode: %v", err)
	}
}

// TestCodemodeModeOnlyWithoutCodemodeTools: the mode alone registers and
// declares the codemode tool, through which the direct tools are reached.
func TestCodemodeModeOnlyWithoutCodemodeTools(t *testing.T) {
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Tools: []tool.Tool{fixedTool("read_file", tool.Direct, "Read a file.")},
		Codemode: toolshelf.CodemodeConfig{Mode: toolshelf.CodemodeOnly}})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	model := llmtest.New(llmtest.Call(codemodeCall("c1", `return await tools.read_file({})`)), llmtest.Say("done"))
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	run(t, a, "read")
	if got := names(transcript.CurrentTools(model.Requests()[0].Messages)); strings.Join(got, " ") != codemode.Name {
		t.Errorf("the first request declares %v, want the codemode tool alone", got)
	}
	if got := codemodeResults(a.Messages()); len(got) != 1 || got[0] != "read_file ran" {
		t.Errorf("the script's result: %q", got)
	}
}

// TestCodemodeServersDeclareCodemodeAlone: a servers file whose servers
// are all codemode servers declares the codemode tool and not
// tool_search, as the reference does; one deferred server (or a deferred
// tool of one) brings tool_search back.
func TestCodemodeServersDeclareCodemodeAlone(t *testing.T) {
	for _, c := range []struct {
		name, servers string
		want          string
	}{
		{"codemode servers", `"a": {"command": "/nonexistent/toolshelf-test-a", "exposure": "codemode"},
			"b": {"command": "/nonexistent/toolshelf-test-b", "exposure": "codemode", "description": "B"}`, "codemode"},
		{"and a deferred one", `"a": {"command": "/nonexistent/toolshelf-test-a", "exposure": "codemode"},
			"d": {"command": "/nonexistent/toolshelf-test-d"}`, "tool_search codemode"},
		{"a deferred tool", `"a": {"command": "/nonexistent/toolshelf-test-a", "exposure": "codemode", "toolExposure": {"slow_*": "deferred"}}`, "tool_search codemode"},
		{"always loaded", `"a": {"command": "/nonexistent/toolshelf-test-a", "exposure": "codemode"},
			"d": {"command": "/nonexistent/toolshelf-test-d", "alwaysLoad": true}`, "codemode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "mcp.json")
			if err := os.WriteFile(file, []byte(`{"mcpServers": {`+c.servers+`}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			shelf, err := toolshelf.New(t.Context(), toolshelf.Config{MCPFile: file})
			if err != nil {
				t.Fatal(err)
			}
			defer shelf.Close()
			model := llmtest.New(llmtest.Say("ok"))
			a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			run(t, a, "go")
			if got := names(transcript.CurrentTools(model.Requests()[0].Messages)); strings.Join(got, " ") != c.want {
				t.Errorf("the first request declares %v, want %s", got, c.want)
			}
		})
	}
}
