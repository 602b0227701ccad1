package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/tool"
)

// slowPatternTool has a parameter whose items must match ^(a+)+$, which
// backtracks exponentially on a run of a's followed by another character.
func slowPatternTool(name string, ran *atomic.Int32) tool.Tool {
	return tool.Tool{Name: name,
		Parameters: json.RawMessage(`{"type":"object","properties":{"values":{"type":"array","items":{"type":"string","pattern":"^(a+)+$"}}}}`),
		Handler: tool.HandlerFunc(func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
			ran.Add(1)
			return tool.TextResult("ran"), nil
		})}
}

// slowArgs is 200 strings that make ^(a+)+$ backtrack.
func slowArgs() string {
	v := make([]string, 200)
	for i := range v {
		v[i] = strings.Repeat("a", 40) + "!"
	}
	b, _ := json.Marshal(map[string]any{"values": v})
	return string(b)
}

func TestSlowPatternAbandonsValidation(t *testing.T) {
	// Before, each of the 200 matches ran 0.1-0.2 s and then counted as
	// "does not match": 40 s outside any timeout, and a wrong answer.
	var ran atomic.Int32
	reg := tool.NewRegistry()
	reg.Register(slowPatternTool("check", &ran))
	model := llmtest.New(llmtest.Call(
		call("slow", "check", slowArgs()),
		call("fine", "check", `{"values":["aaa","a"]}`),
		call("wrong", "check", `{"values":["b"]}`),
	), llmtest.Say("done"))
	a := newAgent(t, model, reg, agent.Config{})
	if _, err := runAll(t, a, llm.UserText("q", 1)); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	checkCallsAnswered(t, msgs)
	got, isErr := resultText(msgs, "slow")
	for _, want := range []string{`Tool "check" was not called: checking its arguments was abandoned`,
		`"^(a+)+$"`, `parameter "values" (at /values/0)`, "1s"} {
		if !isErr || !strings.Contains(got, want) {
			t.Errorf("slow: %q (error %v), want an error containing %q", got, isErr, want)
		}
	}
	// Calls of the same tool in the same turn validate in parallel, each
	// with a budget of its own: the slow call spends only its own.
	if got, isErr := resultText(msgs, "fine"); isErr || got != "ran" {
		t.Errorf("fine: %q (error %v)", got, isErr)
	}
	if got, isErr := resultText(msgs, "wrong"); !isErr || !strings.Contains(got, `Invalid arguments for tool "check": at /values/0`) {
		t.Errorf("wrong: %q (error %v)", got, isErr)
	}
	if ran.Load() != 1 {
		t.Errorf("the tool ran %d times, want once (the fine call)", ran.Load())
	}
}

// propsSchema is an object schema of n string properties.
func propsSchema(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"type":"string"}`, i)
	}
	b.WriteString(`}}`)
	return json.RawMessage(b.String())
}

func TestHugeSchemasAreNotCompiled(t *testing.T) {
	// The schema compiler's time grows with the square of the subschemas
	// (40,000 properties took 9 s, in the turn): a schema past the bound is
	// not enforced, as one that does not compile; below it, it is.
	reg := tool.NewRegistry()
	reg.Register(
		tool.Tool{Name: "huge", Parameters: propsSchema(20_000), Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("ran"), nil
		})},
		tool.Tool{Name: "large", Parameters: propsSchema(2_000), Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			return tool.TextResult("ran"), nil
		})},
	)
	model := llmtest.New(llmtest.Call(call("huge", "huge", `{"p0": 5}`), call("large", "large", `{"p0": 5}`)), llmtest.Say("done"))
	a := newAgent(t, model, reg, agent.Config{})
	if _, err := runAll(t, a, llm.UserText("q", 1)); err != nil {
		t.Fatal(err)
	}
	if got, isErr := resultText(a.Messages(), "huge"); isErr || got != "ran" {
		t.Errorf("huge: %q (error %v), want the tool to judge its input", got, isErr)
	}
	if got, isErr := resultText(a.Messages(), "large"); !isErr || !strings.Contains(got, "at /p0: got number, want string") {
		t.Errorf("large: %q (error %v), want the schema enforced", got, isErr)
	}
}
