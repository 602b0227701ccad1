package mcpclient

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/internal/cut"
	"github.com/toolshelf/toolshelf/internal/userdir"
	"github.com/toolshelf/toolshelf/tool"
)

// MaxOutputBytes is the most text of one tool result handed to the model;
// a longer text is cut in the middle and saved whole to a file.
const MaxOutputBytes = 20 * 1024

// handler returns the handler of the server's tool named name (as the server
// lists it).
func (m *Manager) handler(s *server, name string) tool.Handler {
	return tool.HandlerFunc(func(ctx context.Context, args json.RawMessage) (*tool.Result, error) {
		return m.call(ctx, s, name, args)
	})
}

// call runs one tool call: it waits for a connecting server, reconnects a
// disconnected one (once), and calls through the session. Failures of the
// server become error results; every result is redacted ([redactor.Result]);
// only the caller's cancellation is returned as an error.
func (m *Manager) call(ctx context.Context, s *server, name string, args json.RawMessage) (res *tool.Result, err error) {
	defer func() { s.redact.Result(res) }()
	reconnected, retried := false, false
	for {
		c, res, err := m.session(ctx, s, &reconnected)
		if res != nil || err != nil {
			return res, err
		}
		res, retry, err := m.callOnce(ctx, s, c, name, args)
		if retry && !retried {
			retried, reconnected = true, false
			continue
		}
		return res, err
	}
}

// session returns the server's current session, waiting while the server
// connects and starting a reconnection (at most one per call) when it is
// disconnected. When there is no session to use it returns an error
// result, or ctx's error.
func (m *Manager) session(ctx context.Context, s *server, reconnected *bool) (*conn, *tool.Result, error) {
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, tool.ErrorResult(fmt.Sprintf("%s cannot be called: %v.", s.describe(), errClosed)), nil
		}
		switch s.state {
		case Connected:
			c := s.conn
			m.mu.Unlock()
			return c, nil, nil
		case Connecting:
			ready := s.ready
			m.mu.Unlock()
			select {
			case <-ready:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		case NeedsLogin:
			// Signed in meanwhile (toolshelf mcp login in another
			// terminal): connect again, once. The store is read
			// without the lock.
			err, started := s.err, m.started
			m.mu.Unlock()
			if *reconnected || !started || !m.hasToken(s) {
				return nil, tool.ErrorResult(fmt.Sprintf("%s cannot be called: %v.", s.describe(), err)), nil
			}
			m.mu.Lock()
			if s.state != NeedsLogin || m.closed {
				m.mu.Unlock()
				continue
			}
			*reconnected = true
			s.state, s.ready = Connecting, make(chan struct{})
			m.mu.Unlock()
			s.log.Info("connecting again with the stored sign-in")
			if !m.spawn(func() { m.connect(s) }) {
				continue
			}
			m.changed()
		case Disconnected:
			if *reconnected || !m.started {
				err := s.err
				m.mu.Unlock()
				return nil, tool.ErrorResult(fmt.Sprintf("%s is disconnected: %v.", s.describe(), err)), nil
			}
			*reconnected = true
			s.state, s.ready = Connecting, make(chan struct{})
			m.mu.Unlock()
			s.log.Info("reconnecting")
			if !m.spawn(func() { m.connect(s) }) {
				continue
			}
			m.changed()
		case Failed:
			err := s.err
			m.mu.Unlock()
			return nil, tool.ErrorResult(fmt.Sprintf("%s is not available: %v", s.describe(), err)), nil
		default: // Disabled
			m.mu.Unlock()
			return nil, tool.ErrorResult(fmt.Sprintf("%s is disabled; set \"enabled\": true in its configuration to use it.", s.describe())), nil
		}
	}
}

// errCallTimeout ends a call that ran past its timeout.
var errCallTimeout = errors.New("tool call timed out")

// errCallCapped ends a call that progress notifications kept alive for
// ProgressCap times its timeout.
var errCallCapped = errors.New("tool call ran past its cap")

// ProgressCap bounds a call that progress notifications keep alive: each
// notification restarts the server's timeout, but a call ends after
// ProgressCap times the timeout in all.
const ProgressCap = 10

// progressTokens numbers the calls' progress tokens.
var progressTokens atomic.Uint64

