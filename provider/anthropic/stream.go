package anthropic

import (
	"context"
	"errors"
	"iter"

	"github.com/toolshelf/toolshelf/llm"
)

// errIncomplete reports a stream that ended without message_stop.
var errIncomplete = errors.New("anthropic: the stream ended before message_stop (connection closed early?): send the request again")

// Stream renders the request, sends it and yields the answer: EventStart,
// text and thinking deltas, an EventToolCall when a tool call's input is
// complete (a bridge call_tool call already unwrapped into the call it
// stands for), and EventDone with the complete assistant message. A
// rendering problem, an API error (*APIError) or a broken stream ends it
// with an error; a cancelled ctx with ctx.Err(). Stopping the range early
// cancels the request.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		r, err := m.render(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		reqCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream := m.client.Beta.Messages.NewStreaming(reqCtx, r.params)
		defer func() { _ = stream.Close() }()
		a := newAssembler(&r.plan, m.cfg.Model)
		for stream.Next() {
			ev := stream.Current()
			for _, e := range a.apply(&ev) {
				if !yield(e, nil) {
					return
				}
			}
		}
		if err := stream.Err(); err != nil {
			yield(llm.Event{}, streamError(ctx, err))
			return
		}
		if ctx.Err() != nil {
			yield(llm.Event{}, ctx.Err())
			return
		}
		if !a.stopped {
			yield(llm.Event{}, errIncomplete)
			return
		}
		yield(llm.Event{Type: llm.EventDone, Message: a.message()}, nil)
	}
}
