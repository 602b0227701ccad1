package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/tool"
)

// checkCallsAnswered fails the test unless every tool call of the
// transcript is answered by exactly one result, after it.
func checkCallsAnswered(t *testing.T, msgs []llm.Message) {
	t.Helper()
	open := map[string]bool{}
	answered := map[string]int{}
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleAssistant:
			for _, c := range m.ToolCalls() {
				open[c.ID] = true
			}
		case llm.RoleToolResult:
			if !open[m.ToolCallID] {
				t.Errorf("result %s without an earlier call", m.ToolCallID)
			}
			answered[m.ToolCallID]++
		}
	}
	for id := range open {
		if answered[id] != 1 {
			t.Errorf("call %s has %d results, want 1", id, answered[id])
		}
	}
}

// resultText returns the text of the result of call id.
func resultText(msgs []llm.Message, id string) (string, bool) {
	for _, m := range msgs {
		if m.Role == llm.RoleToolResult && m.ToolCallID == id {
			return llm.ContentText(m.Content, ""), m.IsError
		}
	}
	return "<no result>", false
}

func TestResultsKeepCallOrderWhileToolsRunInParallel(t *testing.T) {
	reg := tool.NewRegistry()
	bDone := make(chan struct{})
	var running, maxRunning atomic.Int32
	track := func() func() {
		n := running.Add(1)
		for {
			m := maxRunning.Load()
			if n <= m || maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		return func() { running.Add(-1) }
	}
	reg.Register(
		tool.Tool{Name: "slow", Handler: tool.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
			defer track()()
			<-bDone // finishes only after fast has finished
			return tool.TextResult("slow"), nil
		})},
		tool.Tool{Name: "fast", Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			defer track()()
			defer close(bDone)
			return tool.TextResult("fast"), nil
		})},
	)
	model := llmtest.New(llmtest.Call(call("1", "slow", `{}`), call("2", "fast", `{}`)), llmtest.Say("ok"))
	a := newAgent(t, model, reg, agent.Config{})
	events, err := runAll(t, a, llm.UserText("q", 1))
	if err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	var order []string
	for _, m := range msgs {
		if m.Role == llm.RoleToolResult {
			order = append(order, llm.ContentText(m.Content, ""))
		}
	}
	if !cmp.Equal(order, []string{"slow", "fast"}) {
		t.Errorf("results in order %v, want call order", order)
	}
	var ends []string
	for _, ev := range events {
		if ev.Type == agent.EventToolEnd {
			ends = append(ends, ev.Call.ID)
		}
	}
	if !cmp.Equal(ends, []string{"1", "2"}) {
		t.Errorf("tool_end events %v", ends)
	}
	checkCallsAnswered(t, msgs)
}

func TestSequentialWhenAToolAsks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sequential bool // the tool asks
		config     bool // the configuration asks
		want       int32
	}{{"parallel", false, false, 2}, {"tool asks", true, false, 1}, {"config asks", false, true, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			reg := tool.NewRegistry()
			var running, maxRunning atomic.Int32
			gate := make(chan struct{})
			var arrived atomic.Int32
			h := tool.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
				n := running.Add(1)
				defer running.Add(-1)
				if n > maxRunning.Load() {
					maxRunning.Store(n)
				}
				// In parallel mode both calls must be inside at once
				// before either leaves; in sequential mode the first
				// may not wait for the second.
				if arrived.Add(1) == 2 {
					close(gate)
				}
				if !tc.sequential && !tc.config {
					<-gate
				}
				return tool.TextResult("ok"), nil
			})
			reg.Register(tool.Tool{Name: "t1", Handler: h, Sequential: tc.sequential}, tool.Tool{Name: "t2", Handler: h})
			model := llmtest.New(llmtest.Call(call("1", "t1", `{}`), call("2", "t2", `{}`)), llmtest.Say("ok"))
			a := newAgent(t, model, reg, agent.Config{Sequential: tc.config})
			if _, err := runAll(t, a, llm.UserText("q", 1)); err != nil {
				t.Fatal(err)
			}
			if got := maxRunning.Load(); got != tc.want {
				t.Errorf("at most %d calls ran at once, want %d", got, tc.want)
			}
		})
	}
}

