package llmtest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/llm/llmtest"
)

func collect(t *testing.T, m llm.Model) ([]llm.Event, error) {
	t.Helper()
	var events []llm.Event
	for ev, err := range m.Stream(t.Context(), &llm.Request{}) {
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	return events, nil
}

func TestCheckStreamAcceptsScriptedStreams(t *testing.T) {
	call := llm.ToolCall{ID: "c1", Name: "t", Arguments: json.RawMessage(`{"a":1}`)}
	m := llmtest.New(
		llmtest.Say("hello"),
		llmtest.Call(call),
		llmtest.Reply{Message: llm.Message{Content: []llm.Part{{Type: llm.PartThinking, Text: "hmm"}, llm.Text("ok")}}},
		llmtest.Reply{Err: errors.New("boom")},
	)
	for i := range 5 { // the fifth finds the script exhausted
		events, err := collect(t, m)
		if cerr := llmtest.CheckStream(events, err); cerr != nil {
			t.Errorf("stream %d: %v", i, cerr)
		}
	}
}

func TestCheckStreamFindsBrokenStreams(t *testing.T) {
	start := llm.Event{Type: llm.EventStart}
	text := func(i int, s string) llm.Event { return llm.Event{Type: llm.EventTextDelta, Index: i, Delta: s} }
	call := &llm.ToolCall{ID: "c", Name: "t", Arguments: json.RawMessage(`{}`)}
	done := func(parts ...llm.Part) llm.Event {
		return llm.Event{Type: llm.EventDone, Message: &llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopEnd, Content: parts}}
	}
	callPart := llm.Part{Type: llm.PartToolCall, ToolCall: call}
	boom := errors.New("boom")
	for _, c := range []struct {
		name   string
		events []llm.Event
		err    error
		want   string
	}{
		{"second start", []llm.Event{start, start, done()}, nil, "EventStart at position 1"},
		{"event after done", []llm.Event{start, done(), text(0, "x")}, nil, "after EventDone"},
		{"error after done", []llm.Event{start, done()}, boom, "after EventDone"},
		{"no done", []llm.Event{start, text(0, "x")}, nil, "without EventDone"},
		{"done without message", []llm.Event{{Type: llm.EventDone}}, nil, "without a message"},
		{"role", []llm.Event{{Type: llm.EventDone, Message: &llm.Message{Role: llm.RoleUser, StopReason: llm.StopEnd}}}, nil, `role "user"`},
		{"stop reason", []llm.Event{{Type: llm.EventDone, Message: &llm.Message{Role: llm.RoleAssistant}}}, nil, "no stop reason"},
		{"negative usage", []llm.Event{{Type: llm.EventDone, Message: &llm.Message{Role: llm.RoleAssistant, StopReason: llm.StopEnd,
			Usage: &llm.Usage{Input: 3, Output: -1}}}}, nil, "negative tokens"},
		{"index out of range", []llm.Event{text(1, "x"), done(llm.Text("x"))}, nil, "names part 1 of 1"},
		{"wrong part type", []llm.Event{text(0, "x"), done(callPart)}, nil, "a toolCall part"},
		{"deltas not the text", []llm.Event{text(0, "ab"), done(llm.Text("abc"))}, nil, `do not end its text "abc"`},
		{"call completed twice", []llm.Event{{Type: llm.EventToolCall, ToolCall: call}, {Type: llm.EventToolCall, ToolCall: call}, done(callPart)}, nil, "a second time"},
		{"call differs", []llm.Event{{Type: llm.EventToolCall, ToolCall: &llm.ToolCall{ID: "other", Name: "t"}}, done(callPart)}, nil, "but the message holds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := llmtest.CheckStream(c.events, c.err)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("CheckStream = %v, want an error containing %q", err, c.want)
			}
		})
	}
	// Text a part began with, before its deltas, is allowed.
	if err := llmtest.CheckStream([]llm.Event{start, text(0, "c"), done(llm.Text("abc"))}, nil); err != nil {
		t.Errorf("CheckStream: %v", err)
	}
}
