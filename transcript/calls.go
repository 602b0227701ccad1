package transcript

import (
	"slices"

	"github.com/toolshelf/toolshelf/llm"
)

// InterruptedText is the result given to a tool call that has none because
// the run that made it stopped before the tool returned: the process was
// killed, crashed or lost power during the call. Whether the tool took
// effect is unknown, and the text says so, so that the model checks before
// it repeats a call with side effects.
const InterruptedText = "Tool call interrupted: the session stopped before the tool returned " +
	"(the process was killed or crashed), so its result is lost and whether it took effect is unknown. " +
	"Check before repeating it."

// OpenCalls returns the tool calls that a transcript leaves without a
// result at its end: the calls of its last assistant message that no
// tool result after it answers. A transcript whose run was stopped during
// a tool call ends like this, and providers refuse a request that carries
// it; the caller answers the calls (with [InterruptedText], say) before
// the next request.
func OpenCalls(msgs []llm.Message) []llm.ToolCall {
	for i := len(msgs) - 1; i >= 0; i-- {
		switch msgs[i].Role {
		case llm.RoleAssistant:
			return unanswered(&msgs[i], msgs[i+1:])
		case llm.RoleUser:
			// A prompt after the calls: they are not at the end (see
			// CloseCalls for such transcripts).
			return nil
		}
	}
	return nil
}

// unanswered returns the calls of an assistant message that no tool result
// in after answers, in call order.
func unanswered(m *llm.Message, after []llm.Message) []llm.ToolCall {
	calls := m.ToolCalls()
	if len(calls) == 0 {
		return nil
	}
	answered := make(map[string]bool)
	for _, r := range after {
		if r.Role == llm.RoleToolResult {
			answered[r.ToolCallID] = true
		}
	}
	return slices.DeleteFunc(calls, func(c llm.ToolCall) bool { return answered[c.ID] })
}

// CloseCalls returns msgs with a result for every tool call that has none
// before the next user or assistant message: result(c) is inserted after
// the results the call's assistant message has (before a system update
// that follows them). Transcripts written before runs answered their open
// calls on resume can hold such holes in the middle. When nothing is
// open, msgs itself is returned.
func CloseCalls(msgs []llm.Message, result func(llm.ToolCall) llm.Message) []llm.Message {
	var out []llm.Message // nil until a hole is found
	for i := 0; i < len(msgs); i++ {
		if out != nil {
			out = append(out, msgs[i])
		}
		if msgs[i].Role != llm.RoleAssistant {
			continue
		}
		// The results of this answer run up to the next user or
		// assistant message; they end where the first message that is
		// not a tool result is.
		end := i + 1
		for end < len(msgs) && msgs[end].Role != llm.RoleUser && msgs[end].Role != llm.RoleAssistant {
			end++
		}
		open := unanswered(&msgs[i], msgs[i+1:end])
		if len(open) == 0 {
			continue
		}
		if out == nil {
			out = slices.Clone(msgs[:i+1])
		}
		insert := i + 1
		for insert < end && msgs[insert].Role == llm.RoleToolResult {
			insert++
		}
		out = append(out, msgs[i+1:insert]...)
		for _, c := range open {
			out = append(out, result(c))
		}
		i = insert - 1
	}
	if out == nil {
		return msgs
	}
	return out
}