func TestCallsThatMustNotRun(t *testing.T) {
	reg := tool.NewRegistry()
	deferred := echo("shelved")
	deferred.Exposure = tool.Deferred
	reg.Register(echo("e"), deferred, tool.Tool{Name: "stub"},
		tool.Tool{Name: "boom", Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			panic("kaboom")
		})},
		tool.Tool{Name: "fails", Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
			return nil, errors.New("backend down")
		})},
	)
	reg.Restore(append(reg.ActiveNames(), "later")...)
	model := llmtest.New(llmtest.Call(
		call("bad-type", "e", `{"x": 5}`),
		call("bad-json", "e", `{"x": `),
		call("not-object", "e", `[1]`),
		call("shelved", "shelved", `{}`),
		call("unknown", "nope", `{}`),
		call("bad-bridge", "call_tool", `{"arguments": {}}`),
		call("pending", "later", `{}`),
		call("stub", "stub", `{}`),
		call("boom", "boom", `{}`),
		call("fails", "fails", `{}`),
		call("ok", "e", ``),
	), llmtest.Say("done"))
	a := newAgent(t, model, reg, agent.Config{})
	if _, err := runAll(t, a, llm.UserText("q", 1)); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	checkCallsAnswered(t, msgs)
	for id, want := range map[string]string{
		"bad-type":   `Invalid arguments for tool "e": at /x: got number, want string`,
		"bad-json":   `Invalid arguments for tool "e": the arguments are not valid JSON`,
		"not-object": `Invalid arguments for tool "e": the arguments must be a JSON object`,
		"shelved":    `Tool "shelved" is not loaded. Load it with tool_search first.`,
		"unknown":    `Tool "nope" does not exist.`,
		"bad-bridge": `call_tool needs {"name": "<a loaded tool>", "arguments": {...}}; got {"arguments": {}}`,
		"pending":    `Tool "later" is not available: the server that provides it has not registered it.`,
		"stub":       `Tool "stub" cannot be run here`,
		"boom":       `Tool "boom" failed: it panicked: kaboom`,
		"fails":      `Tool "fails" failed: backend down`,
	} {
		got, isErr := resultText(msgs, id)
		if !isErr || !strings.Contains(got, want) {
			t.Errorf("%s: %q (error %v), want an error containing %q", id, got, isErr, want)
		}
	}
	if got, isErr := resultText(msgs, "ok"); isErr || got != "e:{}" {
		t.Errorf("ok: %q (error %v)", got, isErr)
	}
}

func TestHooks(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Register(echo("e"), echo("guarded"))
	var seen []string
	before := func(_ context.Context, c *agent.Call) error {
		seen = append(seen, c.ID+":"+string(c.Args))
		if c.Name == "guarded" {
			return errors.New("not today")
		}
		c.Args = json.RawMessage(`{"x":"rewritten"}`)
		return nil
	}
	after := func(_ context.Context, c *agent.Call, res *tool.Result) {
		res.Content = append(res.Content, tool.Content{Text: "+after"})
	}
	model := llmtest.New(llmtest.Call(call("1", "e", `{"x":"orig"}`), call("2", "guarded", `{}`)), llmtest.Say("ok"))
	a := newAgent(t, model, reg, agent.Config{BeforeToolCall: []agent.BeforeHook{before},
		AfterToolCall: []agent.AfterHook{after}})
	if _, err := runAll(t, a, llm.UserText("q", 1)); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	if got, _ := resultText(msgs, "1"); got != `e:{"x":"rewritten"}+after` {
		t.Errorf("result 1 = %q", got)
	}
	if got, isErr := resultText(msgs, "2"); !isErr || got != `Tool call "guarded" was blocked: not today` {
		t.Errorf("result 2 = %q", got)
	}
	if !cmp.Equal(seen, []string{`1:{"x":"orig"}`, `2:{}`}) {
		t.Errorf("hooks saw %v", seen)
	}
}

func TestOutputLimitStopsToolCalls(t *testing.T) {
	reg := tool.NewRegistry()
	var ran atomic.Bool
	reg.Register(tool.Tool{Name: "w", Handler: tool.HandlerFunc(func(context.Context, json.RawMessage) (*tool.Result, error) {
		ran.Store(true)
		return tool.TextResult("ran"), nil
	})})
	reply := llmtest.Call(call("1", "w", `{"content": "trunc`))
	reply.Message.StopReason = llm.StopLength
	a := newAgent(t, llmtest.New(reply, llmtest.Say("retrying")), reg, agent.Config{})
	if _, err := runAll(t, a, llm.UserText("q", 1)); err != nil {
		t.Fatal(err)
	}
	want := `Tool call "w" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.`
	if got, isErr := resultText(a.Messages(), "1"); !isErr || got != want || ran.Load() {
		t.Errorf("result %q (error %v), tool ran %v", got, isErr, ran.Load())
	}
}

