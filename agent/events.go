package agent

import "github.com/toolshelf/toolshelf/llm"

// EventType names an agent event.
type EventType string

// The agent events, in the order a run produces them.
const (
	// EventAgentStart opens a run.
	EventAgentStart EventType = "agent_start"
	// EventTurnStart opens a turn: one request and the tool calls it
	// asks for.
	EventTurnStart EventType = "turn_start"
	// EventMessage reports a message appended to the transcript: a
	// prompt, a system update, the model's answer or a tool result.
	EventMessage EventType = "message"
	// EventStream reports a step of the model's streamed answer.
	EventStream EventType = "stream"
	// EventToolStart reports a tool call about to be prepared and run.
	EventToolStart EventType = "tool_start"
	// EventToolEnd reports a tool call's result.
	EventToolEnd EventType = "tool_end"
	// EventTurnEnd closes a turn.
	EventTurnEnd EventType = "turn_end"
	// EventAgentEnd closes a run; Err says why it ended early.
	EventAgentEnd EventType = "agent_end"
)

// Event is one step of a run, for user interfaces and logs.
type Event struct {
	Type EventType
	// Turn is the turn the event belongs to, numbered from 0 in each run;
	// the run's start and end carry the last turn's number.
	Turn int
	// Message is the appended message (EventMessage), the answer
	// (EventTurnEnd) or the result (EventToolEnd).
	Message *llm.Message
	// Stream is the model's stream event (EventStream).
	Stream *llm.Event
	// Call is the tool call (EventToolStart, EventToolEnd).
	Call *llm.ToolCall
	// Err is why the run ended early (EventAgentEnd).
	Err error
}
