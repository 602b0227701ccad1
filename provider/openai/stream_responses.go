package openai

import (
	"cmp"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3/responses"

	"github.com/toolshelf/toolshelf/internal/adapt"
	"github.com/toolshelf/toolshelf/llm"
	"github.com/toolshelf/toolshelf/provider"
)

// responsesDecoder folds Responses stream events (response.*) into an
// assistant message. Parts are created in the order their output items
// and content parts first appear: a thinking part per reasoning item, a
// text part per output_text (or refusal) content part, a tool call part
// per function_call item.
type responsesDecoder struct {
	plan  *provider.Plan
	msg   llm.Message
	items map[int64]*responsesItem // by output_index

	completed  bool
	status     string
	incomplete string
}

// responsesItem is the decoding state of one output item.
type responsesItem struct {
	part    int           // the reasoning or tool call part; -1 before it exists
	text    map[int64]int // content_index → text part
	args    strings.Builder
	section string // the reasoning section the last delta belonged to
	callID  string
	name    string
	called  bool // the function call was completed: a repeated done is ignored
}

func newResponsesDecoder(plan *provider.Plan, model string) *responsesDecoder {
	return &responsesDecoder{
		plan:  plan,
		msg:   llm.Message{Role: llm.RoleAssistant, Model: model},
		items: map[int64]*responsesItem{},
	}
}

// item returns the state of an output item, created on first sight.
func (d *responsesDecoder) item(index int64) *responsesItem {
	it, ok := d.items[index]
	if !ok {
		it = &responsesItem{part: -1, text: map[int64]int{}}
		d.items[index] = it
	}
	return it
}

// newPart appends a part and returns its index.
func (d *responsesDecoder) newPart(p llm.Part) int {
	d.msg.Content = append(d.msg.Content, p)
	return len(d.msg.Content) - 1
}

func (d *responsesDecoder) handle(ev responses.ResponseStreamEventUnion) ([]llm.Event, error) {
	switch ev.Type {
	case "response.output_item.added":
		d.added(ev.OutputIndex, ev.Item)
	case "response.output_text.delta", "response.refusal.delta":
		return d.textDelta(ev.OutputIndex, ev.ContentIndex, ev.Delta), nil
	case "response.output_text.done":
		return d.textDone(ev.OutputIndex, ev.ContentIndex, ev.Text), nil
	case "response.refusal.done":
		return d.textDone(ev.OutputIndex, ev.ContentIndex, ev.Refusal), nil
	case "response.reasoning_summary_text.delta":
		return d.thinkingDelta(ev.OutputIndex, "summary", ev.SummaryIndex, ev.Delta), nil
	case "response.reasoning_text.delta":
		return d.thinkingDelta(ev.OutputIndex, "text", ev.ContentIndex, ev.Delta), nil
	case "response.function_call_arguments.delta":
		d.item(ev.OutputIndex).args.WriteString(ev.Delta)
	case "response.output_item.done":
		return d.itemDone(ev.OutputIndex, ev.Item), nil
	case "response.completed", "response.incomplete":
		d.complete(&ev.Response)
	case "response.failed":
		e := &APIError{API: provider.OpenAIResponses, Code: string(ev.Response.Error.Code), Message: ev.Response.Error.Message}
		if e.Message == "" {
			e.Message = "the response failed without an explanation (status " + string(ev.Response.Status) + ")"
		}
		return nil, e
	case "error":
		return nil, &APIError{API: provider.OpenAIResponses, Code: ev.Code, Param: ev.Param, Message: ev.Message}
	}
	return nil, nil
}

// added opens an output item: reasoning and function calls get their part
// now, so parts keep the order of the items.
func (d *responsesDecoder) added(index int64, item responses.ResponseOutputItemUnion) {
	it := d.item(index)
	switch item.Type {
	case "reasoning":
		if it.part < 0 {
			it.part = d.newPart(llm.Part{Type: llm.PartThinking})
		}
	case "function_call":
		it.callID, it.name = cmp.Or(item.CallID, adapt.NewCallID("call_toolshelf_")), item.Name
		if it.part < 0 {
			it.part = d.newPart(llm.Part{Type: llm.PartToolCall, ToolCall: &llm.ToolCall{ID: it.callID, Name: item.Name}})
		}
	}
}

// textPart returns the text part of a content part, created on first use.
func (d *responsesDecoder) textPart(index, content int64) int {
	it := d.item(index)
	i, ok := it.text[content]
	if !ok {
		i = d.newPart(llm.Part{Type: llm.PartText})
		it.text[content] = i
	}
	return i
}

func (d *responsesDecoder) textDelta(index, content int64, delta string) []llm.Event {
	if delta == "" {
		return nil
	}
	i := d.textPart(index, content)
	d.msg.Content[i].Text += delta
	return []llm.Event{{Type: llm.EventTextDelta, Index: i, Delta: delta}}
}

