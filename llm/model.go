package llm

import (
	"context"
	"iter"
)

// Model is a language model behind a provider API. Implementations render
// the request's transcript in their wire format (deriving the tool list and
// the placement of system updates from the transcript itself) and stream
// the answer.
type Model interface {
	// Stream sends the request and yields the answer's events. The last
	// event of a successful stream is EventDone with the complete
	// assistant message; a failure ends the stream with an error. The
	// iterator may be ranged once; stopping early cancels the request.
	Stream(ctx context.Context, req *Request) iter.Seq2[Event, error]
}

// Request is one model call: the transcript so far and the call's
// settings. The tool set is not a separate field: the adapter replays it
// from the transcript's system messages, so it is always what the
// transcript says the model was told.
type Request struct {
	// Messages is the transcript, system messages included. Adapters must
	// not modify it.
	Messages []Message
	// MaxTokens bounds the answer; zero means the adapter's default.
	MaxTokens int
}

// EventType names a stream event.
type EventType string

// The stream events.
const (
	// EventStart opens the answer.
	EventStart EventType = "start"
	// EventTextDelta adds text to the part at Index.
	EventTextDelta EventType = "text_delta"
	// EventThinkingDelta adds reasoning to the part at Index.
	EventThinkingDelta EventType = "thinking_delta"
	// EventToolCall completes the tool call part at Index.
	EventToolCall EventType = "toolcall"
	// EventDone ends the answer; Message is the complete assistant
	// message.
	EventDone EventType = "done"
)

// Event is one step of a streamed answer.
type Event struct {
	Type EventType
	// Index is the content part the event concerns.
	Index int
	// Delta is the text a delta event adds.
	Delta string
	// ToolCall is the call an EventToolCall completes.
	ToolCall *ToolCall
	// Message is the complete assistant message of EventDone.
	Message *Message
}

// ToolSupport is how a provider can express a later system update.
type ToolSupport string

// The tool support classes.
const (
	// ToolsChanges: native additions, removals and redefinitions
	// mid-conversation (Anthropic).
	ToolsChanges ToolSupport = "changes"
	// ToolsAdditions: additions only, anchored in place (OpenAI
	// Responses); a removal needs the tool list rewritten once.
	ToolsAdditions ToolSupport = "additions"
	// ToolsText: mid-conversation text only; the tool list is sent whole.
	ToolsText ToolSupport = "text"
	// ToolsNone: no mid-conversation updates; everything collapses into
	// the head.
	ToolsNone ToolSupport = "none"
	// ToolsBridge: toolshelf's fallback for any provider: a fixed head
	// with a call_tool meta-tool, loaded tools described in appended text.
	ToolsBridge ToolSupport = "bridge"
)

// CallToolName is the name of the bridge's meta-tool (class
// [ToolsBridge]): a model of that class calls every tool its head does
// not declare through call_tool, with the tool's name and arguments, and
// the runtime unwraps those calls so the transcript records calls of the
// real tools. Package provider declares it and unwraps its calls; the
// agent answers a call_tool call that could not be unwrapped.
const CallToolName = "call_tool"