// callOnce calls the tool through c. retry reports that the server had
// forgotten the session (HTTP 404): the caller may reconnect and call
// again.
func (m *Manager) callOnce(ctx context.Context, s *server, c *conn, name string, args json.RawMessage) (res *tool.Result, retry bool, err error) {
	timeout := s.cfg.Timeout
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(timeout, func() { cancel(errCallTimeout) })
	defer timer.Stop()
	capTimer := time.AfterFunc(ProgressCap*timeout, func() { cancel(errCallCapped) })
	defer capTimer.Stop()
	token := fmt.Sprintf("toolshelf-%d", progressTokens.Add(1))
	c.progress.Store(token, func(p *mcp.ProgressNotificationParams) {
		timer.Reset(timeout)
		m.report(s, token, name, p)
	})
	defer c.progress.Delete(token)

	params := &mcp.CallToolParams{Name: name}
	if a := bytes.TrimSpace(args); len(a) > 0 && string(a) != "null" {
		params.Arguments = json.RawMessage(a)
	}
	params.SetProgressToken(token)
	out, err := c.session.CallTool(cctx, params)
	switch {
	case err == nil:
		return m.convert(s, name, out), false, nil
	case ctx.Err() != nil:
		return nil, false, ctx.Err()
	case context.Cause(cctx) == errCallTimeout:
		m.lost(s, c, fmt.Errorf("a call of %s got no answer within %s", name, timeout))
		return tool.ErrorResult(fmt.Sprintf("%s did not answer the call of %s within %s (the configured timeout). "+
			"The call was abandoned and the server disconnected; the next call reconnects to it.", s.describe(), name, timeout)), false, nil
	case context.Cause(cctx) == errCallCapped:
		// The server is alive (it sends progress): the call is cancelled,
		// the session kept.
		return tool.ErrorResult(fmt.Sprintf("%s was still working on the call of %s after %s, the most a call may take "+
			"(%d times the configured timeout of %s, however often the server reports progress). "+
			"The call was cancelled.", s.describe(), name, ProgressCap*timeout, ProgressCap, timeout)), false, nil
	case errors.Is(err, ErrNeedsLogin):
		// A step-up to more scopes that needs a person.
		err = needsLogin(err)
		m.lostTo(s, c, NeedsLogin, err)
		return tool.ErrorResult(fmt.Sprintf("%s cannot run %s: %v.", s.describe(), name, err)), false, nil
	case errors.Is(err, mcp.ErrSessionMissing):
		m.lost(s, c, fmt.Errorf("the server ended the session: %w", err))
		return tool.ErrorResult(fmt.Sprintf("%s ended the session during the call of %s; the next call reconnects to it.", s.describe(), name)), true, nil
	case isRPCError(err):
		return tool.ErrorResult(fmt.Sprintf("%s rejected the call of %s: %v", s.describe(), name, err)), false, nil
	default:
		m.lost(s, c, fmt.Errorf("the call of %s failed: %w", name, err))
		return tool.ErrorResult(fmt.Sprintf("%s stopped answering during the call of %s (%v). "+
			"The server was disconnected; the next call reconnects to it.", s.describe(), name, err)), false, nil
	}
}

// Progress is a progress notification of a tool call, as
// [Options.Progress] receives it.
type Progress struct {
	// Call tells the calls of one process apart: every notification of a
	// call has the same.
	Call string
	// Server is the server's name; Tool is the tool's model-facing name
	// (its name on the server when it has no other).
	Server, Tool string
	// Progress is how far the call is, and Total, when not zero, how far
	// it goes, in the server's units.
	Progress, Total float64
	// Message is the server's text, if any, with the values the
	// configuration took from the environment redacted; it comes from
	// outside, so a printer makes it safe.
	Message string
}

// report hands a call's progress notification to Options.Progress.
func (m *Manager) report(s *server, token, name string, p *mcp.ProgressNotificationParams) {
	if m.opts.Progress == nil {
		return
	}
	model := name
	m.mu.Lock()
	if r, ok := s.registered[name]; ok {
		model = r.name
	}
	m.mu.Unlock()
	m.opts.Progress(Progress{Call: token, Server: s.cfg.Name, Tool: model,
		Progress: p.Progress, Total: p.Total, Message: s.redact.String(p.Message)})
}

// convert turns a call's result into the registry's form and truncates a
// long text.
func (m *Manager) convert(s *server, name string, r *mcp.CallToolResult) *tool.Result {
	out := &tool.Result{IsError: r.IsError}
	hasText := false
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			out.Content = append(out.Content, tool.Content{Text: c.Text})
			hasText = true
		case *mcp.ImageContent:
			out.Content = append(out.Content, tool.Content{MIMEType: c.MIMEType, Data: c.Data})
		case *mcp.AudioContent:
			out.Content = append(out.Content, tool.Content{Text: fmt.Sprintf("[audio: %s, %d bytes, not shown]", orUnknown(c.MIMEType), len(c.Data))})
		case *mcp.ResourceLink:
			out.Content = append(out.Content, tool.Content{Text: describeLink(c)})
		case *mcp.EmbeddedResource:
			out.Content = append(out.Content, tool.Content{Text: describeResource(c.Resource)})
		default:
			raw, _ := json.Marshal(c)
			out.Content = append(out.Content, tool.Content{Text: fmt.Sprintf("[unsupported content: %.200s]", raw)})
		}
	}
	if r.StructuredContent != nil {
		if raw, err := json.Marshal(r.StructuredContent); err == nil {
			out.Structured = raw
			if !hasText {
				out.Content = append(out.Content, tool.Content{Text: string(raw)})
			}
		}
	}
	// Redacted before the cut, so that the saved full output holds no
	// value either.
	s.redact.Result(out)
	m.truncate(s, name, out)
	return out
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// describeLink is the text line of a resource link.
func describeLink(l *mcp.ResourceLink) string {
	var b strings.Builder
	b.WriteString("[resource link: ")
	if l.Name != "" {
		b.WriteString(l.Name + " ")
	}
	b.WriteString("<" + l.URI + ">")
	if l.MIMEType != "" {
		b.WriteString(" (" + l.MIMEType + ")")
	}
	if l.Description != "" {
		b.WriteString(" " + strings.Join(strings.Fields(l.Description), " "))
	}
	b.WriteString("]")
	return b.String()
}

