package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Feature names a list a server may offer beyond its tools.
type Feature string

// The lists a server may offer beyond its tools.
const (
	// Prompts is the server's prompts/list.
	Prompts Feature = "prompts"
	// Resources is the server's resources/list.
	Resources Feature = "resources"
	// ResourceTemplates is the server's resources/templates/list.
	ResourceTemplates Feature = "resourceTemplates"
)

// The bounds on what a server's prompts and resources may make toolshelf
// hold and forward. A listed item or an answer past them is refused, with
// a warning that names the server, the item and the bound; the rest of the
// list is kept.
const (
	// MaxListItems bounds the items of one list of one server; the
	// listing stops there.
	MaxListItems = 1000
	// MaxItemBytes bounds one listed prompt, resource or template, as
	// JSON.
	MaxItemBytes = 16 << 10
	// MaxListBytes bounds one list of one server, as JSON, in all.
	MaxListBytes = 1 << 20
	// MaxAnswerBytes bounds a prompts/get, resources/read or
	// completion/complete answer, as JSON.
	MaxAnswerBytes = 4 << 20
)

// Offers says what a connected server declared it offers beyond tools in
// its initialize answer.
type Offers struct {
	// Prompts and Resources are the server's prompts and resources
	// capabilities; Completions its completions capability.
	Prompts, Resources, Completions bool
	// Session tells the server's sessions apart: each connection has a
	// new one, so a follower knows whether it listed this session yet.
	Session uint64
}

// sessions numbers the sessions of every Manager.
var sessions atomic.Uint64

// Offers returns what the server's current session offers; ok is false
// when the server is not configured or not connected.
func (m *Manager) Offers(server string) (o Offers, ok bool) {
	s := m.byName[server]
	if s == nil {
		return Offers{}, false
	}
	m.mu.Lock()
	c := s.conn
	m.mu.Unlock()
	if c == nil {
		return Offers{}, false
	}
	o.Session = c.n
	res := c.session.InitializeResult()
	if res == nil || res.Capabilities == nil {
		return o, true
	}
	caps := res.Capabilities
	o.Prompts, o.Resources, o.Completions = caps.Prompts != nil, caps.Resources != nil, caps.Completions != nil
	return o, true
}

// OnListChanged registers fn to be called when a server's prompts or
// resources may have changed: when a session with it starts, and when it
// sends notifications/prompts/list_changed or
// notifications/resources/list_changed. fn runs on the goroutine that
// reads the server's messages or connects it, outside the Manager's
// locks: it must return quickly, and list in a goroutine of its own. The
// returned function cancels the registration.
func (m *Manager) OnListChanged(fn func(server string)) (cancel func()) {
	m.mu.Lock()
	id := m.nextID
	m.nextID++
	if m.listListeners == nil {
		m.listListeners = make(map[int]func(string))
	}
	m.listListeners[id] = fn
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		delete(m.listListeners, id)
		m.mu.Unlock()
	}
}

// listsChanged calls the OnListChanged listeners for a server. It must
// not be called with m.mu held.
func (m *Manager) listsChanged(server string) {
	m.mu.Lock()
	ids := make([]int, 0, len(m.listListeners))
	for id := range m.listListeners {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	fns := make([]func(string), len(ids))
	for i, id := range ids {
		fns[i] = m.listListeners[id]
	}
	m.mu.Unlock()
	for _, fn := range fns {
		fn(server)
	}
}

// Item is one entry of a server's prompt, resource or template list.
type Item struct {
	// Key is the entry's name on the server: the prompt's name, the
	// resource's URI or the template's URI template.
	Key string
	// JSON is the entry as the server listed it.
	JSON json.RawMessage
}

// List lists one of a server's lists (every page, within [MaxListItems]
// and [MaxListBytes]), waiting while the server connects. An item over
// [MaxItemBytes] is left out with a warning; so is the rest of a list
// past the bounds.
func (m *Manager) List(ctx context.Context, name string, f Feature) ([]Item, error) {
	var out []Item
	err := m.request(ctx, name, string(f)+"/list", func(ctx context.Context, s *server, c *conn) error {
		out = nil
		switch f {
		case Prompts:
			return collect(s, f, c.session.Prompts(ctx, nil), func(p *mcp.Prompt) string { return p.Name }, &out)
		case Resources:
			return collect(s, f, c.session.Resources(ctx, nil), func(r *mcp.Resource) string { return r.URI }, &out)
		case ResourceTemplates:
			return collect(s, f, c.session.ResourceTemplates(ctx, nil), func(t *mcp.ResourceTemplate) string { return t.URITemplate }, &out)
		}
		return fmt.Errorf("unknown list %q: use %q, %q or %q", f, Prompts, Resources, ResourceTemplates)
	})
	return out, err
}

// collect reads a listing into items, within the bounds.
func collect[T any](s *server, f Feature, seq iter.Seq2[T, error], key func(T) string, out *[]Item) error {
	total := 0
	for v, err := range seq {
		if err != nil {
			return err
		}
		raw, err := json.Marshal(v)
		if err != nil {
			s.log.Warn("list item skipped: it cannot be encoded", "list", string(f), "item", key(v), "error", err)
			continue
		}
		if len(raw) > MaxItemBytes {
			s.log.Warn("list item refused: too large", "list", string(f), "item", key(v), "bytes", len(raw), "limit", MaxItemBytes)
			continue
		}
		if len(*out) == MaxListItems || total+len(raw) > MaxListBytes {
			s.log.Warn("list cut: the server lists more than toolshelf holds", "list", string(f), "kept", len(*out),
				"bytes", total, "max_items", MaxListItems, "max_bytes", MaxListBytes)
			return nil
		}
		total += len(raw)
		*out = append(*out, Item{Key: key(v), JSON: raw})
	}
	return nil
}

// GetPrompt gets a prompt of a server by its name there, with its
// arguments, and returns the server's answer (prompts/get) as JSON.
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) (json.RawMessage, error) {
	return m.answer(ctx, server, "prompts/get", func(ctx context.Context, c *conn) (any, error) {
		return c.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	})
}

