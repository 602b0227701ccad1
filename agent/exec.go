package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/tool"
)

// Call is one tool call on its way to execution, as hooks see it.
type Call struct {
	// ID and Name are the model's call id and tool name.
	ID, Name string
	// Args are the call's arguments, validated against the tool's schema.
	// A BeforeHook may replace them.
	Args json.RawMessage
	// Tool is the registered tool.
	Tool tool.Tool
}

// BeforeHook runs before a call executes, after its arguments have been
// validated. It may wait (for the server a tool needs, say) as long as ctx
// allows, and may replace c.Args. Returning an error blocks the call: the
// model gets an error result with the error's text.
type BeforeHook func(ctx context.Context, c *Call) error

// AfterHook runs after a call has executed (or failed) and may change its
// result before it is appended.
type AfterHook func(ctx context.Context, c *Call, res *tool.Result)

// cancelledText is the result of a call that a cancellation interrupted
// or prevented.
const cancelledText = "Tool call cancelled: the run was interrupted before the tool finished."

// execute runs an answer's tool calls and returns their results in call
// order, each result's text bounded by Config.MaxResultBytes. Preparation (lookup, validation, BeforeToolCall hooks) runs in call
// order; executions run in parallel unless the configuration or a called
// tool asks otherwise. When the run is cancelled, every call still open
// gets a cancelled result at once; tools still running are left to notice
// the cancellation of their context.
func (r *runner) execute(calls []llm.ToolCall) []llm.Message {
	a := r.a
	if len(calls) == 0 {
		return nil
	}
	results := make([]llm.Message, len(calls))
	done := make([]bool, len(calls))
	prepared := make([]*Call, len(calls))
	sequential := a.cfg.Sequential
	for i, c := range calls {
		r.emit(Event{Type: EventToolStart, Call: &calls[i]})
		p, errText := r.prepare(c)
		if errText != "" {
			results[i], done[i] = errorResult(c, errText, a.now()), true
			continue
		}
		prepared[i] = p
		sequential = sequential || p.Tool.Sequential
	}

	type outcome struct {
		i   int
		res llm.Message
	}
	out := make(chan outcome, len(calls))
	run := func(i int) {
		out <- outcome{i, r.invoke(calls[i], prepared[i])}
	}
	started := 0
	for i := range calls {
		if done[i] {
			continue
		}
		if r.ctx.Err() != nil {
			break
		}
		started++
		if sequential {
			run(i)
			o := <-out
			results[o.i], done[o.i] = o.res, true
			continue
		}
		go run(i)
	}
	if !sequential {
		for range started {
			select {
			case o := <-out:
				results[o.i], done[o.i] = o.res, true
			case <-r.ctx.Done():
			}
			if r.ctx.Err() != nil {
				break
			}
		}
	}
	// Collect whatever finished before a cancellation; the rest is
	// cancelled.
	for {
		select {
		case o := <-out:
			results[o.i], done[o.i] = o.res, true
			continue
		default:
		}
		break
	}
	for i, c := range calls {
		if !done[i] {
			results[i] = errorResult(c, cancelledText, a.now())
		}
		results[i].Content = boundResult(results[i].Content, a.maxResultBytes())
		r.emit(Event{Type: EventToolEnd, Call: &calls[i], Message: &results[i]})
	}
	return results
}

// maxErrorBytes bounds the text of an error a call's result quotes
// (argument validation, a hook's refusal), which may repeat what the model
// sent.
const maxErrorBytes = 2048

// maxResultBytes returns the bound on a result's text.
func (a *Agent) maxResultBytes() int {
	if a.cfg.MaxResultBytes > 0 {
		return a.cfg.MaxResultBytes
	}
	return DefaultMaxResultBytes
}

// prepare awaits the tool, finds it, validates the arguments and runs the
// BeforeToolCall hooks. It returns the error text of a call that must not
// run.
func (r *runner) prepare(c llm.ToolCall) (*Call, string) {
	a := r.a
	if a.cfg.Await != nil {
		if err := a.cfg.Await(r.ctx, c.Name, c.Arguments); err != nil && r.ctx.Err() != nil {
			return nil, cancelledText
		}
	}
	t, ok := a.cfg.Tools.Get(c.Name)
	switch {
	case !ok && slices.Contains(a.cfg.Tools.Pending(), c.Name):
		why := "the server that provides it has not registered it"
		if a.cfg.Unavailable != nil {
			if s := a.cfg.Unavailable(c.Name); s != "" {
				why = s
			}
		}
		return nil, fmt.Sprintf("Tool %s is not available: %s.", quoteName(c.Name), why)
	case !ok && c.Name == llm.CallToolName:
		return nil, fmt.Sprintf(`call_tool needs {"name": "<a loaded tool>", "arguments": {...}}; got %s`, clip(c.Arguments, 200))
	case !ok:
		return nil, fmt.Sprintf("Tool %s does not exist. Call only the tools you have been given.", quoteName(c.Name))
	case !a.cfg.Tools.IsActive(c.Name) && t.Exposure.Loadable():
		return nil, fmt.Sprintf("Tool %s is not loaded. Load it with tool_search first.", quoteName(c.Name))
	case !a.cfg.Tools.IsActive(c.Name):
		return nil, fmt.Sprintf("Tool %s is not available.", quoteName(c.Name))
	case t.Handler == nil:
		return nil, fmt.Sprintf("Tool %s cannot be run here: it has no implementation.", quoteName(c.Name))
	}
	args, err := a.validator.Prepare(r.ctx, t, c.Arguments)
	if err != nil {
		return nil, invalidText(r.ctx, c.Name, err)
	}
	call := &Call{ID: c.ID, Name: c.Name, Args: args, Tool: t}
	for _, h := range a.cfg.BeforeToolCall {
		if err := h(r.ctx, call); err != nil {
			return nil, fmt.Sprintf("Tool call %s was blocked: %s", quoteName(c.Name), clipText(err.Error(), maxErrorBytes))
		}
	}
	return call, ""
}

