package integration

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolshelf/toolshelf/agent"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/session"
	"github.com/toolshelf/toolshelf/tool"
)

// The helpers of package agent's tests that the agent tests here use.

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

// record appends each message to the session.
func record(s *session.Session) agent.Recorder {
	return agent.RecorderFunc(func(m llm.Message) error {
		_, err := s.Append(m)
		return err
	})
}