func TestStreamFailureIsRecorded(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Register(echo("e"))
	reply := llmtest.Call(call("1", "e", `{}`))
	reply.Err = errors.New("connection reset")
	a := newAgent(t, llmtest.New(reply), reg, agent.Config{})
	_, err := runAll(t, a, llm.UserText("q", 1))
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("err = %v", err)
	}
	msgs := a.Messages()
	last := msgs[len(msgs)-1]
	if last.Role != llm.RoleAssistant || last.StopReason != llm.StopError || last.ErrorMessage != "connection reset" {
		t.Errorf("last message %+v", last)
	}
	checkCallsAnswered(t, msgs)
}

// TestCancellationAnswersEveryOpenCall cancels a run while one tool runs
// and another waits; both get a cancelled result, and the agent can run
// again.
func TestCancellationAnswersEveryOpenCall(t *testing.T) {
	reg := tool.NewRegistry()
	started := make(chan struct{})
	reg.Register(
		tool.Tool{Name: "hang", Handler: tool.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		}), Sequential: true},
		echo("next"),
	)
	model := llmtest.New(llmtest.Call(call("1", "hang", `{}`), call("2", "next", `{}`)), llmtest.Say("after"))
	a := newAgent(t, model, reg, agent.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	var err error
	for _, e := range a.Run(ctx, llm.UserText("q", 1)) {
		if e != nil {
			err = e
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	msgs := a.Messages()
	checkCallsAnswered(t, msgs)
	for _, id := range []string{"1", "2"} {
		if got, isErr := resultText(msgs, id); !isErr || !strings.Contains(got, "cancelled") {
			t.Errorf("call %s: %q", id, got)
		}
	}
	if _, err := runAll(t, a, llm.UserText("again", 2)); err != nil {
		t.Errorf("a run after the cancellation: %v", err)
	}
}

// TestCancelledStreamClosesItsCalls: a stream that is cancelled after a tool
// call arrived records the partial answer and answers the call.
func TestCancelledStreamClosesItsCalls(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Register(echo("e"))
	reply := llmtest.Call(call("1", "e", `{}`))
	reply.Block = true
	a := newAgent(t, llmtest.New(reply), reg, agent.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	for ev, e := range a.Run(ctx, llm.UserText("q", 1)) {
		if ev.Type == agent.EventStream && ev.Stream.Type == llm.EventToolCall {
			cancel()
		}
		if e != nil {
			err = e
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	msgs := a.Messages()
	checkCallsAnswered(t, msgs)
	if m := msgs[len(msgs)-2]; m.Role != llm.RoleAssistant || m.StopReason != llm.StopAborted || len(m.ToolCalls()) != 1 {
		t.Errorf("answer %+v", m)
	}
}

// TestStoppingEarlyLeavesAConsistentTranscript: a consumer that stops
// ranging mid-run cancels it; the calls are still answered.
func TestStoppingEarlyLeavesAConsistentTranscript(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Register(tool.Tool{Name: "hang", Handler: tool.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (*tool.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})})
	a := newAgent(t, llmtest.New(llmtest.Call(call("1", "hang", `{}`))), reg, agent.Config{})
	for ev := range a.Run(context.Background(), llm.UserText("q", 1)) {
		if ev.Type == agent.EventToolStart {
			break
		}
	}
	checkCallsAnswered(t, a.Messages())
	if got, _ := resultText(a.Messages(), "1"); !strings.Contains(got, "cancelled") {
		t.Errorf("result %q", got)
	}
}

func TestOneRunAtATime(t *testing.T) {
	reg := tool.NewRegistry()
	reply := llmtest.Say("slow")
	reply.Block = true
	a := newAgent(t, llmtest.New(reply), reg, agent.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for ev := range a.Run(ctx, llm.UserText("q", 1)) {
		if ev.Type == agent.EventStream {
			for _, err := range a.Run(context.Background(), llm.UserText("other", 2)) {
				if !errors.Is(err, agent.ErrRunning) {
					t.Errorf("second run: %v", err)
				}
			}
			if err := a.Reset(); !errors.Is(err, agent.ErrRunning) {
				t.Errorf("Reset during a run: %v", err)
			}
			cancel()
		}
	}
}
