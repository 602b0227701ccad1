package toolshelf_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf"
	"github.com/toolshelf/toolshelf/codemode"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/mcpclient/mcptest"
	"github.com/toolshelf/toolshelf/tokens"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/transcript"
)

// codemodeCall is a model's call of the codemode tool.
func codemodeCall(id, code string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: codemode.Name, Arguments: codemode.Arguments(code)}
}

// TestCodemodeThroughTheFrontDoor: a server with codemode exposure makes
// the conversation declare the codemode tool; a script loops over the
// server's tools; the result carries the script's calls into the session,
// which a resumed conversation replays, and the metrics log counts them.
func TestCodemodeThroughTheFrontDoor(t *testing.T) {
	dir, metrics := t.TempDir(), t.TempDir()+"/metrics.jsonl"
	cfg := toolshelf.Config{Metrics: metrics,
		Servers: []mcpclient.ServerConfig{{Name: "m", Server: mcptest.NewServer("m", "Echoes."), Exposure: tool.Codemode}}}
	shelf, err := toolshelf.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	usage := &llm.Usage{Input: 100, Output: 5}
	call := llmtest.Call(codemodeCall("c1", `
		const out = [];
		for (const w of ["a", "b", "c"]) out.push(await tools.mcp__m__echo({text: w}));
		console.log("calls:", out.length);
		return out.join(" | ");`))
	call.Message.Usage = usage
	done := llmtest.Say("done")
	done.Message.Usage = usage
	model := llmtest.New(call, done)
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model, Session: &toolshelf.SessionConfig{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "echo three words")
	first := transcript.CurrentTools(model.Requests()[0].Messages)
	if !slices.ContainsFunc(first, func(d llm.Tool) bool { return d.Name == codemode.Name }) {
		t.Fatalf("the first request declares %v, want the codemode tool", names(first))
	}
	var result *llm.Message
	for i, m := range a.Messages() {
		if m.Role == llm.RoleToolResult && m.ToolName == codemode.Name {
			result = &a.Messages()[i]
		}
	}
	if result == nil || result.IsError || llm.ContentText(result.Content, "") != "calls: 3\necho: a | echo: b | echo: c" {
		t.Fatalf("the codemode result: %+v", result)
	}
	d, ok := codemode.ReadDetails(result.Details)
	if !ok || len(d.Calls) != 3 || d.Calls[2].Tool != "mcp__m__echo" || string(d.Calls[2].Arguments) != `{"text":"c"}` || d.Calls[2].Result != "echo: c" {
		t.Errorf("the result's details: %+v", d)
	}
	path := a.Session().Path()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	shelf.Close()

	// The metrics record of the answer that ran the script counts its calls.
	f, err := os.Open(metrics)
	if err != nil {
		t.Fatal(err)
	}
	records, _, err := tokens.ReadLog(f)
	f.Close()
	if err != nil || len(records) != 2 {
		t.Fatalf("%d records, %v", len(records), err)
	}
	if r := records[0]; strings.Join(r.Called, ",") != codemode.Name || strings.Join(r.Inner, ",") != "mcp__m__echo,mcp__m__echo,mcp__m__echo" || r.InnerTokens == 0 {
		t.Errorf("the script's record: called %v, inner %v, %d inner tokens", r.Called, r.Inner, r.InnerTokens)
	}
	if r := records[1]; len(r.Inner) != 0 {
		t.Errorf("the last answer's record counts inner calls %v", r.Inner)
	}

	// Resumed, the transcript still holds the calls, and the codemode
	// tool is declared as before: nothing removed or redefined.
	shelf2, err := toolshelf.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer shelf2.Close()
	model2 := llmtest.New(llmtest.Say("again"))
	b, err := shelf2.Agent(t.Context(), toolshelf.AgentConfig{Model: model2, Session: &toolshelf.SessionConfig{Dir: dir, Resume: path}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	run(t, b, "and again")
	req := model2.Requests()[0].Messages
	found := false
	for _, m := range req {
		if d, ok := codemode.ReadDetails(m.Details); ok && len(d.Calls) == 3 {
			found = true
		}
		if m.Role == llm.RoleSystem && m.Timestamp > 0 && (slices.ContainsFunc(m.ToolsRemoved, func(r llm.ToolRef) bool { return r.Name == codemode.Name })) {
			t.Errorf("the resumed conversation removed the codemode tool")
		}
	}
	if !found {
		t.Error("the resumed transcript lost the script's calls")
	}
	added := 0
	for _, m := range req {
		for _, d := range m.ToolsAdded {
			if d.Name == codemode.Name {
				added++
			}
		}
	}
	if added != 1 {
		t.Errorf("the codemode tool was declared %d times in the resumed transcript, want once", added)
	}
}

// TestCodemodeDescriptionIsStatic is the cache rule for the codemode tool:
// its description is byte-identical before the servers connect, after
// one connects and one fails, after tools are loaded and after a server
// is gone, and the transcript declares it once.
func TestCodemodeDescriptionIsStatic(t *testing.T) {
	own := tool.Tool{Name: "mcp__notes__add", Description: "Add a note.", Exposure: tool.Codemode,
		Namespace: &tool.Namespace{Name: "mcp__notes", Description: "Notes"},
		Handler:   tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) { return tool.TextResult("added"), nil })}
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{Tools: []tool.Tool{own}, Servers: []mcpclient.ServerConfig{
		{Name: "m", Server: mcptest.NewServer("m", ""), Exposure: tool.Codemode, Description: "The test server"},
		{Name: "broken", Command: "/nonexistent/toolshelf-test-server", Exposure: tool.Codemode},
		{Name: "d", Server: mcptest.NewServer("d", "")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	description := func() string {
		t.Helper()
		d, ok := shelf.Registry().Get(codemode.Name)
		if !ok {
			t.Fatal("the codemode tool is not registered")
		}
		return d.Description
	}
	before := description()
	for _, want := range []string{"tools.mcp__notes__add(): Add a note.", "## mcp__m: The test server (tools not listed)", "## mcp__broken (tools not listed)"} {
		if !strings.Contains(before, want) {
			t.Errorf("the description lacks %q:\n%s", want, before)
		}
	}
	if err := shelf.MCP().WaitAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	states := map[string]mcpclient.State{}
	for _, s := range shelf.MCP().Servers() {
		states[s.Name] = s.State
	}
	if states["m"] != mcpclient.Connected || states["broken"] != mcpclient.Failed {
		t.Fatalf("server states %v: want m connected and broken failed", states)
	}
	if after := description(); after != before {
		t.Errorf("the description changed when the servers connected or failed:\n%s\n----\n%s", before, after)
	}
	model := llmtest.New(
		llmtest.Call(llm.ToolCall{ID: "c1", Name: "tool_search", Arguments: []byte(`{"query":"select:mcp__m__echo,mcp__d__pid"}`)}),
		llmtest.Call(codemodeCall("c2", `return await tools.mcp__m__echo({text: "x"})`)),
		llmtest.Say("done"))
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "go")
	if after := description(); after != before {
		t.Errorf("the description changed when tools were loaded:\n%s\n----\n%s", before, after)
	}
	declared := 0
	for _, m := range a.Messages() {
		for _, d := range m.ToolsAdded {
			if d.Name == codemode.Name {
				declared++
				if d.Description != before {
					t.Errorf("the transcript declares another description:\n%s", d.Description)
				}
			}
		}
		if slices.ContainsFunc(m.ToolsRemoved, func(r llm.ToolRef) bool { return r.Name == codemode.Name }) {
			t.Error("the transcript withdraws the codemode tool")
		}
	}
	if declared != 1 {
		t.Errorf("the codemode tool is declared %d times, want once", declared)
	}
	// A server that goes away (its tools re-registered hidden) changes
	// nothing either.
	if err := shelf.MCP().Close(); err != nil {
		t.Fatal(err)
	}
	if err := shelf.Registry().Register(tool.Tool{Name: "mcp__m__echo", Exposure: tool.Hidden}); err != nil {
		t.Fatal(err)
	}
	if after := description(); after != before {
		t.Errorf("the description changed when a server's tool was withdrawn:\n%s\n----\n%s", before, after)
	}
}

// TestCodemodeOnlyWhenAsked: without codemode tools or servers the tool is
// not registered; Enable registers it inactive, to be activated by name.
func TestCodemodeOnlyWhenAsked(t *testing.T) {
	shelf, err := toolshelf.New(t.Context(), toolshelf.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := shelf.Registry().Get(codemode.Name); ok || shelf.Codemode() != nil {
		t.Error("a shelf without codemode tools registers the codemode tool")
	}
	shelf.Close()
	shelf, err = toolshelf.New(t.Context(), toolshelf.Config{Codemode: toolshelf.CodemodeConfig{Enable: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer shelf.Close()
	model := llmtest.New(llmtest.Say("ok"))
	a, err := shelf.Agent(t.Context(), toolshelf.AgentConfig{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	run(t, a, "go")
	if _, ok := shelf.Registry().Get(codemode.Name); !ok || shelf.Registry().IsActive(codemode.Name) {
		t.Error("Enable should register the codemode tool, inactive")
	}
}
