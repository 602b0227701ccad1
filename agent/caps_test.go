package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/tool"
)

// bigTool returns a direct tool whose result is parts.
func bigTool(name string, parts ...tool.Content) tool.Tool {
	return tool.Tool{Name: name, Description: "Return a lot.",
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			return &tool.Result{Content: parts}, nil
		})}
}

// resultParts returns the content of the result of call id.
func resultParts(msgs []llm.Message, id string) []llm.Part {
	for _, m := range msgs {
		if m.Role == llm.RoleToolResult && m.ToolCallID == id {
			return m.Content
		}
	}
	return nil
}

func textBytes(parts []llm.Part) int {
	n := 0
	for _, p := range parts {
		if p.Type == llm.PartText {
			n += len(p.Text)
		}
	}
	return n
}

// TestLongResultsAreCut checks that a result of any tool (not only an
// MCP tool's) is cut in the middle before it enters the transcript, with
// a note saying how much was cut, whole runes, images kept; and that a
// result within the bound is left alone.
func TestLongResultsAreCut(t *testing.T) {
	mega := "<start>" + strings.Repeat("é", 1<<19) + "<end>" // 1 MiB of two-byte runes
	reg := tool.NewRegistry()
	png := tool.Content{MIMEType: "image/png", Data: []byte("\x89PNG")}
	err := reg.Register(
		bigTool("dump", tool.Content{Text: mega}),
		bigTool("parts", tool.Content{Text: "head " + strings.Repeat("a", 30000)}, png,
			tool.Content{Text: strings.Repeat("b", 30000)}, tool.Content{Text: strings.Repeat("c", 30000) + " tail"}),
		bigTool("small", tool.Content{Text: strings.Repeat("s", agent.DefaultMaxResultBytes)}),
	)
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(llmtest.Call(call("c1", "dump", `{}`), call("c2", "parts", `{}`), call("c3", "small", `{}`)), llmtest.Say("done"))
	a := newAgent(t, model, reg, agent.Config{})
	if _, err := runAll(t, a, llm.UserText("dump everything", 1)); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()

	dump := resultParts(msgs, "c1")
	text := llm.ContentText(dump, "")
	note := fmt.Sprintf("[… %d bytes cut from the middle of this tool result: results are limited to %d bytes.", len(mega)-agent.DefaultMaxResultBytes, agent.DefaultMaxResultBytes)
	switch {
	case len(dump) != 1:
		t.Errorf("dump: %d parts", len(dump))
	case !strings.HasPrefix(text, "<start>") || !strings.HasSuffix(text, "<end>"):
		t.Errorf("dump: the head or the tail is gone: %.40q … %.40q", text, text[len(text)-40:])
	case !strings.Contains(text, note):
		t.Errorf("dump: no note %q", note)
	case len(text) > agent.DefaultMaxResultBytes+300 || len(text) < agent.DefaultMaxResultBytes-2:
		t.Errorf("dump: %d bytes kept, want about %d", len(text), agent.DefaultMaxResultBytes)
	case !strings.Contains(text, "é"+"\n\n[…") || strings.ContainsRune(text, '\uFFFD'):
		t.Errorf("dump: a rune was split")
	}

	parts := resultParts(msgs, "c2")
	var kinds []string
	for _, p := range parts {
		kinds = append(kinds, string(p.Type))
	}
	// The head ends in the first part; the second lies in the middle and
	// goes; the tail starts in the third.
	if diff := cmp.Diff([]string{"text", "image", "text"}, kinds); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
	if n := textBytes(parts); n > agent.DefaultMaxResultBytes+300 {
		t.Errorf("parts: %d bytes of text", n)
	}
	if len(parts) == 3 && (!strings.HasPrefix(parts[0].Text, "head ") || !strings.Contains(parts[0].Text, "bytes cut from the middle") ||
		!strings.HasSuffix(parts[2].Text, " tail") || strings.Contains(parts[0].Text+parts[2].Text, "bbb")) {
		t.Errorf("parts: head %.20q…, tail …%q", parts[0].Text, parts[2].Text[len(parts[2].Text)-10:])
	}

	if small := resultParts(msgs, "c3"); textBytes(small) != agent.DefaultMaxResultBytes {
		t.Errorf("a result of exactly the bound was changed: %d bytes", textBytes(small))
	}
	// What the model is sent next is the cut result.
	if got := textBytes(resultParts(model.Requests()[1].Messages, "c1")); got > agent.DefaultMaxResultBytes+300 {
		t.Errorf("the next request carries %d bytes of the result", got)
	}

	// A smaller bound from the configuration.
	model = llmtest.New(llmtest.Call(call("c4", "small", `{}`)), llmtest.Say("done"))
	a = newAgent(t, model, reg, agent.Config{MaxResultBytes: 1000})
	if _, err := runAll(t, a, llm.UserText("again", 1)); err != nil {
		t.Fatal(err)
	}
	if n := textBytes(resultParts(a.Messages(), "c4")); n > 1300 || n < 1000 {
		t.Errorf("with MaxResultBytes 1000: %d bytes", n)
	}
}

// TestEchoedInputIsBounded checks that error texts quote what the model
// sent (a tool name, invalid arguments) only in part.
func TestEchoedInputIsBounded(t *testing.T) {
	reg := tool.NewRegistry()
	err := reg.Register(tool.Tool{Name: "find", Description: "Find.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","pattern":"^[a-z]{1,10}$"}},"required":["q"]}`),
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("found"), nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	longName := strings.Repeat("n", 1<<20)
	longArg, _ := json.Marshal(map[string]string{"q": strings.Repeat("Q", 200<<10)})
	model := llmtest.New(llmtest.Call(call("c1", longName, `{}`), call("c2", "find", string(longArg)),
		call("c3", "call_tool", `{"x":"`+strings.Repeat("é", 1000)+`"}`)), llmtest.Say("done"))
	a := newAgent(t, model, reg, agent.Config{})
	if _, err := runAll(t, a, llm.UserText("go", 1)); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	for id, want := range map[string]string{
		"c1": `does not exist`,
		"c2": `Invalid arguments for tool "find"`,
		"c3": `call_tool needs`,
	} {
		got, isErr := resultText(msgs, id)
		if !isErr || !strings.Contains(got, want) {
			t.Errorf("%s: %q (error %v), want an error containing %q", id, clipped(got), isErr, want)
		}
		if len(got) > 3000 || strings.ContainsRune(got, '\uFFFD') {
			t.Errorf("%s: the error is %d bytes long (or splits a rune): %q", id, len(got), clipped(got))
		}
	}
	if got, _ := resultText(msgs, "c1"); !strings.Contains(got, fmt.Sprintf("(%d bytes)", len(longName))) {
		t.Errorf("c1: the error does not say how long the name was: %q", clipped(got))
	}
}

func clipped(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
