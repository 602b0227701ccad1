package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// The log formats of --log-format.
const (
	// logAuto is human on a terminal, text elsewhere.
	logAuto = "auto"
	// logHuman is one short line per record for a person: level, server,
	// message and values, aligned, without key=value pairs or times.
	logHuman = "human"
	// logText is slog's key=value lines (with times), for programs.
	logText = "text"
	// logJSON is slog's JSON, one object per line.
	logJSON = "json"
)

var logFormats = []string{logAuto, logHuman, logText, logJSON}

// logFlags are the root's persistent logging flags: -v means --verbose
// on every command.
type logFlags struct {
	verbose bool
	format  string
}

func (l *logFlags) register(root *cobra.Command) {
	fl := root.PersistentFlags()
	fl.BoolVarP(&l.verbose, "verbose", "v", false, "log MCP connections and servers' standard error to stderr, not only problems (run, chat, serve, mcp)")
	fl.StringVar(&l.format, "log-format", logAuto, "how log lines look: human (short lines for a person), text (slog key=value), json (slog JSON), or auto: human on a terminal, text otherwise")
}

// check refuses an unknown --log-format.
func (l *logFlags) check() error {
	if !slices.Contains(logFormats, l.format) {
		return usagef("--log-format: unknown %q; use %s", l.format, orList(logFormats))
	}
	return nil
}

// logger returns the logger of a command that logs to stderr: info with
// -v; otherwise warnings, or nothing when warnings is false (commands that
// report problems themselves).
func (e *env) logger(warnings bool) *slog.Logger {
	level := slog.LevelInfo
	switch {
	case e.logs.verbose:
	case warnings:
		level = slog.LevelWarn
	default:
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(newLogHandler(e.stderr, e.logs.format, e.stderrTerminal, level))
}

// newLogHandler returns the handler of a log format; auto is human when
// w is a terminal, text otherwise.
func newLogHandler(w io.Writer, format string, terminal bool, level slog.Leveler) slog.Handler {
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case logJSON:
		return slog.NewJSONHandler(w, opts)
	case logText:
		return slog.NewTextHandler(w, opts)
	case logHuman:
	default:
		if !terminal {
			return slog.NewTextHandler(w, opts)
		}
	}
	return &humanHandler{w: w, level: level, shared: &humanShared{}}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// humanHandler writes a record as one line: the level, the server it is
// about (padded so that the messages line up), the message, then the
// error, problem or standard-error line after a colon and any other values
// in parentheses ("connected (tools 14)"). Every piece is made safe to
// print and kept on one line.
type humanHandler struct {
	w      io.Writer
	level  slog.Leveler
	attrs  []slog.Attr // from WithAttrs, groups already applied to keys
	group  string      // the WithGroup prefix for later attributes
	shared *humanShared
}

// humanShared is what the handlers derived from one handler share: the
// writer's lock and the subject column's width.
type humanShared struct {
	mu    sync.Mutex
	width int
}

// subjectKey names the attribute shown in the subject column; detailKeys
// the ones shown after the message and a colon, in this order.
var (
	subjectKey = "server"
	detailKeys = []string{"error", "err", "problem", "line"}
)

// Enabled reports whether records of the level are written.
func (h *humanHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *humanHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h2 := *h
	h2.attrs = slices.Clip(h.attrs)
	for _, a := range attrs {
		h2.attrs = append(h2.attrs, prefixed(h.group, a))
	}
	return &h2
}

// WithGroup returns a handler whose later attributes' keys start with
// name and a dot.
func (h *humanHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.group = h.group + name + "."
	return &h2
}

func prefixed(group string, a slog.Attr) slog.Attr {
	if group != "" {
		a.Key = group + a.Key
	}
	return a
}

// Handle writes the record's line.
func (h *humanHandler) Handle(_ context.Context, r slog.Record) error {
	attrs := slices.Clone(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, prefixed(h.group, a))
		return true
	})
	var subject string
	details := make([]string, len(detailKeys))
	var rest []string
	var walk func(prefix string, a slog.Attr)
	walk = func(prefix string, a slog.Attr) {
		a.Value = a.Value.Resolve()
		if a.Equal(slog.Attr{}) {
			return
		}
		key := prefix + a.Key
		if a.Value.Kind() == slog.KindGroup {
			for _, g := range a.Value.Group() {
				walk(key+".", g)
			}
			return
		}
		v := oneLine(a.Value.String(), 0)
		if key == subjectKey && subject == "" {
			subject = v
			return
		}
		if i := slices.Index(detailKeys, key); i >= 0 && details[i] == "" {
			details[i] = v
			return
		}
		rest = append(rest, oneLine(key, 0)+" "+v)
	}
	for _, a := range attrs {
		walk("", a)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%-5s ", r.Level.String())
	h.shared.mu.Lock()
	defer h.shared.mu.Unlock()
	if subject != "" || h.shared.width > 0 {
		h.shared.width = max(h.shared.width, len([]rune(subject)))
		fmt.Fprintf(&b, "%-*s  ", h.shared.width, subject)
	}
	b.WriteString(oneLine(r.Message, 0))
	for _, d := range details {
		if d != "" {
			b.WriteString(": " + d)
		}
	}
	if len(rest) > 0 {
		b.WriteString(" (" + strings.Join(rest, ", ") + ")")
	}
	b.WriteByte('\n')
	_, err := io.WriteString(h.w, b.String())
	return err
}
