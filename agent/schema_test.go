package agent_test

import (
	"context"
	"encoding/json"
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
