package emulator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// Responder plays the model: it reads a valid request and answers it.
// It must be safe for concurrent use.
type Responder interface {
	Respond(ctx context.Context, ex *Exchange) (*Reply, error)
}

// ResponderFunc adapts a function to Responder.
type ResponderFunc func(ctx context.Context, ex *Exchange) (*Reply, error)

// Respond calls f.
func (f ResponderFunc) Respond(ctx context.Context, ex *Exchange) (*Reply, error) { return f(ctx, ex) }

// Echo answers every request with text that repeats the last user
// message and names the tools the model could call, so a client can see
// what arrived.
type Echo struct{}

// Respond answers with the echo text.
func (Echo) Respond(_ context.Context, ex *Exchange) (*Reply, error) {
	last := ""
	for i := len(ex.Turns) - 1; i >= 0; i-- {
		if ex.Turns[i].Role == "user" {
			last = ex.Turns[i].Text
			break
		}
	}
	names := make([]string, len(ex.Tools))
	for i, t := range ex.Tools {
		names[i] = t.Name
	}
	text := fmt.Sprintf("echo: %s", last)
	if len(names) > 0 {
		text += fmt.Sprintf("\n(tools: %d available)", len(names))
	}
	return &Reply{Text: text}, nil
}

// ErrScriptExhausted is returned when a script has no reply left.
var ErrScriptExhausted = errors.New("the script has no reply left")

// Scripted answers requests with replies in order.
type Scripted struct {
	mu      sync.Mutex
	replies []Reply
}

// NewScripted returns a responder that plays replies in order.
func NewScripted(replies ...Reply) *Scripted { return &Scripted{replies: replies} }

// ReadScript reads replies from a JSON Lines file, one reply per line:
// {"text": "...", "thinking": "...", "tool_calls": [{"name": "...",
// "arguments": {...}}]}; a call may add "namespace" and "type" (see
// Call). Blank lines and lines starting with # are skipped.
func ReadScript(path string) (*Scripted, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the script: %w", err)
	}
	var replies []Reply
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		var r Reply
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w (want {\"text\": ..., \"tool_calls\": [{\"name\": ..., \"arguments\": {...}}]})", path, line, err)
		}
		for i, c := range r.Calls {
			if c.Type != "" && c.Type != "function" && c.Type != CallToolSearch {
				return nil, fmt.Errorf("%s:%d: tool call %d has type %q: want \"function\" (the default) or %q", path, line, i+1, c.Type, CallToolSearch)
			}
			if c.Name == "" && c.Type != CallToolSearch {
				return nil, fmt.Errorf("%s:%d: tool call %d has no name", path, line, i+1)
			}
			if len(c.Arguments) == 0 {
				r.Calls[i].Arguments = json.RawMessage(`{}`)
			} else if !json.Valid(c.Arguments) || bytes.TrimSpace(c.Arguments)[0] != '{' {
				return nil, fmt.Errorf("%s:%d: tool call %d: arguments must be a JSON object", path, line, i+1)
			}
		}
		if r.Text == "" && len(r.Calls) == 0 {
			return nil, fmt.Errorf("%s:%d: a reply needs text or tool calls", path, line)
		}
		replies = append(replies, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(replies) == 0 {
		return nil, fmt.Errorf("%s: no replies", path)
	}
	return NewScripted(replies...), nil
}

// Respond returns the next reply.
func (s *Scripted) Respond(context.Context, *Exchange) (*Reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.replies) == 0 {
		return nil, ErrScriptExhausted
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return &r, nil
}

// Left returns how many replies remain.
func (s *Scripted) Left() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies)
}
