package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/transcript"
)

// TestRunAnswersOpenCallsAsInterrupted: a transcript that ends with tool
// calls and no results (the process was killed during the calls) gets an
// interrupted result for each, recorded, before the next request; and
// Continue accepts such a transcript.
func TestRunAnswersOpenCallsAsInterrupted(t *testing.T) {
	reg := tool.NewRegistry()
	for _, n := range []string{"a", "b"} {
		if err := reg.Register(echo(n)); err != nil {
			t.Fatal(err)
		}
	}
	killed := []llm.Message{
		llm.UserText("go", 1),
		{Role: llm.RoleAssistant, StopReason: llm.StopToolUse, Content: []llm.Part{
			{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "c1", Name: "a", Arguments: json.RawMessage(`{}`)}},
			{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: "c2", Name: "b", Arguments: json.RawMessage(`{}`)}},
		}},
		{Role: llm.RoleToolResult, ToolCallID: "c1", ToolName: "a", Content: []llm.Part{llm.Text("a:{}")}},
	}
	for _, cont := range []bool{false, true} {
		rec := &recorder{}
		model := llmtest.New(llmtest.Say("ok"))
		a := newAgent(t, model, reg, agent.Config{Messages: killed, Recorder: rec})
		var err error
		if cont {
			for _, e := range a.Continue(context.Background()) {
				err = e
			}
		} else {
			_, err = runAll(t, a, llm.UserText("again", 2))
		}
		if err != nil {
			t.Fatalf("continue=%v: %v", cont, err)
		}
		if len(rec.msgs) == 0 {
			t.Fatalf("continue=%v: nothing recorded", cont)
		}
		first := rec.msgs[0]
		if first.Role != llm.RoleToolResult || first.ToolCallID != "c2" || !first.IsError ||
			llm.ContentText(first.Content, "") != transcript.InterruptedText {
			t.Errorf("continue=%v: the first recorded message is %+v, want c2's interrupted result", cont, first)
		}
		req := model.Requests()[0].Messages
		if open := transcript.OpenCalls(req); len(open) != 0 {
			t.Errorf("continue=%v: the request still has open calls %v", cont, open)
		}
	}
}
