package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/transcript"
)

// runner is one run of the loop.
type runner struct {
	a      *Agent
	ctx    context.Context
	cancel context.CancelFunc
	yield  func(Event, error) bool
	// stopped is set when the consumer stopped ranging: events are no
	// longer delivered and the run winds down.
	stopped bool
	// turn is the turn under way, stamped on every event.
	turn int
}

// emit delivers an event unless the consumer has stopped; when it stops,
// the run's context is cancelled.
func (r *runner) emit(ev Event) {
	if r.stopped {
		return
	}
	ev.Turn = r.turn
	if !r.yield(ev, nil) {
		r.stopped = true
		r.cancel()
	}
}

// outputLimitText is the result of every tool call of an answer that hit
// the output token limit.
const outputLimitText = "Tool call %s was not executed: the response hit the output token limit, " +
	"so its arguments may be truncated. Re-issue the tool call with complete arguments."

// loop runs turns until the model answers without tool calls.
func (r *runner) loop(prompts []llm.Message) error {
	a := r.a
	r.emit(Event{Type: EventAgentStart})
	if err := r.closeOpenCalls(); err != nil {
		return err
	}
	pending := slices.Clone(prompts)
	// With HeadTools the head is written as chosen, and Declare adds the
	// other tools in an update after it; otherwise Declare completes it.
	var fixedHead *llm.Message
	if head, ok := r.headForNewTranscript(); ok {
		if a.cfg.HeadTools != nil {
			fixedHead = &head
		} else {
			pending = append([]llm.Message{head}, pending...)
		}
	}
	for turn := 0; ; turn++ {
		if a.cfg.MaxTurns > 0 && turn >= a.cfg.MaxTurns {
			return ErrMaxTurns
		}
		r.turn = turn
		r.emit(Event{Type: EventTurnStart})
		if fixedHead != nil {
			if err := r.appendEmitted(*fixedHead); err != nil {
				return err
			}
			fixedHead = nil
		}
		if err := r.appendPending(pending); err != nil {
			return err
		}
		pending = nil
		answer, streamErr := r.stream()
		if err := r.appendEmitted(answer); err != nil {
			return err
		}
		calls := answer.ToolCalls()
		var results []llm.Message
		switch {
		case answer.StopReason == llm.StopError || answer.StopReason == llm.StopAborted:
			results = closeCalls(calls, cancelledText, a.now())
		case answer.StopReason == llm.StopLength:
			for _, c := range calls {
				results = append(results, errorResult(c, fmt.Sprintf(outputLimitText, quoteName(c.Name)), a.now()))
			}
		default:
			results = r.execute(calls)
		}
		for _, res := range results {
			if err := r.appendEmitted(res); err != nil {
				return err
			}
		}
		r.emit(Event{Type: EventTurnEnd, Message: &answer})
		if streamErr != nil {
			return streamErr
		}
		if err := r.ctx.Err(); err != nil {
			return err
		}
		pending = r.takeSteering()
		if len(calls) == 0 && len(pending) == 0 {
			return nil
		}
	}
}

// closeOpenCalls answers the tool calls the transcript leaves open at its
// end, as interrupted: a run that was killed during a tool call (or whose
// results never reached the session file) leaves them, and no provider
// takes a request with a call that has no result.
func (r *runner) closeOpenCalls() error {
	for _, c := range transcript.OpenCalls(r.a.Messages()) {
		if err := r.appendEmitted(errorResult(c, transcript.InterruptedText, r.a.now())); err != nil {
			return err
		}
	}
	return nil
}

// headForNewTranscript returns the head of an empty transcript: the
// configured prompt and sections (the tools are filled in by Declare).
func (r *runner) headForNewTranscript() (llm.Message, bool) {
	a := r.a
	a.mu.Lock()
	empty := len(a.messages) == 0
	a.mu.Unlock()
	if !empty {
		return llm.Message{}, false
	}
	tools := a.executable()
	if a.cfg.HeadTools != nil {
		tools = slices.DeleteFunc(tools, func(t llm.Tool) bool { return !a.cfg.HeadTools(t) })
	}
	head, ok := transcript.NewHead(a.cfg.SystemPrompt, a.cfg.Sections, tools)
	if ok {
		a.mu.Lock()
		if a.desired == nil && len(a.cfg.Sections) > 0 {
			a.desired = a.cfg.Sections.Clone()
		}
		a.mu.Unlock()
	}
	return head, ok
}

