package anthropic

import (
	"cmp"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// assembler folds stream events into llm events and the final assistant
// message.
type assembler struct {
	plan  *provider.Plan
	msg   llm.Message
	usage llm.Usage
	// parts maps the API's block index to the part's index in msg.Content;
	// blocks of other kinds (server tools) have no part.
	parts map[int64]int
	// args collects a tool call's input fragments by part index.
	args    map[int]*strings.Builder
	started bool
	stopped bool
}

func newAssembler(plan *provider.Plan, model string) *assembler {
	return &assembler{
		plan:  plan,
		msg:   llm.Message{Role: llm.RoleAssistant, Model: model},
		parts: map[int64]int{},
		args:  map[int]*strings.Builder{},
	}
}

// apply folds one event in and returns the llm events it makes.
func (a *assembler) apply(ev *sdk.BetaRawMessageStreamEventUnion) []llm.Event {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		a.addUsage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens)
		if !a.started {
			a.started = true
			return []llm.Event{{Type: llm.EventStart}}
		}
	case "content_block_start":
		a.start(ev.Index, &ev.ContentBlock)
	case "content_block_delta":
		return a.delta(ev.Index, &ev.Delta)
	case "content_block_stop":
		return a.stop(ev.Index)
	case "message_delta":
		if ev.Delta.StopReason != "" {
			a.msg.StopReason, a.msg.ErrorMessage = stopReason(ev.Delta.StopReason, ev.Delta.StopDetails.Explanation)
		}
		u := ev.Usage
		a.addUsage(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens)
	case "message_stop":
		a.stopped = true
	}
	return nil
}

// addUsage takes the latest non-zero counts: message_start reports the
// input, message_delta the cumulative counts, possibly without the input.
func (a *assembler) addUsage(input, cacheRead, cacheWrite, output int64) {
	set := func(dst *int, v int64) {
		if v > 0 {
			*dst = int(v)
		}
	}
	set(&a.usage.Input, input)
	set(&a.usage.CacheRead, cacheRead)
	set(&a.usage.CacheWrite, cacheWrite)
	set(&a.usage.Output, output)
}

func (a *assembler) start(index int64, b *sdk.BetaRawContentBlockStartEventContentBlockUnion) {
	var p llm.Part
	switch b.Type {
	case "text":
		p = llm.Part{Type: llm.PartText, Text: b.Text}
	case "thinking":
		p = llm.Part{Type: llm.PartThinking, Text: b.Thinking, Signature: b.Signature}
	case "redacted_thinking":
		p = llm.Part{Type: llm.PartThinking, Redacted: true, Signature: b.Data}
	case "tool_use":
		p = llm.Part{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: cmp.Or(b.ID, adapt.NewCallID("toolu_toolshelf_")), Name: b.Name}}
	default:
		return // server tool blocks and others: not part of the transcript
	}
	i := len(a.msg.Content)
	a.msg.Content = append(a.msg.Content, p)
	a.parts[index] = i
	if p.Type == llm.PartToolCall {
		a.args[i] = &strings.Builder{}
	}
}

func (a *assembler) delta(index int64, d *sdk.BetaRawMessageStreamEventUnionDelta) []llm.Event {
	i, ok := a.parts[index]
	if !ok {
		return nil
	}
	p := &a.msg.Content[i]
	switch d.Type {
	case "text_delta":
		if p.Type != llm.PartText {
			return nil
		}
		p.Text += d.Text
		return []llm.Event{{Type: llm.EventTextDelta, Index: i, Delta: d.Text}}
	case "thinking_delta":
		if p.Type != llm.PartThinking {
			return nil
		}
		p.Text += d.Thinking
		return []llm.Event{{Type: llm.EventThinkingDelta, Index: i, Delta: d.Thinking}}
	case "signature_delta":
		if p.Type == llm.PartThinking {
			p.Signature += d.Signature
		}
	case "input_json_delta":
		if b := a.args[i]; b != nil {
			b.WriteString(d.PartialJSON)
		}
	}
	return nil
}

// stop completes a tool call: its input fragments are its arguments ({}
// when there were none), and a bridge call_tool call becomes the call it
// stands for.
func (a *assembler) stop(index int64) []llm.Event {
	i, ok := a.parts[index]
	if !ok || a.args[i] == nil {
		return nil
	}
	p := &a.msg.Content[i]
	args := strings.TrimSpace(a.args[i].String())
	if args == "" {
		args = "{}"
	}
	tc := a.plan.Unwrap(llm.ToolCall{ID: p.ToolCall.ID, Name: p.ToolCall.Name, Arguments: []byte(args)})
	p.ToolCall = &tc
	delete(a.args, i)
	out := tc
	return []llm.Event{{Type: llm.EventToolCall, Index: i, ToolCall: &out}}
}

// message returns the complete assistant message.
func (a *assembler) message() *llm.Message {
	m := a.msg.Clone()
	if m.StopReason == "" {
		m.StopReason = llm.StopEnd
	}
	u := a.usage
	m.Usage = &u
	return &m
}

// stopReason maps the API's stop reason; a refusal is an error whose
// message carries the API's explanation.
func stopReason(r sdk.BetaStopReason, explanation string) (llm.StopReason, string) {
	switch r {
	case sdk.BetaStopReasonMaxTokens, sdk.BetaStopReasonModelContextWindowExceeded:
		return llm.StopLength, ""
	case sdk.BetaStopReasonToolUse:
		return llm.StopToolUse, ""
	case sdk.BetaStopReasonRefusal:
		msg := "the model refused to answer (stop_reason \"refusal\")"
		if explanation != "" {
			msg += ": " + explanation
		}
		return llm.StopError, msg
	}
	return llm.StopEnd, "" // end_turn, stop_sequence, pause_turn and reasons added later
}
