package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/search"
	"github.com/toolshelf/toolshelf/session"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/toolsearch"
	"github.com/toolshelf/toolshelf/transcript"
)

// shelf returns a registry with tool_search (active) and, unless
// connecting is true (its server has not connected yet), a deferred
// server tool.
func shelf(t *testing.T, connecting bool) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry()
	r, _ := search.NewBM25F(nil)
	s := toolsearch.New(reg, r)
	ts := s.Tool()
	ts.StartInactive = false
	if err := reg.Register(ts); err != nil {
		t.Fatal(err)
	}
	if !connecting {
		registerServerTool(t, reg)
	}
	return reg
}

func registerServerTool(t *testing.T, reg *tool.Registry) {
	t.Helper()
	err := reg.Register(tool.Tool{Name: "mcp__tracker__create_issue", Description: "Create an issue in the tracker.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`),
		Exposure:   tool.Deferred,
		Handler: tool.HandlerFunc(func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("created " + string(args)), nil
		})})
	if err != nil {
		t.Fatal(err)
	}
}

// record returns a Recorder that appends to a session.
func record(s *session.Session) agent.Recorder {
	return agent.RecorderFunc(func(m llm.Message) error {
		_, err := s.Append(m)
		return err
	})
}

// TestResumeKeepsToolsLoadedBySearch: a session that loaded a deferred tool
// with tool_search is reopened before the tool's server has registered it.
// The first run declares nothing new and removes nothing; once the tool
// registers it is active again and callable, still without a new
// declaration.
func TestResumeKeepsToolsLoadedBySearch(t *testing.T) {
	dir := t.TempDir()
	// The first session: search, load, use.
	s1, err := session.Create(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := shelf(t, false)
	model := llmtest.New(
		llmtest.Call(call("s1", "tool_search", `{"query":"create issue"}`)),
		llmtest.Call(call("c1", "mcp__tracker__create_issue", `{"title":"bug"}`)),
		llmtest.Say("filed"))
	a := newAgent(t, model, reg, agent.Config{SystemPrompt: "base", Recorder: record(s1)})
	if _, err := runAll(t, a, llm.UserText("file a bug", 1)); err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopen the file, as a new process would.
	s2, err := session.Open(s1.Path(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	saved := s2.Messages()
	if diff := cmp.Diff(roles(a.Messages()), roles(saved)); diff != "" {
		t.Fatalf("the session file holds (-transcript +file):\n%s", diff)
	}
	declared := toolNames(transcript.CurrentTools(saved))
	if !cmp.Equal(declared, []string{"tool_search", "mcp__tracker__create_issue"}) {
		t.Fatalf("declared before the resume: %v", declared)
	}

	// Resume with a fresh registry whose server is still connecting.
	reg2 := shelf(t, true)
	reg2.Restore(declared...)
	model2 := llmtest.New(llmtest.Say("hello again"), llmtest.Call(call("c2", "mcp__tracker__create_issue", `{"title":"again"}`)),
		llmtest.Say("filed again"))
	b := newAgent(t, model2, reg2, agent.Config{Messages: saved, Recorder: record(s2)})
	if _, err := runAll(t, b, llm.UserText("are you there", 2)); err != nil {
		t.Fatal(err)
	}
	added := b.Messages()[len(saved):]
	if diff := cmp.Diff([]string{"user", "assistant:stop"}, roles(added)); diff != "" {
		t.Errorf("the first run after the resume appended (-want +got):\n%s", diff)
	}
	if got := toolNames(transcript.CurrentTools(model2.Requests()[0].Messages)); !cmp.Equal(got, declared) {
		t.Errorf("the request declares %v, want %v", got, declared)
	}

	// The server connects: the tool registers and is active again.
	registerServerTool(t, reg2)
	if !reg2.IsActive("mcp__tracker__create_issue") {
		t.Fatal("the pending tool did not become active when it registered")
	}
	n := len(b.Messages())
	if _, err := runAll(t, b, llm.UserText("file another", 3)); err != nil {
		t.Fatal(err)
	}
	added = b.Messages()[n:]
	want := []string{"user", "assistant:toolUse", "toolResult:c2", "assistant:stop"}
	if diff := cmp.Diff(want, roles(added)); diff != "" {
		t.Errorf("after the tool registered (-want +got):\n%s", diff)
	}
	if got, isErr := resultText(added, "c2"); isErr || got != `created {"title":"again"}` {
		t.Errorf("the restored tool's result: %q (error %v)", got, isErr)
	}
	if diff := cmp.Diff(roles(b.Messages()), roles(s2.Messages())); diff != "" {
		t.Errorf("the session file holds (-transcript +file):\n%s", diff)
	}
}

// TestAwaitLetsACallWaitForItsServer: a resumed session calls a restored
// tool while its server is still connecting. Await holds the call until the
// tool registers, and the call succeeds; without it the model gets a
// "not available" error.
func TestAwaitLetsACallWaitForItsServer(t *testing.T) {
	for _, await := range []bool{false, true} {
		reg := shelf(t, true)
		reg.Restore("tool_search", "mcp__tracker__create_issue")
		var awaited []string
		cfg := agent.Config{SystemPrompt: "base"}
		if await {
			cfg.Await = func(_ context.Context, name string, _ json.RawMessage) error {
				awaited = append(awaited, name)
				registerServerTool(t, reg) // the server connects during the wait
				return nil
			}
		}
		model := llmtest.New(llmtest.Call(call("c1", "mcp__tracker__create_issue", `{"title":"bug"}`)), llmtest.Say("done"))
		a := newAgent(t, model, reg, cfg)
		if _, err := runAll(t, a, llm.UserText("file a bug", 1)); err != nil {
			t.Fatal(err)
		}
		got, isErr := resultText(a.Messages(), "c1")
		switch {
		case await && (isErr || got != `created {"title":"bug"}` || !cmp.Equal(awaited, []string{"mcp__tracker__create_issue"})):
			t.Errorf("with Await: result %q (error %v), awaited %v", got, isErr, awaited)
		case !await && (!isErr || got != `Tool "mcp__tracker__create_issue" is not available: the server that provides it has not registered it.`):
			t.Errorf("without Await: result %q (error %v)", got, isErr)
		}
	}
}

// TestUnavailableExplainsAPendingTool: a restored tool that has still not
// registered once Await returned gets Unavailable's reason, and never
// "try again later": waiting longer would not help.
func TestUnavailableExplainsAPendingTool(t *testing.T) {
	reg := shelf(t, true)
	reg.Restore("tool_search", "mcp__tracker__create_issue")
	var asked []string
	cfg := agent.Config{SystemPrompt: "base",
		Await: func(context.Context, string, json.RawMessage) error { return nil },
		Unavailable: func(name string) string {
			asked = append(asked, name)
			return `no MCP server configured in this run provides the mcp__tracker tools`
		}}
	model := llmtest.New(llmtest.Call(call("c1", "mcp__tracker__create_issue", `{"title":"bug"}`)), llmtest.Say("done"))
	a := newAgent(t, model, reg, cfg)
	if _, err := runAll(t, a, llm.UserText("file a bug", 1)); err != nil {
		t.Fatal(err)
	}
	got, isErr := resultText(a.Messages(), "c1")
	want := `Tool "mcp__tracker__create_issue" is not available: no MCP server configured in this run provides the mcp__tracker tools.`
	if !isErr || got != want || !cmp.Equal(asked, []string{"mcp__tracker__create_issue"}) {
		t.Errorf("result %q (error %v), asked %v; want %q", got, isErr, asked, want)
	}
}

// TestAwaitCancelled: a wait that the run's cancellation ends answers the
// call as cancelled.
func TestAwaitCancelled(t *testing.T) {
	reg := shelf(t, true)
	reg.Restore("tool_search", "mcp__tracker__create_issue")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := agent.Config{SystemPrompt: "base", Await: func(ctx context.Context, _ string, _ json.RawMessage) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}}
	model := llmtest.New(llmtest.Call(call("c1", "mcp__tracker__create_issue", `{"title":"bug"}`)), llmtest.Say("done"))
	a := newAgent(t, model, reg, cfg)
	var runErr error
	for _, err := range a.Run(ctx, llm.UserText("file a bug", 1)) {
		if err != nil {
			runErr = err
		}
	}
	if !errors.Is(runErr, context.Canceled) {
		t.Errorf("run error = %v, want cancelled", runErr)
	}
	if got, isErr := resultText(a.Messages(), "c1"); !isErr || !strings.Contains(got, "cancelled") {
		t.Errorf("result %q (error %v), want a cancelled result", got, isErr)
	}
}

// TestResumeKeepsDeclaredToolsWithoutRestore checks that continuing a
// transcript needs no Registry.Restore of its tools: with a registry whose
// loaded tool is registered but not active, and another tool still pending
// its server, the first request after the resume declares what the
// transcript declared and appends no removal (which would rewrite the
// cached prefix).
func TestResumeKeepsDeclaredToolsWithoutRestore(t *testing.T) {
	loaded := echo("mcp__notes__add")
	loaded.Exposure = tool.Deferred
	saved := []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("base")}, ToolsAdded: []llm.Tool{echo("read").Declaration(), loaded.Declaration(),
			{Name: "mcp__later__go", Description: "Go later.", Parameters: json.RawMessage(`{"type":"object"}`)}}},
		llm.UserText("hello", 1),
		{Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("hi")}, StopReason: llm.StopEnd},
	}
	reg := tool.NewRegistry()
	read := echo("read")
	read.StartInactive = true
	if err := reg.Register(read, loaded); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(llmtest.Say("again"))
	a := newAgent(t, model, reg, agent.Config{Messages: saved})
	if _, err := runAll(t, a, llm.UserText("more", 2)); err != nil {
		t.Fatal(err)
	}
	for _, m := range a.Messages()[len(saved):] {
		if m.Role == llm.RoleSystem && len(m.ToolsRemoved) > 0 {
			t.Errorf("the resume removed %v", m.ToolsRemoved)
		}
	}
	want := []string{"read", "mcp__notes__add", "mcp__later__go"}
	if got := toolNames(transcript.CurrentTools(model.Requests()[0].Messages)); !cmp.Equal(got, want) {
		t.Errorf("the request declares %v, want %v", got, want)
	}
	if got := reg.Pending(); !cmp.Equal(got, []string{"mcp__later__go"}) {
		t.Errorf("pending = %v, want the tool whose server has not registered it", got)
	}
}