// appendPending declares the tool and section changes into the pending
// messages (with the steering queued so far) and appends them.
func (r *runner) appendPending(pending []llm.Message) error {
	pending = append(pending, r.takeSteering()...)
	for _, m := range r.a.declare(pending) {
		if err := r.appendEmitted(m); err != nil {
			return err
		}
	}
	return nil
}

// declare returns the pending messages with the section and tool changes
// the transcript lacks. Its cost depends on the number of tools and
// sections, not on the length of the transcript: the replayed state is
// kept incrementally.
func (a *Agent) declare(pending []llm.Message) []llm.Message {
	a.mu.Lock()
	// A section update goes before the first pending message that is not
	// a system message, where the tool delta can join it. Sections the
	// pending messages set count as set.
	if a.desired != nil {
		base := a.state.Clone()
		for i := range pending {
			base.Apply(&pending[i])
		}
		if patch := transcript.DiffSections(base.Sections(), a.desired); patch != nil {
			update := llm.Message{Role: llm.RoleSystem, Sections: patch, Timestamp: a.now()}
			at := slices.IndexFunc(pending, func(m llm.Message) bool { return m.Role != llm.RoleSystem })
			if at < 0 {
				at = len(pending)
			}
			pending = slices.Insert(pending, at, update)
		}
	}
	state := a.state.Clone()
	a.mu.Unlock()
	return transcript.Declare(state, pending, a.executable(), a.now())
}

func (r *runner) takeSteering() []llm.Message {
	a := r.a
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.steering
	a.steering = nil
	return s
}

// appendEmitted appends a message and reports it.
func (r *runner) appendEmitted(m llm.Message) error {
	if err := r.a.appendMessage(m); err != nil {
		return err
	}
	r.emit(Event{Type: EventMessage, Message: &m})
	return nil
}

// stream sends the request and collects the answer. A failed or cancelled
// stream still yields an assistant message (with what arrived, stop reason
// error or aborted), so the transcript records what happened; the error is
// returned too.
func (r *runner) stream() (llm.Message, error) {
	a := r.a
	req := &llm.Request{Messages: a.Messages(), MaxTokens: a.cfg.MaxTokens}
	var partial llm.Message
	partial.Role = llm.RoleAssistant
	var final *llm.Message
	var streamErr error
	for ev, err := range a.cfg.Model.Stream(r.ctx, req) {
		if err != nil {
			streamErr = err
			break
		}
		collect(&partial, ev)
		r.emit(Event{Type: EventStream, Stream: &ev})
		if ev.Type == llm.EventDone {
			final = ev.Message
			break
		}
	}
	if streamErr == nil && final == nil {
		streamErr = r.ctx.Err()
		if streamErr == nil {
			streamErr = errors.New("the model's stream ended without a final message")
		}
	}
	if streamErr != nil {
		partial.StopReason = llm.StopError
		partial.ErrorMessage = streamErr.Error()
		if r.ctx.Err() != nil {
			partial.StopReason = llm.StopAborted
		}
		partial.Timestamp = a.now()
		return partial, streamErr
	}
	m := final.Clone()
	m.Role = llm.RoleAssistant
	if m.Timestamp == 0 {
		m.Timestamp = a.now()
	}
	if m.StopReason == "" {
		m.StopReason = llm.StopEnd
	}
	return m, nil
}

// collect folds a stream event into the partial answer.
func collect(m *llm.Message, ev llm.Event) {
	grow := func(t llm.PartType) *llm.Part {
		for len(m.Content) <= ev.Index {
			m.Content = append(m.Content, llm.Part{Type: t})
		}
		return &m.Content[ev.Index]
	}
	switch ev.Type {
	case llm.EventTextDelta:
		p := grow(llm.PartText)
		p.Text += ev.Delta
	case llm.EventThinkingDelta:
		p := grow(llm.PartThinking)
		p.Text += ev.Delta
	case llm.EventToolCall:
		if ev.ToolCall != nil {
			p := grow(llm.PartToolCall)
			tc := *ev.ToolCall
			p.Type, p.ToolCall = llm.PartToolCall, &tc
		}
	}
}
