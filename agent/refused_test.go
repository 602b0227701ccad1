package agent_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/transcript"
)

// TestResumeWithdrawsARefusedDeclaration: a transcript saved before the
// definition check declares a tool whose schema providers reject. On
// resume the name is pending, but its server's definition is refused
// again, so the agent withdraws the transcript's declaration instead of
// declaring it on every request.
func TestResumeWithdrawsARefusedDeclaration(t *testing.T) {
	bad := llm.Tool{Name: "mcp__shaky__regex", Description: "Match.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","pattern":"(((("}}}`)}
	good := echo("ok")
	saved := []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("base")}, ToolsAdded: []llm.Tool{good.Declaration(), bad}},
		llm.UserText("hello", 1),
	}
	reg := tool.NewRegistry()
	if err := reg.Register(good); err != nil {
		t.Fatal(err)
	}
	reg.Restore(toolNames(transcript.CurrentTools(saved))...)
	err := reg.Register(tool.Tool{Name: bad.Name, Description: bad.Description, Parameters: bad.Parameters, Exposure: tool.Deferred})
	if !errors.Is(err, tool.ErrSchema) {
		t.Fatalf("registering the refused tool: %v", err)
	}
	model := llmtest.New(llmtest.Say("hi"), llmtest.Say("hi again"))
	a := newAgent(t, model, reg, agent.Config{Messages: saved})
	for i := range 2 {
		if _, err := runAll(t, a, llm.UserText("again", int64(2+i))); err != nil {
			t.Fatal(err)
		}
	}
	added := a.Messages()[len(saved):]
	want := []string{"system-mcp__shaky__regex", "user", "assistant:stop", "user", "assistant:stop"}
	if diff := cmp.Diff(want, roles(added)); diff != "" {
		t.Errorf("after the resume (-want +got):\n%s", diff)
	}
	for i, req := range model.Requests() {
		if got := toolNames(transcript.CurrentTools(req.Messages)); !cmp.Equal(got, []string{"ok"}) {
			t.Errorf("request %d declares %v, want only ok", i+1, got)
		}
	}
}