// textDone fills a content part that arrived without deltas.
func (d *responsesDecoder) textDone(index, content int64, text string) []llm.Event {
	if _, ok := d.item(index).text[content]; ok {
		return nil
	}
	return d.textDelta(index, content, text)
}

// thinkingDelta adds reasoning to an item's thinking part; sections
// (summary parts, reasoning content parts) are separated by a blank line.
func (d *responsesDecoder) thinkingDelta(index int64, kind string, section int64, delta string) []llm.Event {
	if delta == "" {
		return nil
	}
	it := d.item(index)
	if it.part < 0 {
		it.part = d.newPart(llm.Part{Type: llm.PartThinking})
	}
	key := kind + ":" + strconv.FormatInt(section, 10)
	p := &d.msg.Content[it.part]
	if it.section != key && p.Text != "" {
		delta = "\n\n" + delta
	}
	it.section = key
	p.Text += delta
	return []llm.Event{{Type: llm.EventThinkingDelta, Index: it.part, Delta: delta}}
}

// itemDone closes an output item: a function call is complete now; a
// reasoning item is stored whole in its part's signature so that the next
// request can replay it; text that came without deltas is filled in.
func (d *responsesDecoder) itemDone(index int64, item responses.ResponseOutputItemUnion) []llm.Event {
	it := d.item(index)
	switch item.Type {
	case "function_call":
		if it.called {
			return nil
		}
		it.called = true
		args := item.Arguments.OfString
		if args == "" {
			args = it.args.String()
		}
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		call := llm.ToolCall{ID: cmp.Or(item.CallID, it.callID, adapt.NewCallID("call_toolshelf_")), Name: cmp.Or(item.Name, it.name), Arguments: json.RawMessage(args)}
		call = d.plan.Unwrap(call)
		if it.part < 0 {
			it.part = d.newPart(llm.Part{Type: llm.PartToolCall})
		}
		d.msg.Content[it.part].ToolCall = &call
		ev := call
		return []llm.Event{{Type: llm.EventToolCall, Index: it.part, ToolCall: &ev}}
	case "reasoning":
		if it.part < 0 {
			it.part = d.newPart(llm.Part{Type: llm.PartThinking})
		}
		p := &d.msg.Content[it.part]
		p.Signature = item.RawJSON()
		if p.Text != "" {
			return nil
		}
		var texts []string
		for _, s := range item.Summary {
			if s.Text != "" {
				texts = append(texts, s.Text)
			}
		}
		if len(texts) == 0 {
			return nil
		}
		p.Text = strings.Join(texts, "\n\n")
		return []llm.Event{{Type: llm.EventThinkingDelta, Index: it.part, Delta: p.Text}}
	case "message":
		var evs []llm.Event
		for ci, c := range item.Content {
			text := c.Text
			if c.Type == "refusal" {
				text = c.Refusal
			}
			evs = append(evs, d.textDone(index, int64(ci), text)...)
		}
		return evs
	}
	return nil
}

// complete records the terminal response: status and usage.
func (d *responsesDecoder) complete(r *responses.Response) {
	d.completed = true
	d.status, d.incomplete = string(r.Status), r.IncompleteDetails.Reason
	if r.JSON.Usage.Valid() {
		u := r.Usage
		d.msg.Usage = usage(u.InputTokens, u.InputTokensDetails.CachedTokens, u.InputTokensDetails.CacheWriteTokens, u.OutputTokens)
	}
}

func (d *responsesDecoder) finish() ([]llm.Event, error) {
	if !d.completed {
		return nil, errors.New("the stream ended before response.completed: the connection was cut or the server stopped early; retry the request")
	}
	m := &d.msg
	switch {
	case d.status == "incomplete" && d.incomplete == "content_filter":
		m.StopReason, m.ErrorMessage = llm.StopError, "the answer was stopped by the content filter"
	case d.status == "incomplete":
		// max_output_tokens, or another cut: the answer is not whole and
		// its tool calls must not run.
		m.StopReason = llm.StopLength
	case len(m.ToolCalls()) > 0:
		m.StopReason = llm.StopToolUse
	default:
		m.StopReason = llm.StopEnd
	}
	done := m.Clone()
	return []llm.Event{{Type: llm.EventDone, Message: &done}}, nil
}

// usage converts token counts in which input includes the cache's reads
// and writes into llm.Usage, whose Input counts uncached tokens only. A
// negative count, which no server should send, counts as zero.
func usage(input, cacheRead, cacheWrite, output int64) *llm.Usage {
	input, cacheRead, cacheWrite, output = max(input, 0), max(cacheRead, 0), max(cacheWrite, 0), max(output, 0)
	return &llm.Usage{
		Input:      int(max(0, input-cacheRead-cacheWrite)),
		CacheRead:  int(cacheRead),
		CacheWrite: int(cacheWrite),
		Output:     int(output),
	}
}
