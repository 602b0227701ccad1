package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
	"github.com/toolshelf/toolshelf/tool"
	"github.com/toolshelf/toolshelf/transcript"
)

// clock returns a deterministic time source: 1000 ms, 2000 ms, ...
func clock() func() time.Time {
	var n atomic.Int64
	return func() time.Time { return time.UnixMilli(1000 * n.Add(1)) }
}

func echo(name string) tool.Tool {
	return tool.Tool{Name: name, Description: "Echo " + name + ".",
		Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`),
		Handler: tool.HandlerFunc(func(_ context.Context, args json.RawMessage) (*tool.Result, error) {
			return tool.TextResult(name + ":" + string(args)), nil
		})}
}

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// runAll runs the agent to the end and returns its events and error.
func runAll(t *testing.T, a *agent.Agent, prompts ...llm.Message) ([]agent.Event, error) {
	t.Helper()
	var events []agent.Event
	for ev, err := range a.Run(context.Background(), prompts...) {
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	return events, nil
}

func newAgent(t *testing.T, model llm.Model, reg *tool.Registry, cfg agent.Config) *agent.Agent {
	t.Helper()
	cfg.Model, cfg.Tools = model, reg
	if cfg.Now == nil {
		cfg.Now = clock()
	}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func toolNames(ts []llm.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// roles sums up a transcript as role[:detail] strings.
func roles(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		s := string(m.Role)
		switch m.Role {
		case llm.RoleSystem:
			if len(m.ToolsAdded) > 0 {
				s += fmt.Sprintf("+%v", toolNames(m.ToolsAdded))
			}
			for _, r := range m.ToolsRemoved {
				s += "-" + r.Name
			}
		case llm.RoleToolResult:
			s += ":" + m.ToolCallID
			if m.IsError {
				s += "!"
			}
		case llm.RoleAssistant:
			s += ":" + string(m.StopReason)
		}
		out = append(out, s)
	}
	return out
}

func TestConvertsInitialPromptAndToolsIntoTranscriptState(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Register(echo("base"))
	model := llmtest.New(llmtest.Say("hello"))
	a := newAgent(t, model, reg, agent.Config{SystemPrompt: "You are terse."})
	if _, err := runAll(t, a, llm.UserText("hi", 5)); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	if diff := cmp.Diff([]string{"system+[base]", "user", "assistant:stop"}, roles(msgs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if msgs[0].Timestamp != 0 || llm.ContentText(msgs[0].Content, "") != "You are terse." {
		t.Errorf("head = %+v", msgs[0])
	}
	if got := a.SystemPrompt(); got != "You are terse." {
		t.Errorf("SystemPrompt() = %q", got)
	}
	// The request carried the transcript, head first.
	req := model.Requests()[0]
	if diff := cmp.Diff(roles(msgs[:2]), roles(req.Messages)); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	// A transcript that already starts with a system message is not
	// seeded again.
	b := newAgent(t, llmtest.New(llmtest.Say("x")), reg, agent.Config{SystemPrompt: "ignored", Messages: msgs})
	if _, err := runAll(t, b, llm.UserText("again", 9)); err != nil {
		t.Fatal(err)
	}
	if got := b.Messages(); len(got) != 5 || got[3].Role != llm.RoleUser {
		t.Errorf("continued transcript = %v", roles(got))
	}
}

// TestDeclaresToolLoadoutChangesBeforeTheNextRequest: a tool activated
// during a tool call is declared before the next request, not in the
// request that led to it.
func TestDeclaresToolLoadoutChangesBeforeTheNextRequest(t *testing.T) {
	reg := tool.NewRegistry()
	late := echo("late")
	late.Exposure = tool.Deferred
	loader := tool.Tool{Name: "loader", Description: "Loads late.", Handler: tool.HandlerFunc(
		func(context.Context, json.RawMessage) (*tool.Result, error) {
			reg.Activate("late")
			return tool.TextResult("loaded"), nil
		})}
	reg.Register(loader, late)
	model := llmtest.New(llmtest.Call(call("c1", "loader", `{}`)), llmtest.Call(call("c2", "late", `{"x":"y"}`)), llmtest.Say("done"))
	a := newAgent(t, model, reg, agent.Config{})
	if _, err := runAll(t, a, llm.UserText("go", 1)); err != nil {
		t.Fatal(err)
	}
	want := []string{"system+[loader]", "user", "assistant:toolUse", "toolResult:c1", "system+[late]",
		"assistant:toolUse", "toolResult:c2", "assistant:stop"}
	if diff := cmp.Diff(want, roles(a.Messages())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	reqs := model.Requests()
	if got := toolNames(transcript.CurrentTools(reqs[0].Messages)); !cmp.Equal(got, []string{"loader"}) {
		t.Errorf("first request declares %v", got)
	}
	if got := toolNames(transcript.CurrentTools(reqs[1].Messages)); !cmp.Equal(got, []string{"loader", "late"}) {
		t.Errorf("second request declares %v", got)
	}
	if res := a.Messages()[6]; res.IsError || llm.ContentText(res.Content, "") != `late:{"x":"y"}` {
		t.Errorf("late's result = %+v", res)
	}
}

// TestMergesToolChangesIntoAPendingSystemMessage: a system message among
// the prompts carries the tool delta; no separate update is added.
func TestMergesToolChangesIntoAPendingSystemMessage(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Register(echo("a"))
	a := newAgent(t, llmtest.New(llmtest.Say("1"), llmtest.Say("2")), reg, agent.Config{})
	if _, err := runAll(t, a, llm.UserText("first", 1)); err != nil {
		t.Fatal(err)
	}
	reg.Register(echo("b"))
	update := llm.Message{Role: llm.RoleSystem, Sections: llm.Sections{llm.Set("rules", "be brief")}, Timestamp: 7}
	if _, err := runAll(t, a, update, llm.UserText("second", 8)); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	want := []string{"system+[a]", "user", "assistant:stop", "system+[b]", "user", "assistant:stop"}
	if diff := cmp.Diff(want, roles(msgs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s, ok := msgs[3].Sections.Get("rules"); !ok || s != "be brief" || msgs[3].Timestamp != 7 {
		t.Errorf("the pending message lost its own fields: %+v", msgs[3])
	}
}

// TestRewritesPendingToolDeclarationsToMatchTheExecutableSet: what a
// pending message claims about tools is replaced by the real difference.
func TestRewritesPendingToolDeclarationsToMatchTheExecutableSet(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Register(echo("a"), echo("b"))
	a := newAgent(t, llmtest.New(llmtest.Say("1"), llmtest.Say("2")), reg, agent.Config{})
	if _, err := runAll(t, a, llm.UserText("first", 1)); err != nil {
		t.Fatal(err)
	}
	reg.Deactivate("b")
	claims := llm.Message{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{echo("ghost").Declaration()},
		ToolsRemoved: []llm.ToolRef{{Name: "a"}}, Timestamp: 9}
	if _, err := runAll(t, a, claims, llm.UserText("second", 10)); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	if got := roles(msgs)[3]; got != "system-b" {
		t.Errorf("pending message = %s, want only the removal of b", got)
	}
	if got := toolNames(a.DeclaredTools()); !cmp.Equal(got, []string{"a"}) {
		t.Errorf("declared %v", got)
	}
}

// TestPendingToolFieldsThatChangeNothingAreDropped and the other §2.2
// cases of the reference.
func TestDeclareCases(t *testing.T) {
	a, b := echo("a").Declaration(), echo("b").Declaration()
	committed := transcript.Replay([]llm.Message{{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{a}}})
	user := llm.UserText("u", 1)
	tests := []struct {
		name    string
		pending []llm.Message
		tools   []llm.Tool
		want    []string
		same    bool // the very same slice comes back
	}{
		{"no change, no anchor", []llm.Message{user}, []llm.Tool{a}, []string{"user"}, true},
		{"standalone update before the first non-system message", []llm.Message{user}, []llm.Tool{a, b},
			[]string{"system+[b]", "user"}, false},
		{"standalone update at the end when all pending are system",
			nil, []llm.Tool{a, b}, []string{"system+[b]"}, false},
		{"no change and an anchor without tool fields", []llm.Message{{Role: llm.RoleSystem}, user}, []llm.Tool{a},
			[]string{"system", "user"}, true},
		{"pending no-op tool fields are dropped",
			[]llm.Message{{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{a}, ToolsRemoved: []llm.ToolRef{{Name: "zzz"}}}, user},
			[]llm.Tool{a}, []string{"system", "user"}, false},
		{"pending declares the delta (rebuilt)",
			[]llm.Message{{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{b}}, user}, []llm.Tool{a, b},
			[]string{"system+[b]", "user"}, false},
		{"the last pending system message carries the delta",
			[]llm.Message{{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{b}}, user, {Role: llm.RoleSystem}},
			[]llm.Tool{a, b}, []string{"system+[b]", "user", "system"}, false},
		{"an earlier pending declaration counts; the anchor removes",
			[]llm.Message{{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{b}}, user, {Role: llm.RoleSystem}},
			[]llm.Tool{a}, []string{"system+[b]", "user", "system-b"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := transcript.Declare(committed, tt.pending, tt.tools, 42)
			if diff := cmp.Diff(tt.want, roles(got), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tt.same && len(got) > 0 && &got[0] != &tt.pending[0] {
				t.Error("pending was copied although nothing changed")
			}
		})
	}
}

func TestContinueDeclaresTools(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Register(echo("a"))
	prior := []llm.Message{{Role: llm.RoleSystem, ToolsAdded: []llm.Tool{echo("a").Declaration()}}, llm.UserText("q", 1)}
	model := llmtest.New(llmtest.Say("answer"))
	a := newAgent(t, model, reg, agent.Config{Messages: prior})
	reg.Register(echo("b"))
	for _, err := range a.Continue(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"system+[a]", "user", "system+[b]", "assistant:stop"}
	if diff := cmp.Diff(want, roles(a.Messages())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := toolNames(transcript.CurrentTools(model.Requests()[0].Messages)); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("the first request after continue declares %v", got)
	}
}

func TestContinueNeedsAConversation(t *testing.T) {
	reg := tool.NewRegistry()
	for name, msgs := range map[string][]llm.Message{
		"empty":       nil,
		"only system": {{Role: llm.RoleSystem, Content: []llm.Part{llm.Text("p")}}},
		"ends with the model's answer": {llm.UserText("q", 1), {Role: llm.RoleAssistant, Content: []llm.Part{llm.Text("a")},
			StopReason: llm.StopEnd}},
	} {
		a := newAgent(t, llmtest.New(), reg, agent.Config{Messages: msgs})
		for _, err := range a.Continue(context.Background()) {
			if !errors.Is(err, agent.ErrCannotContinue) {
				t.Errorf("%s: err = %v", name, err)
			}
		}
	}
	// A transcript that merely ends with a system message can continue.
	msgs := []llm.Message{llm.UserText("q", 1), {Role: llm.RoleSystem, Content: []llm.Part{llm.Text("note")}}}
	a := newAgent(t, llmtest.New(llmtest.Say("ok")), reg, agent.Config{Messages: msgs})
	for _, err := range a.Continue(context.Background()) {
		if err != nil {
			t.Errorf("continue after a system message: %v", err)
		}
	}
}

// TestRestoresTheTranscriptBaselineWhenReset: Reset keeps what the
// transcript told the model, as one leading message.
func TestRestoresTheTranscriptBaselineWhenReset(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Register(echo("a"))
	a := newAgent(t, llmtest.New(llmtest.Say("1")), reg, agent.Config{SystemPrompt: "base",
		Sections: llm.Sections{llm.Set("rules", "r1")}})
	if _, err := runAll(t, a, llm.UserText("q", 1)); err != nil {
		t.Fatal(err)
	}
	before, _ := transcript.CurrentSystemMessage(a.Messages())
	if err := a.Reset(); err != nil {
		t.Fatal(err)
	}
	msgs := a.Messages()
	if len(msgs) != 1 {
		t.Fatalf("after reset: %v", roles(msgs))
	}
	if diff := cmp.Diff(before, msgs[0], cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("baseline (-want +got):\n%s", diff)
	}
	empty := newAgent(t, llmtest.New(), reg, agent.Config{})
	empty.Reset()
	if got := empty.Messages(); len(got) != 0 {
		t.Errorf("reset of an empty transcript: %v", roles(got))
	}
}

func TestSectionsAreAppendedAsUpdates(t *testing.T) {
	reg := tool.NewRegistry()
	a := newAgent(t, llmtest.New(llmtest.Say("1"), llmtest.Say("2"), llmtest.Say("3")), reg,
		agent.Config{SystemPrompt: "base", Sections: llm.Sections{llm.Set("servers", "none")}})
	runAll(t, a, llm.UserText("q1", 1))
	a.SetSections(llm.Sections{llm.Set("servers", "github")})
	runAll(t, a, llm.UserText("q2", 2))
	runAll(t, a, llm.UserText("q3", 3)) // unchanged: no update
	msgs := a.Messages()
	want := []string{"system", "user", "assistant:stop", "system", "user", "assistant:stop", "user", "assistant:stop"}
	if diff := cmp.Diff(want, roles(msgs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s, _ := msgs[3].Sections.Get("servers"); s != "github" || llm.ContentText(msgs[0].Content, "") != "base" {
		t.Errorf("update %+v", msgs[3])
	}
	if got := a.SystemPrompt(); got != "base\n\ngithub" {
		t.Errorf("SystemPrompt() = %q", got)
	}
}

func TestSteeringJoinsTheNextRequest(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Register(echo("a"))
	var a *agent.Agent
	model := llmtest.New(
		llmtest.Reply{Func: func(*llm.Request) (llm.Message, error) {
			a.Steer(llm.UserText("also this", 50))
			return llmtest.Call(call("c1", "a", `{}`)).Message, nil
		}},
		llmtest.Say("done"))
	a = newAgent(t, model, reg, agent.Config{})
	if _, err := runAll(t, a, llm.UserText("q", 1)); err != nil {
		t.Fatal(err)
	}
	want := []string{"system+[a]", "user", "assistant:toolUse", "toolResult:c1", "user", "assistant:stop"}
	if diff := cmp.Diff(want, roles(a.Messages())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRecorderReceivesEveryMessage(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Register(echo("a"))
	var rec recorder
	a := newAgent(t, llmtest.New(llmtest.Call(call("c1", "a", `{}`)), llmtest.Say("ok")), reg, agent.Config{Recorder: &rec})
	runAll(t, a, llm.UserText("q", 1))
	if diff := cmp.Diff(roles(a.Messages()), roles(rec.msgs)); diff != "" {
		t.Errorf("(-transcript +recorded):\n%s", diff)
	}
	// A failing recorder stops the run; nothing unrecorded is appended.
	rec.fail = errors.New("disk full")
	_, err := runAll(t, a, llm.UserText("more", 9))
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("err = %v", err)
	}
	if diff := cmp.Diff(roles(a.Messages()), roles(rec.msgs)); diff != "" {
		t.Errorf("after the failure (-transcript +recorded):\n%s", diff)
	}
}

type recorder struct {
	msgs []llm.Message
	fail error
}

func (r *recorder) Append(m llm.Message) error {
	if r.fail != nil {
		return r.fail
	}
	r.msgs = append(r.msgs, m)
	return nil
}

func TestMaxTurns(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Register(echo("a"))
	model := llmtest.New(llmtest.Call(call("c1", "a", `{}`)), llmtest.Call(call("c2", "a", `{}`)))
	a := newAgent(t, model, reg, agent.Config{MaxTurns: 2})
	_, err := runAll(t, a, llm.UserText("q", 1))
	if !errors.Is(err, agent.ErrMaxTurns) {
		t.Errorf("err = %v", err)
	}
}

// TestEventsCarryTheirTurn: every event of a turn, not only its start and
// end, says which turn it belongs to.
func TestEventsCarryTheirTurn(t *testing.T) {
	reg := tool.NewRegistry()
	reg.Register(echo("e"))
	model := llmtest.New(llmtest.Call(call("c1", "e", `{}`)), llmtest.Say("done"))
	events, err := runAll(t, newAgent(t, model, reg, agent.Config{}), llm.UserText("go", 1))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range events {
		s := fmt.Sprintf("%d:%s", ev.Turn, ev.Type)
		if ev.Type == agent.EventMessage {
			s += ":" + string(ev.Message.Role)
		}
		got = append(got, s)
	}
	want := []string{"0:agent_start", "0:turn_start", "0:message:system", "0:message:user", "0:stream", "0:stream", "0:stream", "0:message:assistant",
		"0:tool_start", "0:tool_end", "0:message:toolResult", "0:turn_end",
		"1:turn_start", "1:stream", "1:stream", "1:stream", "1:message:assistant", "1:turn_end", "1:agent_end"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestHeadToolsKeepsTheHeadShared: with HeadTools, tools outside it are
// declared by an update after the head, before the prompt, so two
// conversations with different tools send the same head.
func TestHeadToolsKeepsTheHeadShared(t *testing.T) {
	var heads []string
	for _, extra := range []string{"b", "c"} {
		reg := tool.NewRegistry()
		reg.Register(echo("a"), echo(extra))
		model := llmtest.New(llmtest.Say("done"))
		a := newAgent(t, model, reg, agent.Config{SystemPrompt: "base",
			HeadTools: func(d llm.Tool) bool { return d.Name == "a" }})
		events, err := runAll(t, a, llm.UserText("go", 1))
		if err != nil {
			t.Fatal(err)
		}
		if events[1].Type != agent.EventTurnStart || events[2].Type != agent.EventMessage || events[2].Message.Role != llm.RoleSystem {
			t.Errorf("the head is not the first message of turn 0: %v, %v", events[1].Type, events[2].Type)
		}
		want := []string{"system+[a]", "system+[" + extra + "]", "user", "assistant:stop"}
		if diff := cmp.Diff(want, roles(a.Messages())); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if got := toolNames(transcript.CurrentTools(model.Requests()[0].Messages)); !cmp.Equal(got, []string{"a", extra}) {
			t.Errorf("the request declares %v", got)
		}
		head, _ := json.Marshal(a.Messages()[0])
		heads = append(heads, string(head))
	}
	if heads[0] != heads[1] {
		t.Errorf("the heads differ:\n%s\n%s", heads[0], heads[1])
	}
}