// invoke runs a prepared call ([tool.Run]: a panic becomes an error
// result), then the AfterToolCall hooks.
func (r *runner) invoke(c llm.ToolCall, call *Call) llm.Message {
	a := r.a
	res, err := tool.Run(r.ctx, call.Tool, call.Args)
	var panicked *tool.PanicError
	switch {
	case errors.As(err, &panicked):
		a.cfg.Logger.Error("tool panicked", "tool", call.Name, "panic", panicked.Value, "stack", string(panicked.Stack))
		res = tool.ErrorResult(fmt.Sprintf("Tool %q failed: it panicked: %v", call.Name, panicked.Value))
	case errors.Is(err, tool.ErrCancelled):
		res = tool.ErrorResult(cancelledText)
	case err != nil:
		res = tool.ErrorResult(fmt.Sprintf("Tool %q failed: %v", call.Name, err))
	}
	for _, h := range a.cfg.AfterToolCall {
		h(r.ctx, call, res)
	}
	return resultMessage(c, res, a.now())
}

// invalidText is the result text of a call whose arguments
// [tool.Validator.Prepare] refused with err.
func invalidText(ctx context.Context, name string, err error) string {
	var slow *tool.SlowSchemaError
	switch {
	case errors.Is(err, tool.ErrCancelled) || (ctx.Err() != nil && errors.Is(err, ctx.Err())):
		return cancelledText
	case errors.As(err, &slow):
		where := fmt.Sprintf("the value %q", clipText(slow.Value, 40))
		if loc := slow.Location; loc != "" {
			param, _, _ := strings.Cut(strings.TrimPrefix(loc, "/"), "/")
			where = fmt.Sprintf("parameter %q (at %s)", clipText(param, 80), clipText(loc, 200))
		}
		return fmt.Sprintf("Tool %s was not called: checking its arguments was abandoned because the pattern %q "+
			"in its schema is too slow to match %s; all the pattern checks of one call get %v. "+
			"The tool's schema is at fault, not necessarily the arguments: shorter values may pass.",
			quoteName(name), clipText(slow.Pattern, 80), where, slow.Budget)
	}
	return fmt.Sprintf("Invalid arguments for tool %s: %s", quoteName(name), clipText(err.Error(), maxErrorBytes))
}

// resultMessage turns a tool result into a transcript message.
func resultMessage(c llm.ToolCall, res *tool.Result, now int64) llm.Message {
	m := llm.Message{Role: llm.RoleToolResult, ToolCallID: c.ID, ToolName: c.Name, IsError: res.IsError, Timestamp: now}
	for _, part := range res.Content {
		if part.MIMEType != "" || part.Data != nil {
			m.Content = append(m.Content, llm.Part{Type: llm.PartImage, MIMEType: part.MIMEType, Data: part.Data})
			continue
		}
		m.Content = append(m.Content, llm.Text(part.Text))
	}
	if res.Details != nil {
		if b, err := json.Marshal(res.Details); err == nil {
			m.Details = b
		}
	}
	return m
}

// errorResult is an error result with one text part.
func errorResult(c llm.ToolCall, text string, now int64) llm.Message {
	return llm.Message{Role: llm.RoleToolResult, ToolCallID: c.ID, ToolName: c.Name, IsError: true,
		Content: []llm.Part{llm.Text(text)}, Timestamp: now}
}

// closeCalls answers every call with the same error text.
func closeCalls(calls []llm.ToolCall, text string, now int64) []llm.Message {
	out := make([]llm.Message, len(calls))
	for i, c := range calls {
		out[i] = errorResult(c, text, now)
	}
	return out
}

// clip returns at most n bytes of b as text, whole runes, marking a cut.
func clip(b []byte, n int) string { return clipText(string(b), n) }
