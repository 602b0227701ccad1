package agent_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/tool"
)

// benchTranscript builds a transcript of n entries: a head declaring 30
// tools, then user/assistant/tool-result exchanges with, every 50 entries,
// an update that redefines one of the tools (so every length declares the
// same tools, and only the length of the log differs).
func benchTranscript(n int, tools []tool.Tool) []llm.Message {
	head := llm.Message{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("You are helpful.")}}
	for _, t := range tools[:30] {
		head.ToolsAdded = append(head.ToolsAdded, t.Declaration())
	}
	msgs := []llm.Message{head}
	for i := 1; len(msgs) < n; i++ {
		switch {
		case i%50 == 0:
			d := tools[i/50%30].Declaration()
			msgs = append(msgs, llm.Message{Role: llm.RoleSystem, ToolsRemoved: []llm.ToolRef{{Name: d.Name}},
				ToolsAdded: []llm.Tool{d}, Timestamp: int64(i)})
		case i%3 == 1:
			msgs = append(msgs, llm.UserText(fmt.Sprintf("question %d", i), int64(i)))
		case i%3 == 2:
			tc := llm.ToolCall{ID: fmt.Sprint("c", i), Name: tools[0].Name, Arguments: json.RawMessage(`{}`)}
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, ToolCall: &tc}},
				StopReason: llm.StopToolUse, Timestamp: int64(i)})
		default:
			msgs = append(msgs, llm.Message{Role: llm.RoleToolResult, ToolCallID: fmt.Sprint("c", i-1), ToolName: tools[0].Name,
				Content: []llm.Part{llm.Text("result")}, Timestamp: int64(i)})
		}
	}
	return msgs
}

// BenchmarkDeclare measures the declaration step before a request (the
// registry's active set differs from the transcript by one tool) at 10 and
// at 10,000 transcript messages: the cost must not grow with the
// transcript.
func BenchmarkDeclare(b *testing.B) {
	var tools []tool.Tool
	for i := range 40 {
		tools = append(tools, echo(fmt.Sprintf("tool_%02d", i)))
	}
	for _, n := range []int{10, 10000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			msgs := benchTranscript(n, tools)
			reg := tool.NewRegistry()
			reg.Register(tools...)
			active := append(transcriptTools(msgs), tools[35].Name) // one change to declare
			reg.SetActive(active...)
			a, err := agent.New(agent.Config{Model: llmtest.New(), Tools: reg, Messages: msgs})
			if err != nil {
				b.Fatal(err)
			}
			pending := []llm.Message{llm.UserText("next", 1)}
			b.ReportAllocs()
			for b.Loop() {
				if got := agent.DeclareForTest(a, pending); len(got) != 2 {
					b.Fatalf("declared %d messages, want the update and the prompt", len(got))
				}
			}
		})
	}
}

func transcriptTools(msgs []llm.Message) []string {
	a, _ := agent.New(agent.Config{Model: llmtest.New(), Tools: tool.NewRegistry(), Messages: msgs})
	return toolNames(a.DeclaredTools())
}
