package llmtest

import (
	"context"
	"errors"
	"iter"
	"sync"

	"github.com/toolshelf/toolshelf/llm"
)

// ErrScriptExhausted is returned when a request finds no reply left.
var ErrScriptExhausted = errors.New("llmtest: the script has no reply left")

// Reply is one scripted answer.
type Reply struct {
	// Message is the assistant message to stream. Its role defaults to
	// assistant and its stop reason to toolUse when it calls tools, stop
	// otherwise.
	Message llm.Message
	// Func, when set, computes the message from the request instead.
	Func func(*llm.Request) (llm.Message, error)
	// Err fails the stream after its start event.
	Err error
	// Block makes the stream wait, after streaming the message's parts,
	// until the request's context is done, then fail with its error.
	Block bool
}

// Say returns a reply with one text part.
func Say(text string) Reply {
	return Reply{Message: llm.Message{Content: []llm.Part{llm.Text(text)}}}
}

// Call returns a reply that calls tools; each call is id, name and
// arguments (JSON).
func Call(calls ...llm.ToolCall) Reply {
	m := llm.Message{}
	for i := range calls {
		c := calls[i]
		m.Content = append(m.Content, llm.Part{Type: llm.PartToolCall, ToolCall: &c})
	}
	return Reply{Message: m}
}

// Scripted is a scripted model. It is safe for concurrent use.
type Scripted struct {
	mu       sync.Mutex // guards the fields below
	replies  []Reply
	requests []*llm.Request
}

var _ llm.Model = (*Scripted)(nil)

// New returns a model that answers with the replies in order.
func New(replies ...Reply) *Scripted { return &Scripted{replies: replies} }

// Add appends replies to the script.
func (s *Scripted) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns deep copies of the requests received so far.
func (s *Scripted) Requests() []*llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*llm.Request(nil), s.requests...)
}

// Stream answers with the next reply.
func (s *Scripted) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		clone := &llm.Request{MaxTokens: req.MaxTokens, Messages: make([]llm.Message, len(req.Messages))}
		for i, m := range req.Messages {
			clone.Messages[i] = m.Clone()
		}
		s.mu.Lock()
		s.requests = append(s.requests, clone)
		var r Reply
		ok := len(s.replies) > 0
		if ok {
			r, s.replies = s.replies[0], s.replies[1:]
		}
		s.mu.Unlock()
		if !ok {
			yield(llm.Event{}, ErrScriptExhausted)
			return
		}
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, err)
			return
		}
		msg := r.Message.Clone()
		if r.Func != nil {
			var err error
			if msg, err = r.Func(clone); err != nil {
				yield(llm.Event{}, err)
				return
			}
		}
		msg.Role = llm.RoleAssistant
		if msg.StopReason == "" {
			msg.StopReason = llm.StopEnd
			if len(msg.ToolCalls()) > 0 {
				msg.StopReason = llm.StopToolUse
			}
		}
		if !yield(llm.Event{Type: llm.EventStart}, nil) {
			return
		}
		if r.Err != nil {
			yield(llm.Event{}, r.Err)
			return
		}
		for i, p := range msg.Content {
			ev := llm.Event{Index: i}
			switch p.Type {
			case llm.PartText:
				ev.Type, ev.Delta = llm.EventTextDelta, p.Text
			case llm.PartThinking:
				ev.Type, ev.Delta = llm.EventThinkingDelta, p.Text
			case llm.PartToolCall:
				ev.Type, ev.ToolCall = llm.EventToolCall, p.ToolCall
			default:
				continue
			}
			if !yield(ev, nil) {
				return
			}
		}
		if r.Block {
			<-ctx.Done()
			yield(llm.Event{}, ctx.Err())
			return
		}
		yield(llm.Event{Type: llm.EventDone, Message: &msg}, nil)
	}
}