// ReadResource reads a resource of a server by its URI there and returns
// the server's answer (resources/read) as JSON.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (json.RawMessage, error) {
	return m.answer(ctx, server, "resources/read", func(ctx context.Context, c *conn) (any, error) {
		return c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	})
}

// Complete asks a server for completions: params is a completion/complete
// request's params as JSON, naming the prompt or template as the server
// names it. It returns the server's answer as JSON.
func (m *Manager) Complete(ctx context.Context, server string, params json.RawMessage) (json.RawMessage, error) {
	var p mcp.CompleteParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("completion/complete params: %w", err)
	}
	return m.answer(ctx, server, "completion/complete", func(ctx context.Context, c *conn) (any, error) {
		return c.session.Complete(ctx, &p)
	})
}

// answer makes one request of a server and returns its answer as JSON,
// refused past [MaxAnswerBytes].
func (m *Manager) answer(ctx context.Context, name, method string, do func(context.Context, *conn) (any, error)) (json.RawMessage, error) {
	var raw json.RawMessage
	err := m.request(ctx, name, method, func(ctx context.Context, s *server, c *conn) error {
		v, err := do(ctx, c)
		if err != nil {
			return err
		}
		if raw, err = json.Marshal(v); err != nil {
			return fmt.Errorf("the answer cannot be encoded: %w", err)
		}
		if n := len(raw); n > MaxAnswerBytes {
			s.log.Warn("answer refused: too large", "method", method, "bytes", n, "limit", MaxAnswerBytes)
			raw = nil
			return fmt.Errorf("%w: the answer to %s is %d bytes, over toolshelf's limit of %d (mcpclient.MaxAnswerBytes)",
				ErrRefused, method, n, MaxAnswerBytes)
		}
		return nil
	})
	return raw, err
}

// ErrRefused is the error of an answer that toolshelf refused because it
// is over a bound.
var ErrRefused = errors.New("refused")

// request runs one request of a server through its session, as a call
// does: it waits while the server connects, reconnects a disconnected
// one (once), and bounds the request with the server's timeout. A failure
// of the connection disconnects the server; the server's error answers
// come back as errors. Errors are redacted.
func (m *Manager) request(ctx context.Context, name, method string, do func(context.Context, *server, *conn) error) error {
	s := m.byName[name]
	if s == nil {
		return fmt.Errorf("no MCP server %q is configured", name)
	}
	reconnected := false
	c, res, err := m.session(ctx, s, &reconnected)
	switch {
	case err != nil:
		return err
	case res != nil:
		var text []string
		for _, p := range res.Content {
			text = append(text, p.Text)
		}
		return s.redact.Err(errors.New(strings.Join(text, "\n")))
	}
	rctx, cancel := context.WithTimeoutCause(ctx, s.cfg.Timeout, errCallTimeout)
	defer cancel()
	err = do(rctx, s, c)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case context.Cause(rctx) == errCallTimeout:
		m.lost(s, c, fmt.Errorf("%s got no answer within %s", method, s.cfg.Timeout))
		return fmt.Errorf("%s did not answer %s within %s (the configured timeout); the server was disconnected", s.describe(), method, s.cfg.Timeout)
	case errors.Is(err, ErrRefused), isRPCError(err):
		return s.redact.Err(fmt.Errorf("%s: %w", s.describe(), err))
	case errors.Is(err, mcp.ErrSessionMissing):
		m.lost(s, c, fmt.Errorf("the server ended the session: %w", err))
		return s.redact.Err(fmt.Errorf("%s ended the session during %s; the next request reconnects to it", s.describe(), method))
	default:
		m.lost(s, c, fmt.Errorf("%s failed: %w", method, err))
		return s.redact.Err(fmt.Errorf("%s stopped answering during %s (%w); the server was disconnected", s.describe(), method, err))
	}
}
