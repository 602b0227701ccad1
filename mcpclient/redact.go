package mcpclient

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/toolshelf/toolshelf/tool"
)

// MinRedacted is the length, in bytes, of the shortest value from the
// environment that is redacted. Shorter values are left alone: a value of
// one to three bytes ("1", "on", "dev", "443") turns up inside unrelated
// words, numbers and paths, so replacing it would make every message about
// the server unreadable, and a secret that short protects nothing anyway
// (it can be guessed in a few thousand tries).
const MinRedacted = 4

// notSecret are the environment variables whose values are never
// redacted: they name the user and the user's folders, which a servers file
// writes as ${HOME}/… and tools echo back in every path they return.
// Redacting them would hand the model paths such as ${HOME}/notes.txt that
// no server can open, and they protect nothing.
var notSecret = []string{
	"HOME", "USER", "LOGNAME", "PWD", "TMPDIR",
	"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR",
}

// redactor replaces the values a server's configuration took from the
// environment by ${NAME} references, and the OAuth secrets the server's
// sign-in handled (added as they arrive, [redactor.addSecret]) by
// [secretLabel]. A nil redactor changes nothing. It is safe for concurrent
// use.
type redactor struct {
	mu       sync.RWMutex
	expanded map[string]string
	secrets  []string
	r        *strings.Replacer
}

// newRedactor returns the redactor of the expanded values (variable name →
// value), nil when there is nothing to redact. Besides each value as it is,
// it replaces the forms in which messages quote it: URL-escaped (a URL in
// an error), Go-quoted (%q) and JSON-escaped.
func newRedactor(expanded map[string]string) *redactor {
	r := &redactor{expanded: expanded}
	if r.build(); r.r == nil {
		return nil
	}
	return r
}

// addSecret adds values to redact (empty ones and those shorter than
// MinRedacted are skipped); r must not be nil.
func (r *redactor) addSecret(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	added := false
	for _, v := range values {
		if len(v) >= MinRedacted && !slices.Contains(r.secrets, v) {
			r.secrets = append(r.secrets, v)
			added = true
		}
	}
	if added {
		r.build()
	}
}

// build makes the replacer of the values.
func (r *redactor) build() {
	type pair struct{ old, ref string }
	var pairs []pair
	seen := map[string]bool{}
	add := func(v, ref string) {
		if len(v) < MinRedacted {
			return
		}
		js, _ := json.Marshal(v)
		for _, form := range []string{v, url.QueryEscape(v), url.PathEscape(v), unquote(strconv.Quote(v)), unquote(string(js))} {
			if !seen[form] {
				seen[form] = true
				pairs = append(pairs, pair{form, ref})
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.expanded)) {
		if !slices.Contains(notSecret, name) {
			add(r.expanded[name], "${"+name+"}")
		}
	}
	for _, v := range r.secrets {
		add(v, secretLabel)
	}
	if len(pairs) == 0 {
		r.r = nil
		return
	}
	// A Replacer tries its pairs in order: the longest first, so a value
	// that contains another is replaced whole.
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(len(b.old), len(a.old)) })
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.old, p.ref)
	}
	r.r = strings.NewReplacer(args...)
}

// unquote drops the quotes around a quoted string.
func unquote(q string) string { return q[1 : len(q)-1] }

// String returns s with the values redacted.
func (r *redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	rep := r.r
	r.mu.RUnlock()
	if rep == nil {
		return s
	}
	return rep.Replace(s)
}

// Err returns err with the values redacted from its message, or err itself
// when its message holds none. The redacted error unwraps to err, so
// errors.Is and errors.As see through it; only its message changes.
func (r *redactor) Err(err error) error {
	if r == nil || err == nil {
		return err
	}
	msg := err.Error()
	if red := r.String(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

// Result redacts a result in place: the text of every part and the
// strings of its structured content, successful or not. A result is where
// a server's data enters the conversation, so a value redacted here is in
// no view of it: not the model's request (nor its answers, which can only
// repeat what it saw), the session file, a saved full output, the
// gateway's answers, or what the CLI prints from any of them.
func (r *redactor) Result(res *tool.Result) {
	if r == nil || res == nil {
		return
	}
	for i := range res.Content {
		res.Content[i].Text = r.String(res.Content[i].Text)
	}
	if len(res.Structured) > 0 {
		res.Structured = r.json(res.Structured)
	}
}

// json returns the JSON text raw with the values redacted in its strings
// (keys too), and its numbers, booleans and structure kept: replacing the
// text itself could turn a number into invalid JSON. Raw that does not
// parse is redacted as text.
func (r *redactor) json(raw json.RawMessage) json.RawMessage {
	text := string(raw)
	if r.String(text) == text {
		return raw
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return json.RawMessage(r.String(text))
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r.value(v)); err != nil {
		return json.RawMessage(r.String(text))
	}
	return json.RawMessage(strings.TrimSuffix(b.String(), "\n"))
}

// value returns v, a decoded JSON value, with its strings redacted.
func (r *redactor) value(v any) any {
	switch x := v.(type) {
	case string:
		return r.String(x)
	case []any:
		for i := range x {
			x[i] = r.value(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[r.String(k)] = r.value(e)
		}
		return out
	}
	return v
}

// redactedError is an error whose message was redacted.
type redactedError struct {
	msg string
	err error
}

// Error returns the redacted message.
func (e *redactedError) Error() string { return e.msg }

// Unwrap returns the original error.
func (e *redactedError) Unwrap() error { return e.err }

// redactHandler is a slog.Handler that redacts the message and every
// attribute (strings, errors, anything formatted) before passing a record
// on.
type redactHandler struct {
	next slog.Handler
	r    *redactor
}

// Enabled reports whether the next handler handles the level.
func (h *redactHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// Handle passes on the record, redacted.
func (h *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs returns a handler with the attributes, redacted.
func (h *redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &redactHandler{next: h.next.WithAttrs(red), r: h.r}
}

// WithGroup returns a handler that opens a group.
func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{next: h.next.WithGroup(name), r: h.r}
}

// attr returns a redacted attribute.
func (h *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]slog.Attr, len(g))
		for i, ga := range g {
			red[i] = h.attr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			s = fmt.Sprintf("%+v", x)
		}
		if red := h.r.String(s); red != s {
			return slog.String(a.Key, red)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// Redact returns s with the values that any server's configuration took
// from the environment replaced by ${NAME}, for printing text that may
// quote them (a tool's arguments or result).
func (m *Manager) Redact(s string) string {
	for _, srv := range m.servers {
		s = srv.redact.String(s)
	}
	return s
}