// describeResource is the text of an embedded resource: a line naming it,
// followed by its text if it is a text resource.
func describeResource(r *mcp.ResourceContents) string {
	if r == nil {
		return "[resource: empty]"
	}
	head := fmt.Sprintf("[resource <%s>", r.URI)
	if r.MIMEType != "" {
		head += " (" + r.MIMEType + ")"
	}
	if r.Blob != nil {
		return head + fmt.Sprintf(", %d bytes of binary data, not shown]", len(r.Blob))
	}
	return head + "]\n" + r.Text
}

// truncate cuts the text of a result that exceeds MaxOutputBytes in the
// middle: the text parts become one part that starts with a warning naming
// the file where the full text was saved.
func (m *Manager) truncate(s *server, name string, r *tool.Result) {
	total, first := 0, -1
	var texts []string
	for i, c := range r.Content {
		if c.MIMEType == "" {
			total += len(c.Text)
			texts = append(texts, c.Text)
			if first < 0 {
				first = i
			}
		}
	}
	if total <= MaxOutputBytes {
		return
	}
	full := strings.Join(texts, "\n")
	path, err := m.saveOutput(s.cfg.Name, name, full)
	if err != nil {
		s.log.Warn("saving a truncated output failed", "error", err)
	}
	kept := r.Content[:0]
	for i, c := range r.Content {
		switch {
		case i == first:
			kept = append(kept, tool.Content{Text: truncateMiddle(full, path, err)})
		case c.MIMEType != "":
			kept = append(kept, c)
		}
	}
	r.Content = kept
}

// omitted marks where the middle of a truncated output was.
const omitted = "\n\n[…]\n\n"

// truncateMiddle returns the head and tail of text, whole runes, under a
// warning line, in at most MaxOutputBytes bytes.
func truncateMiddle(text, path string, saveErr error) string {
	header := func(kept int) string {
		if saveErr != nil {
			return fmt.Sprintf("Warning: output truncated from %d to %d bytes; the full output could not be saved: %v", len(text), kept, saveErr)
		}
		return fmt.Sprintf("Warning: output truncated from %d to %d bytes; the full output is in %s", len(text), kept, path)
	}
	budget := max(MaxOutputBytes-len(header(MaxOutputBytes))-1-len(omitted), 1024)
	head := text[:cut.Before(text, budget/2)]
	tail := text[cut.After(text, len(text)-(budget-budget/2)):]
	return header(len(head)+len(tail)) + "\n" + head + omitted + tail
}

// OutputMaxAge is how long saved full outputs are kept: the first save of
// a Manager removes those older.
const OutputMaxAge = 7 * 24 * time.Hour

// saveOutput writes a full output to a new file, readable by the user only,
// in the output folder: Options.OutputDir, else the state folder's
// outputs. The folder must be the user's alone (userdir.OpenPrivate); the
// file is made through the folder as checked, with a name no one can
// guess, and never replaces a file.
func (m *Manager) saveOutput(server, name, text string) (string, error) {
	dir := m.opts.OutputDir
	if dir == "" {
		state, err := userdir.State()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(state, "outputs")
	}
	root, err := userdir.OpenPrivate(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	m.cleanOnce.Do(func() { m.cleanOutputs(root, dir, time.Now()) })
	for range 10 {
		file := fileSafe(server) + "-" + fileSafe(name) + "-" + rand.Text()[:16] + ".txt"
		f, err := root.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.WriteString(text); err != nil {
			f.Close()
			return "", err
		}
		if err := f.Close(); err != nil {
			return "", err
		}
		return filepath.Join(dir, file), nil
	}
	return "", fmt.Errorf("no free file name in %s", dir)
}

// cleanOutputs removes the saved outputs (regular *.txt files) of the
// folder that are older than OutputMaxAge; a failure is logged.
func (m *Manager) cleanOutputs(root *os.Root, dir string, now time.Time) {
	d, err := root.Open(".")
	if err != nil {
		m.log.Warn("cleaning up saved outputs", "folder", dir, "error", err)
		return
	}
	entries, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		m.log.Warn("cleaning up saved outputs", "folder", dir, "error", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) <= OutputMaxAge {
			continue
		}
		if err := root.Remove(e.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			m.log.Warn("removing an old saved output", "folder", dir, "error", err)
		}
	}
}

// fileSafe keeps the characters of s that are safe in a file name, at most
// 40 of them.
func fileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 40 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "output"
	}
	return b.String()
}
