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

// refSiblingSchema is a draft-07 schema whose property a takes a string by
// reference and limits its length beside the reference. Draft-07 ignores
// a keyword beside $ref; providers, which read every schema as 2020-12,
// apply it, so the model has been told the limit holds.
const refSiblingSchema = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s","maxLength":1}}}`

// TestLoopRefusesWhatTheDeclaredSchemaForbids: a call that breaks the
// limit beside the $ref gets a validation error and does not run; one
// within it runs.
func TestLoopRefusesWhatTheDeclaredSchemaForbids(t *testing.T) {
	var ran atomic.Int32
	reg := tool.NewRegistry()
	if err := reg.Register(tool.Tool{Name: "short", Parameters: json.RawMessage(refSiblingSchema),
		Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			ran.Add(1)
			return tool.TextResult("ran"), nil
		})}); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(llmtest.Call(call("long", "short", `{"a":"long"}`), call("ok", "short", `{"a":"x"}`)), llmtest.Say("done"))
	a := newAgent(t, model, reg, agent.Config{})
	if _, err := runAll(t, a, llm.UserText("q", 1)); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	if got, isErr := resultText(msgs, "long"); !isErr || !strings.HasPrefix(got, `Invalid arguments for tool "short": at /a: `) {
		t.Errorf("long: %q (error %v), want an invalid-arguments error at /a", got, isErr)
	}
	if got, isErr := resultText(msgs, "ok"); isErr || got != "ran" {
		t.Errorf("ok: %q (error %v)", got, isErr)
	}
	if n := ran.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want once", n)
	}
}
