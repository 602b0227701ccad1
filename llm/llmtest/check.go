package llmtest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/toolshelf/toolshelf/llm"
)

// CheckStream reports how a stream's events and closing error break the
// [llm.Model] contract, or nil when they keep it: EventStart at most once
// and first; nothing after EventDone or an error; a stream without an
// error ends with exactly one EventDone carrying an assistant message with
// a stop reason (and, if it has usage, no negative count), and a failed one
// has none. Against that final message,
// every delta and tool call event concerns a part of its type, the deltas
// of a part end its text (a part may begin with text that came without a
// delta), and each tool call part is completed at most once, with the
// call the message holds. Adapter tests and fuzz targets run their
// streams through it.
func CheckStream(events []llm.Event, err error) error {
	var done *llm.Message
	for i, ev := range events {
		switch {
		case done != nil:
			return fmt.Errorf("event %d (%s) after EventDone", i, ev.Type)
		case ev.Type == llm.EventStart && i > 0:
			return fmt.Errorf("EventStart at position %d", i)
		case ev.Type == llm.EventDone:
			if ev.Message == nil {
				return errors.New("EventDone without a message")
			}
			done = ev.Message
		}
	}
	switch {
	case err != nil && done != nil:
		return fmt.Errorf("an error (%v) after EventDone", err)
	case err != nil:
		return nil // the parts are not known: nothing more to check
	case done == nil:
		return errors.New("the stream ended without an error and without EventDone")
	case done.Role != llm.RoleAssistant:
		return fmt.Errorf("the final message has role %q", done.Role)
	case done.StopReason == "":
		return errors.New("the final message has no stop reason")
	case done.Usage != nil && (done.Usage.Input < 0 || done.Usage.Output < 0 || done.Usage.CacheRead < 0 || done.Usage.CacheWrite < 0):
		return fmt.Errorf("the final message counts negative tokens: %+v", *done.Usage)
	}
	deltas := map[int]*strings.Builder{}
	completed := map[int]bool{}
	for i, ev := range events {
		want := map[llm.EventType]llm.PartType{
			llm.EventTextDelta: llm.PartText, llm.EventThinkingDelta: llm.PartThinking, llm.EventToolCall: llm.PartToolCall,
		}[ev.Type]
		if want == "" {
			continue
		}
		if ev.Index < 0 || ev.Index >= len(done.Content) {
			return fmt.Errorf("event %d (%s) names part %d of %d", i, ev.Type, ev.Index, len(done.Content))
		}
		p := done.Content[ev.Index]
		if p.Type != want {
			return fmt.Errorf("event %d (%s) names part %d, a %s part", i, ev.Type, ev.Index, p.Type)
		}
		if ev.Type != llm.EventToolCall {
			if deltas[ev.Index] == nil {
				deltas[ev.Index] = &strings.Builder{}
			}
			deltas[ev.Index].WriteString(ev.Delta)
			continue
		}
		if completed[ev.Index] {
			return fmt.Errorf("event %d completes tool call part %d a second time", i, ev.Index)
		}
		completed[ev.Index] = true
		if ev.ToolCall == nil || p.ToolCall == nil || !reflect.DeepEqual(*ev.ToolCall, *p.ToolCall) {
			return fmt.Errorf("event %d completes part %d with %+v, but the message holds %+v", i, ev.Index, ev.ToolCall, p.ToolCall)
		}
	}
	for i, b := range deltas {
		if text := done.Content[i].Text; !strings.HasSuffix(text, b.String()) {
			return fmt.Errorf("the deltas of part %d, %q, do not end its text %q", i, b.String(), text)
		}
	}
	return nil
}
